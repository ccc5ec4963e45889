"""axis=None follows gamma's shape, as torch.nn.LayerNorm(normalized_shape) does.

A gamma (or, without gamma, a beta) whose shape is the last k axes of x means normalizing over
those k axes; any other shape means the last axis, and a mismatch is then named.
"""

from __future__ import annotations

import numpy as np
import pytest

from ln_core import (
    forward,
    gradient_check,
    jacobian,
    layernorm_closed_form,
    layernorm_forward_backward,
    numerical_gradients,
    rms_forward,
    rms_jacobian,
)
from ln_core.validation import resolve_axis

RNG = np.random.default_rng(5)
X = RNG.normal(size=(2, 3, 4))
BLOCK = RNG.uniform(0.5, 2.0, size=(3, 4))
SHIFT = RNG.normal(size=(3, 4))
DOUT = RNG.normal(size=(2, 3, 4))


@pytest.mark.parametrize(
    ("gamma", "beta", "expected"),
    [
        (np.ones(4), None, (-1,)),
        (np.ones((3, 4)), None, (-2, -1)),
        (np.ones((2, 3, 4)), None, (-3, -2, -1)),
        (None, np.zeros((3, 4)), (-2, -1)),  # beta alone tells too
        (None, None, (-1,)),
        (np.ones((5, 4)), None, (-1,)),  # not x's trailing shape: check_params names it
        ([[1.0, 2.0], [3.0]], None, (-1,)),  # ragged: check_params names it
    ],
)
def test_axis_none_follows_the_parameters_shape(gamma, beta, expected):
    assert resolve_axis(None, X, gamma, beta) == expected


def test_a_given_axis_wins_over_the_parameters_shape():
    assert resolve_axis(-1, X, np.ones((3, 4))) == (-1,)


def test_the_staged_pass_normalizes_the_block_gamma_covers():
    implied = forward(X, BLOCK, SHIFT)
    explicit = forward(X, BLOCK, SHIFT, axis=(-2, -1))
    assert implied.axis == (-2, -1)
    np.testing.assert_array_equal(implied.out, explicit.out)
    assert rms_forward(X, BLOCK).axis == (-2, -1)


def test_every_library_path_follows_the_block():
    explicit = layernorm_closed_form(X, BLOCK, SHIFT, DOUT, axis=(-2, -1))
    for path in (layernorm_closed_form, layernorm_forward_backward):
        result = path(X, BLOCK, SHIFT, DOUT)
        np.testing.assert_allclose(result.out, explicit.out, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(result.dx, explicit.dx, rtol=1e-12, atol=1e-12)
        assert result.dgamma.shape == (3, 4)
    np.testing.assert_array_equal(jacobian(X[0], BLOCK), jacobian(X[0], BLOCK, axis=(-2, -1)))
    assert rms_jacobian(X[0], BLOCK).shape == (12, 12)


def test_numerical_gradients_and_the_check_follow_the_block():
    numerical = numerical_gradients(X, BLOCK, SHIFT, DOUT)
    explicit = numerical_gradients(X, BLOCK, SHIFT, DOUT, axis=(-2, -1))
    np.testing.assert_array_equal(numerical.dx, explicit.dx)
    assert gradient_check(X, BLOCK, SHIFT, DOUT).passed


def test_a_gamma_of_another_shape_is_named():
    with pytest.raises(ValueError, match=r"gamma has shape \(5, 4\) but must have shape \(4,\)"):
        forward(X, np.ones((5, 4)))
