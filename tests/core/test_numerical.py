"""Unit tests for central-difference gradients (ln_core.numerical)."""

from __future__ import annotations

import numpy as np
import pytest
from kit import (
    NUMERIC_RTOL,
    assert_close,
    complex_step_dx,
    direct_param_grads,
    dx_scale,
    make_case,
    param_scale,
)

from ln_core import (
    Grads,
    backward,
    central_difference,
    default_h,
    forward,
    gradient_check,
    numerical_gradients,
)


def loop_reference(case, h):
    """The generic one-element-at-a-time loop, for x, gamma and beta separately."""

    def loss(x, gamma, beta):
        return float(np.sum(case.dout * forward(x, gamma, beta, case.eps, case.axis).out))

    x, gamma, beta = case.args
    return (
        central_difference(lambda v: loss(v, gamma, beta), x, h),
        central_difference(lambda v: loss(x, v, beta), gamma, h),
        central_difference(lambda v: loss(x, gamma, v), beta, h),
    )


@pytest.mark.parametrize(
    ("shape", "axis"), [((5,), -1), ((3, 4), -1), ((2, 3, 4), -1), ((4, 3), 0), ((3, 2, 4), 1)]
)
def test_numerical_gradients_match_the_generic_loop(shape, axis):
    case = make_case(50, shape, eps=1e-3, axis=axis)
    h = 1e-5
    num = numerical_gradients(*case.args, case.dout, case.eps, h, axis)
    assert isinstance(num, Grads)
    ref_dx, ref_dgamma, ref_dbeta = loop_reference(case, h)
    cache = forward(*case.args, eps=case.eps, axis=axis)
    assert_close(num.dx, ref_dx, 1e-8, dx_scale(cache, case.dout), "dx")
    assert_close(num.dgamma, ref_dgamma, 1e-8, param_scale(cache, case.dout), "dgamma")
    assert_close(num.dbeta, ref_dbeta, 1e-8, param_scale(cache, case.dout), "dbeta")


@pytest.mark.parametrize(
    ("shape", "axis"), [((6,), -1), ((3, 5), -1), ((2, 2, 4), -1), ((5, 3), 0), ((2, 4, 3), -2)]
)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.2])
def test_numerical_matches_complex_step(shape, axis, eps):
    case = make_case(51, shape, eps=eps, axis=axis, scale=3.0, offset=-1.0)
    cache = forward(*case.args, eps=eps, axis=axis)
    num = numerical_gradients(*case.args, case.dout, eps, default_h(cache), axis)
    ref_dx = complex_step_dx(case.x, case.gamma, case.beta, case.dout, eps, axis)
    ref_dgamma, ref_dbeta = direct_param_grads(case.x, case.dout, eps, axis)
    rtol = NUMERIC_RTOL[np.dtype(np.float64)]
    assert_close(num.dx, ref_dx, rtol, dx_scale(cache, case.dout), "dx")
    assert_close(num.dgamma, ref_dgamma, rtol, param_scale(cache, case.dout), "dgamma")
    assert_close(num.dbeta, ref_dbeta, rtol, param_scale(cache, case.dout), "dbeta")


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 2, 5)])
def test_float32_numerical_stays_float32_and_is_close(shape):
    case = make_case(52, shape, np.float32, eps=1e-5)
    cache = forward(*case.args, eps=1e-5)
    num = numerical_gradients(*case.args, case.dout, 1e-5, default_h(cache))
    for g in (num.dx, num.dgamma, num.dbeta):
        assert g.dtype == np.float32
    ana = backward(case.dout, cache)
    rtol = NUMERIC_RTOL[np.dtype(np.float32)]
    assert_close(num.dx, ana.dx, rtol, dx_scale(cache, case.dout), "dx")
    assert_close(num.dgamma, ana.dgamma, rtol, param_scale(cache, case.dout), "dgamma")
    assert_close(num.dbeta, ana.dbeta, rtol, param_scale(cache, case.dout), "dbeta")


def test_every_element_is_differentiated():
    """A dout that is zero except at one entry: only that vector's dx is nonzero."""
    case = make_case(53, (4, 5), eps=1e-3)
    dout = np.zeros((4, 5))
    dout[2, 1] = 1.0
    num = numerical_gradients(*case.args, dout, 1e-3)
    assert np.all(num.dx[[0, 1, 3]] == 0.0)
    assert np.all(num.dx[2] != 0.0)
    np.testing.assert_allclose(num.dbeta, [0, 1, 0, 0, 0], atol=1e-9)
    xhat = forward(*case.args, eps=1e-3).normalized_x
    np.testing.assert_allclose(num.dgamma, [0, xhat[2, 1], 0, 0, 0], atol=1e-9)


def test_large_batch_is_chunked(monkeypatch):
    """Chunking the perturbed stacks does not change the result."""
    import ln_core.numerical as numerical

    case = make_case(54, (7, 4), eps=1e-3)
    full = numerical_gradients(*case.args, case.dout, 1e-3)
    monkeypatch.setattr(numerical, "_STACK_ELEMENTS", 40)  # 2 rows of 4 x 4 copies per chunk
    chunked = numerical_gradients(*case.args, case.dout, 1e-3)
    np.testing.assert_array_equal(full.dx, chunked.dx)


