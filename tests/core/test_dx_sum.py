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


def test_the_nodes_before_the_root_stay_defined_for_a_constant_vector_without_eps():
    from ln_core.defined_nodes import BEFORE_THE_ROOT, nodes_before_the_root

    x = np.full((2, 4), 3.0)
    with pytest.raises(ValueError, match="zero variance"):
        forward(x, np.ones(4), np.zeros(4), 0.0)
    nodes = nodes_before_the_root(x, np.ones(4), np.zeros(4), 0.0)
    assert tuple(nodes) == BEFORE_THE_ROOT
    np.testing.assert_array_equal(nodes["sample_mean"], np.full((2, 1), 3.0))
    np.testing.assert_array_equal(nodes["sve"], np.zeros((2, 1)))
    # Where the output is defined, they are forward()'s own nodes.
    y = np.arange(8.0).reshape(2, 4)
    cache = forward(y, np.ones(4), np.zeros(4), 1e-5)
    for name, value in nodes_before_the_root(y, np.ones(4), np.zeros(4), 1e-5).items():
        np.testing.assert_array_equal(value, getattr(cache, name))
