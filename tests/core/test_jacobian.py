"""Unit tests for the Jacobian of one vector and its three parts (ln_core.jacobian)."""

from __future__ import annotations

import numpy as np
import pytest
from kit import ANALYTIC_RTOL, DTYPES, assert_close, complex_step_dx, make_case

from ln_core import PathTerms, backward, forward, jacobian, jacobian_parts


def complex_step_jacobian(x, gamma, eps):
    """J[i, j] = d y_i / d x_j, row i from the complex step with dout = e_i."""
    d = len(x)
    return np.stack([complex_step_dx(x, gamma, np.zeros(d), np.eye(d)[i], eps) for i in range(d)])


@pytest.mark.parametrize("d", [3, 5, 8])
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.5])
def test_jacobian_matches_complex_step(d, eps):
    case = make_case(40, (d,), eps=eps, scale=2.0, offset=1.0)
    j = jacobian(case.x, case.gamma, eps)
    ref = complex_step_jacobian(case.x, case.gamma, eps)
    assert j.shape == (d, d)
    assert_close(j, ref, 1e-10, what="J")


def test_jacobian_rows_are_outputs_columns_are_inputs():
    """Perturbing x_j by a small step changes y by about J[:, j] * step."""
    x = np.array([0.3, -1.2, 2.0, 0.7])
    gamma = np.array([1.0, 2.0, -0.5, 3.0])
    j = jacobian(x, gamma, 1e-3)
    h = 1e-6
    for col in range(4):
        e = np.eye(4)[col] * h
        plus = forward(x + e, gamma, np.zeros(4), 1e-3).out
        minus = forward(x - e, gamma, np.zeros(4), 1e-3).out
        np.testing.assert_allclose((plus - minus) / (2 * h), j[:, col], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_parts_sum_to_jacobian_and_have_the_documented_form(dtype):
    case = make_case(41, (6,), dtype, eps=1e-3)
    parts = jacobian_parts(case.x, case.gamma, 1e-3)
    assert isinstance(parts, PathTerms)
    j = jacobian(case.x, case.gamma, 1e-3)
    for part in (parts.direct, parts.through_mean, parts.through_variance):
        assert part.shape == (6, 6) and part.dtype == dtype
    np.testing.assert_array_equal(parts.total, j)
    cache = forward(case.x, case.gamma, case.beta, 1e-3)
    s = cache.inv_sqrt_sve.astype(np.float64)[0]
    g = case.gamma.astype(np.float64)
    xhat = cache.normalized_x.astype(np.float64)
    rtol = ANALYTIC_RTOL[np.dtype(dtype)]
    assert_close(parts.direct, np.diag(g * s), rtol, what="direct")
    assert_close(parts.through_mean, -np.outer(g, np.ones(6)) * s / 6, rtol, what="mean")
    assert_close(parts.through_variance, -np.outer(g * xhat, xhat) * s / 6, rtol, what="var")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 1.0])
def test_dout_times_jacobian_is_dx(dtype, eps):
    case = make_case(42, (4, 5), dtype, eps=eps)
    cache = forward(*case.args, eps=eps)
    dx = backward(case.dout, cache).dx
    rtol = ANALYTIC_RTOL[np.dtype(dtype)]
    for row in range(4):
        j = jacobian(case.x[row], case.gamma, eps)
        assert j.dtype == dtype
        ref = case.dout[row].astype(np.float64) @ j.astype(np.float64)
        assert_close(dx[row], ref, rtol, np.max(np.abs(j)) * np.sum(np.abs(case.dout[row])))


@pytest.mark.parametrize("eps", [0.0, 1e-5, 1.0])
def test_jacobian_annihilates_constant_shift(eps):
    case = make_case(43, (7,), eps=eps)
    j = jacobian(case.x, case.gamma, eps)
    np.testing.assert_allclose(j @ np.ones(7), 0.0, atol=1e-13 * np.max(np.abs(j)))
    # each part by itself does not: the mean path exactly cancels the direct one
    parts = jacobian_parts(case.x, case.gamma, eps)
    assert not np.allclose(parts.direct @ np.ones(7), 0.0)


def test_uniform_gamma_zero_eps_symmetric_and_annihilates_xhat():
    case = make_case(44, (6,), eps=0.0, uniform_gamma=True)
    j = jacobian(case.x, case.gamma, 0.0)
    xhat = forward(*case.args, eps=0.0).normalized_x
    scale = np.max(np.abs(j))
    np.testing.assert_allclose(j, j.T, rtol=0, atol=1e-14 * scale)
    np.testing.assert_allclose(j @ xhat, 0.0, atol=1e-13 * scale)


def test_positive_eps_or_nonuniform_gamma_break_the_identities():
    """So the two identities above are really tested, not trivially true."""
    case = make_case(45, (6,), eps=0.5, uniform_gamma=True)
    xhat = forward(*case.args, eps=0.5).normalized_x
    j = jacobian(case.x, case.gamma, 0.5)
    assert np.max(np.abs(j @ xhat)) > 1e-3 * np.max(np.abs(j))
    case = make_case(45, (6,), eps=0.0)
    j = jacobian(case.x, case.gamma, 0.0)
    assert not np.allclose(j, j.T)


def test_jacobian_of_integer_vector_is_float64():
    j = jacobian([1, 2, 4], [1, 1, 1], 0.0)
    assert j.dtype == np.float64 and j.shape == (3, 3)


def test_jacobian_of_constant_vector_with_eps():
    j = jacobian(np.full(4, 2.0), np.ones(4), 1e-4)
    expected = (np.eye(4) - 1 / 4) / np.sqrt(1e-4)
    np.testing.assert_allclose(j, expected, rtol=1e-12)


def test_jacobian_single_feature_is_zero():
    np.testing.assert_allclose(jacobian([5.0], [3.0], 1e-5), [[0.0]], atol=1e-12)
