"""Σ dx per vector (ln_core.dx_sum): 0 up to rounding, on the normalized axes only."""

from __future__ import annotations

import numpy as np
import pytest

from ln_core import backward, dx_sum, forward


@pytest.mark.parametrize("axis", [-1, (-2, -1)])
def test_dx_adds_up_to_zero_over_each_normalized_group(axis):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5)) * 4 + 7
    shape = x.shape[-1:] if axis == -1 else x.shape[-2:]
    cache = forward(x, rng.standard_normal(shape), rng.standard_normal(shape), 1e-5, axis)
    grads = backward(rng.standard_normal(x.shape), cache)
    result = dx_sum(grads, cache)
    assert result.sums.shape == cache.sample_mean.shape
    np.testing.assert_allclose(result.sums, np.sum(grads.dx, axis=axis, keepdims=True))
    assert result.relative < 1e-13
    # The sum is over one vector's entries, not over the whole array.
    assert np.max(np.abs(np.sum(grads.dx, axis=0))) > 1e-3


def test_a_zero_gradient_has_a_zero_relative_sum():
    cache = forward(np.arange(4.0), np.ones(4), np.zeros(4), 1e-5)
    result = dx_sum(backward(np.zeros(4), cache), cache)
    assert result.relative == 0.0
