"""Unit tests for the staged backward pass and the closed form (ln_core.backward, closed_form)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from kit import (
    ANALYTIC_RTOL,
    DTYPES,
    assert_close,
    complex_step_dx,
    direct_param_grads,
    dx_scale,
    make_case,
    param_scale,
)

from ln_core import (
    NODE_NAMES,
    Grads,
    StagedGrads,
    backward,
    closed_form_backward,
    dx_path_terms,
    forward,
)

SHAPES = [(5,), (4, 6), (2, 3, 5)]
REDUCED = ("sample_mean", "sample_var", "sve", "sqrt_sve", "inv_sqrt_sve")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.3])
@pytest.mark.parametrize("axis", [-1, 0])
def test_staged_matches_complex_step_reference(shape, eps, axis):
    case = make_case(20, shape, eps=eps, axis=axis, scale=2.0, offset=1.0)
    if case.x.shape[axis] < 3:
        case = make_case(20, (4, *shape[1:]) if axis == 0 else shape, eps=eps, axis=axis)
    cache = forward(*case.args, eps=eps, axis=axis)
    grads = backward(case.dout, cache)
    ref_dx = complex_step_dx(case.x, case.gamma, case.beta, case.dout, eps, axis)
    assert_close(grads.dx, ref_dx, 1e-10, dx_scale(cache, case.dout), "dx")
    ref_dgamma, ref_dbeta = direct_param_grads(case.x, case.dout, eps, axis)
    assert_close(grads.dgamma, ref_dgamma, 1e-10, param_scale(cache, case.dout), "dgamma")
    assert_close(grads.dbeta, ref_dbeta, 1e-12, param_scale(cache, case.dout), "dbeta")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [-1, 0])
def test_closed_form_equals_staged(shape, dtype, axis):
    case = make_case(21, shape, dtype, eps=1e-3, axis=axis)
    cache = forward(*case.args, eps=1e-3, axis=axis)
    staged = backward(case.dout, cache)
    closed = closed_form_backward(case.dout, cache)
    assert isinstance(closed, Grads)
    rtol = ANALYTIC_RTOL[np.dtype(dtype)]
    assert_close(closed.dx, staged.dx, rtol, dx_scale(cache, case.dout), "dx")
    assert_close(closed.dgamma, staged.dgamma, rtol, param_scale(cache, case.dout), "dgamma")
    assert_close(closed.dbeta, staged.dbeta, rtol, param_scale(cache, case.dout), "dbeta")
    for g in (staged.dx, staged.dgamma, staged.dbeta, closed.dx, closed.dgamma, closed.dbeta):
        assert g.dtype == dtype


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("axis", [-1, 0])
def test_node_gradient_shapes(shape, axis):
    case = make_case(22, shape, axis=axis)
    cache = forward(*case.args, axis=axis)
    grads = backward(case.dout, cache)
    assert isinstance(grads, StagedGrads)
    for name in NODE_NAMES:
        assert grads.of(name).shape == getattr(cache, name).shape, name
    assert grads.of("x") is grads.dx
    assert grads.dx.shape == shape
    assert grads.dgamma.shape == grads.dbeta.shape == (shape[-1],)
    for name in ("dx_sm_via_normalized_x", "dx_sm_via_sq_xsm", "dx_via_x_sm", "dx_via_sample_mean"):
        assert getattr(grads, name).shape == shape, name


def test_staged_local_derivatives_by_hand():
    """Each line of the backward pass is the chain rule of its forward line."""
    case = make_case(23, (3, 4), eps=1e-2)
    c = forward(*case.args, eps=1e-2)
    g = backward(case.dout, c)
    n = 4
    np.testing.assert_array_equal(g.dout, case.dout)
    np.testing.assert_array_equal(g.dgx, case.dout)
    np.testing.assert_allclose(g.dbeta, case.dout.sum(axis=0))
    np.testing.assert_allclose(g.dgamma, (case.dout * c.normalized_x).sum(axis=0))
    np.testing.assert_allclose(g.dnormalized_x, case.gamma * case.dout)
    np.testing.assert_allclose(g.dx_sm_via_normalized_x, c.inv_sqrt_sve * g.dnormalized_x)
    np.testing.assert_allclose(
        g.dinv_sqrt_sve, (c.x_sm * g.dnormalized_x).sum(axis=-1, keepdims=True)
    )
    np.testing.assert_allclose(g.dsqrt_sve, -g.dinv_sqrt_sve / c.sve)
    np.testing.assert_allclose(g.dsve, 0.5 * g.dsqrt_sve / c.sqrt_sve)
    np.testing.assert_array_equal(g.dsample_var, g.dsve)  # eps is a constant
    np.testing.assert_allclose(g.dsq_xsm, np.broadcast_to(g.dsample_var / n, (3, 4)))
    np.testing.assert_allclose(g.dx_sm_via_sq_xsm, 2 * c.x_sm * g.dsq_xsm)
    np.testing.assert_allclose(g.dsample_mean, -g.dx_sm.sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(g.dx_via_sample_mean, np.broadcast_to(g.dsample_mean / n, (3, 4)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [-1, 0])
def test_merge_points_keep_both_contributions(dtype, axis):
    case = make_case(24, (5, 4), dtype, eps=1e-5, axis=axis)
    grads = backward(case.dout, forward(*case.args, axis=axis))
    # the sums are exactly what the fields say
    np.testing.assert_array_equal(
        grads.dx_sm, grads.dx_sm_via_normalized_x + grads.dx_sm_via_sq_xsm
    )
    np.testing.assert_array_equal(grads.dx, grads.dx_via_x_sm + grads.dx_via_sample_mean)
    np.testing.assert_array_equal(grads.dx_via_x_sm, grads.dx_sm)  # x_sm = x - mean: slope 1
    # and on random data neither contribution alone is the sum, so a missing term is caught
    assert not np.allclose(grads.dx_sm, grads.dx_sm_via_normalized_x, rtol=1e-3)
    assert not np.allclose(grads.dx_sm, grads.dx_sm_via_sq_xsm, rtol=1e-3)
    assert not np.allclose(grads.dx, grads.dx_via_x_sm, rtol=1e-3)
    assert not np.allclose(grads.dx, grads.dx_via_sample_mean, rtol=1e-3)


def test_staged_grads_is_frozen():
    case = make_case(25, (2, 3))
    grads = backward(case.dout, forward(*case.args))
    with pytest.raises(dataclasses.FrozenInstanceError):
        grads.dx = np.zeros((2, 3))


@pytest.mark.parametrize("shape", SHAPES)
def test_param_grads_sum_over_every_axis_but_the_last(shape):
    case = make_case(26, shape)
    cache = forward(*case.args)
    grads = backward(case.dout, cache)
    axes = tuple(range(len(shape) - 1))
    np.testing.assert_allclose(grads.dbeta, case.dout.sum(axis=axes), rtol=1e-12)
    np.testing.assert_allclose(
        grads.dgamma, (case.dout * cache.normalized_x).sum(axis=axes), rtol=1e-12
    )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_dx_sums_to_zero_over_each_vector(shape, eps):
    case = make_case(27, shape, eps=eps, offset=4.0)
    cache = forward(*case.args, eps=eps)
    for grads in (backward(case.dout, cache), closed_form_backward(case.dout, cache)):
        np.testing.assert_allclose(
            grads.dx.sum(axis=-1), 0.0, atol=1e-12 * dx_scale(cache, case.dout)
        )


@pytest.mark.parametrize("dtype", DTYPES)
def test_float32_dout_as_float64_is_cast(dtype):
    case = make_case(28, (3, 4), dtype)
    cache = forward(*case.args)
    grads = backward(case.dout.astype(np.float64), cache)
    for name in ("dx", "dgamma", "dbeta", "dsve", "dsq_xsm", "dx_via_sample_mean"):
        assert getattr(grads, name).dtype == dtype, name


def test_integer_dout_is_accepted():
    cache = forward(np.array([[1, 2, 4], [3, 3, 0]]), [1, 1, 1], [0, 0, 0])
    grads = backward(np.array([[1, 0, 0], [0, 2, 0]]), cache)
    assert grads.dx.dtype == np.float64


def test_path_terms_sum_to_dx():
    case = make_case(29, (3, 5), eps=1e-3)
    cache = forward(*case.args, eps=1e-3)
    terms = dx_path_terms(case.dout * case.gamma, cache.normalized_x, cache.inv_sqrt_sve, -1)
    np.testing.assert_allclose(terms.total, closed_form_backward(case.dout, cache).dx)
    s = cache.inv_sqrt_sve
    g = case.dout * case.gamma
    np.testing.assert_allclose(terms.direct, s * g)
    np.testing.assert_allclose(terms.through_mean, -s * g.mean(axis=-1, keepdims=True))
    np.testing.assert_allclose(
        terms.through_variance,
        -s * cache.normalized_x * (g * cache.normalized_x).mean(axis=-1, keepdims=True),
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_single_feature_gradient_is_zero(dtype):
    """D = 1: out = beta whatever x is, so dx = 0 (absolute bound) and dgamma = 0."""
    x = np.array([[3.0], [-7.0], [0.5]], dtype=dtype)
    dout = np.array([[1.0], [-2.0], [0.25]], dtype=dtype)
    cache = forward(x, [2.0], [0.5], eps=1e-3)
    for grads in (backward(dout, cache), closed_form_backward(dout, cache)):
        assert np.max(np.abs(grads.dx)) <= 1e-6
        np.testing.assert_array_equal(grads.dgamma, [0.0])
        np.testing.assert_allclose(grads.dbeta, [-0.75])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("eps", [1e-5, 0.1, 2.0])
def test_two_features_against_exact_formula(dtype, eps):
    """D = 2: xhat_1 = -xhat_2 = d / sqrt(d^2 + eps), d = (x_1 - x_2) / 2, so
    dy_i/dx_j = gamma_i * c * [[1, -1], [-1, 1]] with c = eps / (2 (d^2 + eps)^1.5).
    With d^2 >> eps the true gradient is tiny (all round-off): bound it absolutely."""
    x = np.array([[1.0, -0.5], [2.0, 2.5]], dtype=dtype)
    gamma = np.array([1.5, -0.7])
    dout = np.array([[0.3, -1.2], [1.0, 0.4]], dtype=dtype)
    d = (x[:, :1].astype(np.float64) - x[:, 1:]) / 2
    c = eps / (2 * (d**2 + eps) ** 1.5)
    g = dout.astype(np.float64) * gamma
    expected = c * (g[:, :1] - g[:, 1:]) * np.array([1.0, -1.0])
    cache = forward(x, gamma, np.zeros(2), eps=eps)
    scale = dx_scale(cache, dout)
    atol = ANALYTIC_RTOL[np.dtype(dtype)] * scale
    for grads in (backward(dout, cache), closed_form_backward(dout, cache)):
        np.testing.assert_allclose(grads.dx, expected, rtol=0, atol=atol)


def test_two_features_with_zero_eps_have_zero_gradient():
    cache = forward(np.array([1.0, -0.5]), [1.0, 1.0], [0.0, 0.0], eps=0.0)
    grads = backward(np.array([0.3, -1.2]), cache)
    assert np.max(np.abs(grads.dx)) <= 1e-15 * dx_scale(cache, [0.3, -1.2])


def test_constant_vector_with_positive_eps():
    """var = 0: only the direct and mean paths remain, dx = s * (g - mean(g))."""
    x = np.full((2, 4), 3.0)
    case = make_case(30, (2, 4))
    cache = forward(x, case.gamma, case.beta, eps=1e-5)
    g = case.dout * case.gamma
    expected = (g - g.mean(axis=-1, keepdims=True)) / np.sqrt(1e-5)
    for grads in (backward(case.dout, cache), closed_form_backward(case.dout, cache)):
        np.testing.assert_allclose(grads.dx, expected, rtol=1e-12)
        np.testing.assert_array_equal(grads.dgamma, 0.0)


@pytest.mark.parametrize(
    ("dtype", "scale", "eps"),
    [
        (np.float64, 1e100, 1e-5),
        (np.float64, 1e-100, 0.0),
        (np.float64, 1e-150, 0.0),
        (np.float64, 1e-100, 1e-5),
        (np.float32, 1e15, 1e-5),
        (np.float32, 1e-15, 0.0),
        (np.float32, 1e-15, 1e-5),
    ],
)
def test_extreme_magnitudes_backward(dtype, scale, eps):
    base = np.array([[1.0, -2.0, 0.5, 3.0], [2.0, 2.5, -1.0, 0.0]])
    dout = np.array([[0.3, -1.0, 2.0, 0.1], [-0.5, 0.2, 0.7, 1.1]])
    cache = forward((scale * base).astype(dtype), np.ones(4), np.zeros(4), eps=eps)
    staged = backward(dout, cache)
    closed = closed_form_backward(dout, cache)
    for name in ("dx", "dgamma", "dbeta"):
        assert np.all(np.isfinite(getattr(staged, name))), name
    rtol = ANALYTIC_RTOL[np.dtype(dtype)]
    assert_close(closed.dx, staged.dx, rtol, dx_scale(cache, dout), "dx")
    if eps == 0.0 or scale > 1:  # dx scales as 1/scale
        ref = complex_step_dx(base, np.ones(4), np.zeros(4), dout, 0.0) / scale
        assert_close(staged.dx, ref, 10 * rtol, dx_scale(cache, dout), "dx vs reference")