@pytest.mark.parametrize("cap", [8, 5])
def test_a_group_larger_than_the_cap_is_split(monkeypatch, cap):
    """A group whose copies pass the cap is moved a few entries at a time, to the same result."""
    import ln_core.numerical as numerical

    case = make_case(56, (3, 4), eps=1e-3)
    full = numerical_gradients(*case.args, case.dout, 1e-3)
    sizes = _stack_sizes(monkeypatch)
    monkeypatch.setattr(numerical, "_STACK_ELEMENTS", cap)  # 2 copies, then 1, of 4 entries
    split = numerical_gradients(*case.args, case.dout, 1e-3)
    np.testing.assert_array_equal(full.dx, split.dx)
    # The passes on x itself (its cache, gamma and beta shifted) are not stacks of copies.
    stacks = [size for size in sizes if size != case.x.size]
    assert stacks and max(stacks) <= cap


def _stack_sizes(monkeypatch) -> list[int]:
    """The sizes of the x's that ln_core.numerical's forward passes get, as they run."""
    import ln_core.numerical as numerical

    sizes = []

    def counted(x, *args, **kwargs):
        sizes.append(np.size(x))
        return forward(x, *args, **kwargs)

    monkeypatch.setattr(numerical, "forward", counted)
    return sizes


@pytest.mark.parametrize("shape", [(4, 1024), (8, 512), (32, 64)])
def test_every_perturbed_stack_fits_in_a_mebibyte(monkeypatch, shape):
    """At the app's largest inputs each forward pass of the check has at most 2^17 entries
    (1 MiB in float64, per node): a server runs several students' checks at once, and stacks
    of 2^21 entries made each check cost 110-130 MB."""
    sizes = _stack_sizes(monkeypatch)
    case = make_case(57, shape)
    gradient_check(*case.args, case.dout)
    assert len(sizes) > 2 and max(sizes) <= 2**17


@pytest.mark.parametrize(
    ("dtype", "scale", "eps"),
    [
        (np.float64, 1e-100, 0.0),
        (np.float64, 1e-20, 0.0),
        (np.float64, 1e100, 0.0),
        (np.float32, 1e-15, 0.0),
        (np.float32, 1e15, 1e-5),
    ],
)
def test_extreme_magnitudes(dtype, scale, eps):
    """The parameters' step must not be tied to x's scale (gamma + 1e-105 == gamma)."""
    base = np.array([[1.0, -2.0, 0.5, 3.0], [2.0, 2.5, -1.0, 0.0]])
    case = make_case(55, (2, 4), dtype)
    x = (scale * base).astype(dtype)
    cache = forward(x, case.gamma, case.beta, eps)
    num = numerical_gradients(x, case.gamma, case.beta, case.dout, eps, default_h(cache))
    ana = backward(case.dout, cache)
    rtol = NUMERIC_RTOL[np.dtype(dtype)]
    assert_close(num.dx, ana.dx, rtol, dx_scale(cache, case.dout), "dx")
    assert_close(num.dgamma, ana.dgamma, rtol, param_scale(cache, case.dout), "dgamma")
    assert_close(num.dbeta, ana.dbeta, rtol, param_scale(cache, case.dout), "dbeta")


def test_central_difference_on_a_cubic():
    grad = central_difference(lambda v: float(np.sum(v**3)), np.array([1.0, -2.0, 0.5]), 1e-5)
    np.testing.assert_allclose(grad, 3 * np.array([1.0, -2.0, 0.5]) ** 2, rtol=1e-9)


def test_central_difference_leaves_the_input_alone():
    value = np.array([1.0, 2.0])
    central_difference(lambda v: float(v @ v), value, 1e-4)
    np.testing.assert_array_equal(value, [1.0, 2.0])


@pytest.mark.parametrize("eps", [1e-5, 0.1])
def test_two_features_numerical_is_bounded_absolutely(eps):
    """D = 2: the true dx is c * (g_1 - g_2) * [1, -1], c = eps / (2 (d^2 + eps)^1.5), which is
    tiny when d^2 >> eps, so the numerical gradient is bounded absolutely, on dx's natural scale."""
    x = np.array([[1.0, -0.5], [2.0, 2.5]])
    gamma = np.array([1.5, -0.7])
    dout = np.array([[0.3, -1.2], [1.0, 0.4]])
    d = (x[:, :1] - x[:, 1:]) / 2
    c = eps / (2 * (d**2 + eps) ** 1.5)
    g = dout * gamma
    expected = c * (g[:, :1] - g[:, 1:]) * np.array([1.0, -1.0])
    cache = forward(x, gamma, np.zeros(2), eps)
    num = numerical_gradients(x, gamma, np.zeros(2), dout, eps, default_h(cache))
    np.testing.assert_allclose(num.dx, expected, rtol=0, atol=1e-6 * dx_scale(cache, dout))


def test_single_feature_numerical_is_zero():
    x = np.array([[3.0], [-7.0]])
    num = numerical_gradients(x, [2.0], [0.5], np.array([[1.0], [-2.0]]), 1e-3)
    np.testing.assert_array_equal(num.dx, 0.0)
    np.testing.assert_array_equal(num.dgamma, 0.0)
    np.testing.assert_allclose(num.dbeta, [-1.0])


@pytest.mark.parametrize("shape", [(16, 2048), (2, 4096), (1, 8192)])
def test_sizes_that_cannot_finish_in_seconds_are_refused_with_the_size_named(shape):
    x = np.zeros(shape)
    x[..., 0] = 1.0
    evaluations = x.size * shape[-1]
    with pytest.raises(ValueError, match=rf"{evaluations:,} evaluations for x of shape") as info:
        numerical_gradients(x, None, None, np.ones(shape))
    assert str(shape) in str(info.value)
    with pytest.raises(ValueError, match=r"more than the 16,777,216 that finish"):
        gradient_check(x, None, None, np.ones(shape))
