"""Hypothesis property tests over random shapes, values, eps and both dtypes.

Tolerances are dtype-aware and relative to each tensor's natural scale (`dx_scale`,
`param_scale`): analytic vs analytic ~1e-9 (float64) / 1e-4 (float32), analytic vs numerical
~1e-6 / 1e-2. The strategies stay where the math is well-conditioned: at least 3 entries per
normalized group (with 2, var >> eps makes the true gradient ~eps/var, pure round-off), values
of moderate range, and every group's spread bounded away from 0 relative to the data's scale.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kit import (
    ANALYTIC_RTOL,
    FAST,
    NUMERIC_RTOL,
    assert_close,
    cases,
    dx_scale,
    make_case,
    param_scale,
)

from ln_core import (
    backward,
    closed_form_backward,
    default_h,
    forward,
    gradient_check,
    jacobian,
    jacobian_parts,
    judge,
    make_sublayer,
    numerical_gradients,
    residual_backward,
    residual_forward,
    residual_numerical_grads,
)


def run(case):
    cache = forward(*case.args, eps=case.eps, axis=case.axis)
    return cache, backward(case.dout, cache)


@FAST
@given(cases(axes=(-1, 0)))
def test_staged_equals_closed_form(case):
    cache, staged = run(case)
    closed = closed_form_backward(case.dout, cache)
    rtol = ANALYTIC_RTOL[case.dtype]
    assert_close(closed.dx, staged.dx, rtol, dx_scale(cache, case.dout), "dx")
    assert_close(closed.dgamma, staged.dgamma, rtol, param_scale(cache, case.dout), "dgamma")
    assert_close(closed.dbeta, staged.dbeta, rtol, param_scale(cache, case.dout), "dbeta")
    for g in (staged.dx, staged.dgamma, staged.dbeta, closed.dx, cache.out):
        assert g.dtype == case.dtype


@FAST
@given(cases(ndims=(1, 2, 3)))
def test_dx_is_dout_times_jacobian_per_vector(case):
    _, staged = run(case)
    rows_x = case.x.reshape(-1, case.x.shape[-1])
    rows_dout = case.dout.reshape(-1, case.x.shape[-1])
    rows_dx = staged.dx.reshape(rows_x.shape)
    for x_row, dout_row, dx_row in zip(rows_x, rows_dout, rows_dx, strict=True):
        j = jacobian(x_row, case.gamma, case.eps)
        assert j.dtype == case.dtype
        expected = dout_row.astype(np.float64) @ j.astype(np.float64)
        row_cache = forward(x_row, case.gamma, case.beta, case.eps)
        assert_close(dx_row, expected, 2 * ANALYTIC_RTOL[case.dtype], dx_scale(row_cache, dout_row))


@FAST
@given(cases(axes=(-1, 0), ndims=(1, 2, 3)))
def test_staged_equals_numerical(case):
    cache, staged = run(case)
    num = numerical_gradients(*case.args, case.dout, case.eps, default_h(cache), case.axis)
    rtol = NUMERIC_RTOL[case.dtype]
    assert_close(num.dx, staged.dx, rtol, dx_scale(cache, case.dout), "dx")
    assert_close(num.dgamma, staged.dgamma, rtol, param_scale(cache, case.dout), "dgamma")
    assert_close(num.dbeta, staged.dbeta, rtol, param_scale(cache, case.dout), "dbeta")
    assert num.dx.dtype == case.dtype


@FAST
@given(cases(axes=(-1, 0), ndims=(1, 2)))
def test_gradient_check_never_fails_a_correct_gradient(case):
    """The check's own verdict, with its own step and bounds, on every draw: a dx shrunk by
    cancellation to round-off is "cannot resolve", never "fail"."""
    check = gradient_check(*case.args, case.dout, case.eps, axis=case.axis)
    assert check.passed, (check.errors, check.resolution)


@FAST
@given(cases(axes=(-1,), ndims=(2,), min_d=2), st.floats(0.01, 10.0))
def test_a_wrong_dx_beyond_the_bound_always_fails(case, factor):
    """dx off by a fraction of itself fails wherever that is more than twice the bound: the
    reference sits within one bound of the truth, so the gap exceeds the bound."""
    check = gradient_check(*case.args, case.dout, case.eps, axis=case.axis)
    wrong = check.analytic.dx * (1.0 + factor)
    change = np.abs(wrong.astype(np.float64) - check.analytic.dx)
    assume(np.any(change > 2 * check.bounds["dx"]))
    assert check.judgement("backward", "dx", wrong).status == "fail"


@given(
    st.sampled_from([1e-300, 1e-150, 1e-19, 1.0, 1e15, 1e150, 1e290]),
    st.sampled_from([0.0, 1e-6, 0.05, 0.5, 1.0]),
    st.sampled_from([0.0, 1e-9, 0.3, 0.9, 5.0]),
)
def test_the_rule_is_scale_free(scale, bound_fraction, gap_fraction):
    """judge(c, r, bound) depends on sizes only through their ratios, at any scale (powers of
    ten far from a tie between gap and bound, so no rounding decides)."""
    reference = np.array([1.0, -2.0, 0.5])
    candidate = reference + gap_fraction * np.array([0.1, 0.0, 0.0])
    one = judge(candidate, reference, bound_fraction * 0.1)
    scaled = judge(scale * candidate, scale * reference, scale * bound_fraction * 0.1)
    assert one.status == scaled.status
    assert np.isclose(one.relative, scaled.relative, rtol=1e-9)


@FAST
@given(cases(min_d=2, max_d=8, ndims=(1,)))
def test_jacobian_parts_sum_and_constant_shift(case):
    parts = jacobian_parts(case.x, case.gamma, case.eps)
    j = jacobian(case.x, case.gamma, case.eps)
    d = case.x.shape[0]
    for part in (parts.direct, parts.through_mean, parts.through_variance):
        assert part.shape == (d, d)
    np.testing.assert_array_equal(parts.total, j)
    scale = float(np.max(np.abs(parts.direct)))
    ones = np.ones(d)
    assert np.max(np.abs(j.astype(np.float64) @ ones)) <= 4 * d * ANALYTIC_RTOL[case.dtype] * scale


@FAST
@given(cases(min_d=2, max_d=8, ndims=(1,), eps_values=(0.0,), uniform_gamma=True))
def test_uniform_gamma_zero_eps_jacobian_symmetric_and_kills_xhat(case):
    j = jacobian(case.x, case.gamma, 0.0).astype(np.float64)
    xhat = forward(*case.args, eps=0.0).normalized_x.astype(np.float64)
    # the natural size of J's entries is gamma * s (the direct part); with D = 2 and eps = 0 the
    # true J is 0, so max|J| itself would only measure round-off
    scale = float(np.max(np.abs(jacobian_parts(case.x, case.gamma, 0.0).direct)))
    d = case.x.shape[0]
    tol = 4 * d * ANALYTIC_RTOL[case.dtype] * scale
    assert np.max(np.abs(j - j.T)) <= tol
    assert np.max(np.abs(j @ xhat)) <= tol


@FAST
@given(cases(axes=(-1, 0), ndims=(1, 2, 3), min_group=2))
def test_dx_sums_to_zero_over_each_vector(case):
    cache, staged = run(case)
    closed = closed_form_backward(case.dout, cache)
    n = case.x.shape[case.axis]
    tol = 4 * n * ANALYTIC_RTOL[case.dtype] * dx_scale(cache, case.dout)
    for dx in (staged.dx, closed.dx):
        assert np.max(np.abs(dx.astype(np.float64).sum(axis=case.axis))) <= tol


@FAST
@given(
    cases(ndims=(1, 2, 3), eps_values=(0.0,), max_offset=2.0),
    st.floats(0.1, 10.0),
    st.floats(-5.0, 5.0),
)
def test_output_invariant_to_affine_rescaling(case, a, b):
    x = case.x.astype(np.float64)
    moved = (a * (x + b * np.max(np.abs(x)))).astype(case.dtype)  # a > 0, shift a * b * max|x|
    out = forward(case.x, case.gamma, case.beta, eps=0.0).out
    out_moved = forward(moved, case.gamma, case.beta, eps=0.0).out
    # the cast of a*x + b rounds x, a relative change of eps * max|x| / sigma
    rtol = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 2e-4}[case.dtype]
    assert_close(out_moved, out, rtol, float(np.max(np.abs(case.gamma))) * 3, "out")


@FAST
@given(cases(ndims=(2, 3), axes=(0,)))
def test_axis_zero_equals_axis_minus_one_on_the_transpose(case):
    """BatchNorm over axis 0 is LayerNorm of the array with axis 0 moved last."""
    cache, staged = run(case)
    moved = np.moveaxis(case.x, 0, -1)
    n = moved.shape[-1]
    ones, zeros = np.ones(n, case.dtype), np.zeros(n, case.dtype)
    plain = forward(moved, ones, zeros, eps=case.eps)
    rtol = ANALYTIC_RTOL[case.dtype]
    assert_close(cache.normalized_x, np.moveaxis(plain.normalized_x, -1, 0), rtol, 1.0, "xhat")
    # gamma and beta act on the last axis of x, whichever axis is normalized
    expected_out = case.gamma * np.moveaxis(plain.normalized_x, -1, 0) + case.beta
    assert_close(cache.out, expected_out, rtol, float(np.max(np.abs(expected_out))), "out")
    # the same holds for dx, with gamma folded into the upstream gradient
    g = np.moveaxis(case.dout * case.gamma, 0, -1)
    plain_dx = np.moveaxis(backward(g, plain).dx, -1, 0)
    assert_close(staged.dx, plain_dx, rtol, dx_scale(cache, case.dout), "dx")


@FAST
@given(
    cases(ndims=(1, 2, 3), dtypes=(np.dtype(np.float64),), max_d=5, log_scale=(-1.0, 0.5)),
    st.integers(0, 100),
)
def test_residual_parts_sum_and_match_numerical(case, seed):
    """x of moderate size, so that one step h suits x, W and c alike (tanh stays unsaturated)."""
    d = case.x.shape[-1]
    sub = make_sublayer(d, seed=seed)
    cache = residual_forward(case.x, sub, case.gamma, case.beta, case.eps)
    # LN of z = x + F(x): keep z's groups well-spread as well
    z_std = cache.z.std(axis=-1)
    assume(np.all(z_std >= 0.1 * np.max(np.abs(cache.z - cache.z.mean()))))
    grads = residual_backward(case.dout, cache)
    np.testing.assert_array_equal(grads.dx, grads.dx_skip + grads.dx_sublayer)
    num = residual_numerical_grads(case.x, sub, case.gamma, case.beta, case.dout, case.eps, 1e-6)
    scale = (
        dx_scale(cache.ln, case.dout) * (1 + np.sum(np.abs(sub.W))) * max(1, np.max(abs(case.x)))
    )
    for name in ("dx", "dW", "dc"):
        assert_close(num[name], getattr(grads, name), 1e-5, scale, name)


@FAST
@given(cases(ndims=(2,), dtypes=(np.dtype(np.float32),)))
def test_float32_in_float32_out(case):
    cache, staged = run(case)
    for name, value in cache.nodes.items():
        assert value.dtype == np.float32, name
    for name in ("dx", "dgamma", "dbeta", "dsve", "dx_sm", "dsample_mean"):
        assert getattr(staged, name).dtype == np.float32, name


float32_or_64 = st.sampled_from([np.float32, np.float64])


@FAST
@given(
    st.data(),
    float32_or_64,
    st.sampled_from([(1,), (2,), (5,), (3, 1), (3, 2), (2, 4), (2, 2, 3)]),
    st.floats(1e-6, 1.0),
)
def test_any_moderate_finite_input_works_with_positive_eps(data, dtype, shape, eps):
    """Arbitrary values (repeats, zeros, constant vectors, D = 1): finite results, no warnings."""
    elements = st.floats(-1e4, 1e4, width=32 if dtype == np.float32 else 64)
    x = data.draw(hnp.arrays(dtype, shape, elements=elements))
    dout = data.draw(hnp.arrays(dtype, shape, elements=st.floats(-10, 10, width=32)))
    gamma = data.draw(hnp.arrays(dtype, shape[-1:], elements=st.floats(-3, 3, width=32)))
    beta = np.zeros(shape[-1], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache = forward(x, gamma, beta, eps)
        staged = backward(dout, cache)
        closed = closed_form_backward(dout, cache)
    for value in (*cache.nodes.values(), staged.dx, staged.dgamma, staged.dbeta, closed.dx):
        assert np.all(np.isfinite(value))
        assert value.dtype == dtype
    assert np.max(np.abs(cache.normalized_x)) <= np.sqrt(shape[-1]) * (1 + 1e-3)


def test_strategy_smoke():
    """The shared case factory is deterministic (so failures reproduce)."""
    a, b = make_case(1, (2, 3)), make_case(1, (2, 3))
    np.testing.assert_array_equal(a.x, b.x)
