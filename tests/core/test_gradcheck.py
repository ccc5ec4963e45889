"""Unit tests for the gradient check (ln_core.gradcheck)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from kit import DTYPES, make_case

import ln_core.gradcheck as gradcheck
from ln_core import (
    GradientCheck,
    Grads,
    band,
    default_h,
    elementwise_rel_error,
    forward,
    gradient_check,
    rel_error,
)

SHAPES = [(5,), (3, 6), (2, 3, 4)]


def test_rel_error_formula():
    a = np.array([1.0, -2.0, 0.5])
    n = np.array([1.1, -2.0, 0.5])
    assert rel_error(a, n) == pytest.approx(0.1 / 4.0)  # max|a-n| / max(|a|+|n|)
    assert rel_error(a, a) == 0.0
    assert rel_error(np.zeros(3), np.zeros(3)) == 0.0  # 0 / 0 is 0
    # No absolute floor: a tiny gradient that is all wrong is all wrong.
    assert rel_error(np.zeros(2), np.array([1e-13, 0.0])) == 1.0
    assert rel_error(1e-19 * a, -1e-19 * a) == pytest.approx(1.0)
    assert rel_error(a, -a) == pytest.approx(1.0)


def test_rel_error_is_scale_free():
    rng = np.random.default_rng(0)
    a, n = rng.normal(size=5), rng.normal(size=5)
    assert rel_error(1e6 * a, 1e6 * n) == pytest.approx(rel_error(a, n))
    assert rel_error(a.astype(np.float32), n.astype(np.float32)) == pytest.approx(
        rel_error(a, n), rel=1e-6
    )


def test_elementwise_rel_error():
    a = np.array([[1.0, 0.0], [2.0, -1.0]])
    n = np.array([[1.0, 0.0], [1.0, 1.0]])
    np.testing.assert_allclose(elementwise_rel_error(a, n), [[0.0, 0.0], [1 / 3, 1.0]])


def test_bands_depend_on_dtype():
    assert band(1e-8, np.float64) == "tiny"
    assert band(1e-5, np.float64) == "small"
    assert band(1e-3, np.float64) == "large"
    assert band(1e-4, np.float32) == "tiny"
    assert band(1e-2, np.float32) == "small"
    assert band(0.5, np.float32) == "large"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("scale", "offset"), [(2.0, 10.0), (1.0, 0.0), (1e-3, 0.0)])
def test_default_h_follows_the_documented_rule(dtype, scale, offset):
    case = make_case(60, (3, 5), dtype, scale=scale, offset=offset)
    cache = forward(*case.args)
    sigma = float(np.median(cache.sqrt_sve))
    r = float(np.max(np.abs(case.x))) / sigma
    machine_eps = {np.dtype(np.float64): 2.220446049250313e-16, np.dtype(np.float32): 1.1920929e-7}
    expected = sigma * np.cbrt(machine_eps[np.dtype(dtype)] * max(1.0, r))
    assert default_h(cache) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.5])
@pytest.mark.parametrize("seed", [0, 1])
def test_gradient_check_passes_on_random_data(shape, dtype, eps, seed):
    case = make_case(61 + seed, shape, dtype, eps=eps, scale=1.5, offset=0.5)
    check = gradient_check(*case.args, case.dout, eps)
    assert isinstance(check, GradientCheck)
    assert check.passed, check.errors
    assert check.dtype == dtype
    assert set(check.errors) == {"backward", "closed_form"}
    for per_tensor in check.errors.values():
        assert set(per_tensor) == {"dx", "dgamma", "dbeta"}
    assert check.max_error == max(e for per in check.errors.values() for e in per.values())
    for method in ("backward", "closed_form"):
        for tensor in ("dx", "dgamma", "dbeta"):
            assert check.band(method, tensor) == "tiny", (method, tensor, check.errors)
    for g in (check.analytic, check.closed_form, check.working):
        assert g.dx.dtype == dtype
    # The reference differences run in float64 whatever the dtype (PyTorch's gradcheck advice).
    assert check.numerical.dx.dtype == np.float64


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradient_check_along_axis_zero(dtype):
    case = make_case(63, (6, 3), dtype, eps=1e-5, axis=0)
    check = gradient_check(*case.args, case.dout, 1e-5, axis=0)
    assert check.passed, check.errors


def test_explicit_h_is_used():
    case = make_case(64, (2, 4))
    check = gradient_check(*case.args, case.dout, h=1e-4)
    assert check.h == 1e-4
    assert check.passed


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("wrong", ["scaled_dx", "dropped_mean_path", "dgamma_sign"])
def test_gradient_check_fails_for_a_wrong_backward(monkeypatch, dtype, wrong):
    """Feed the check a deliberately broken backward: it must fail, so passing means something."""
    real_backward = gradcheck.backward

    def broken_backward(dout, cache):
        good = real_backward(dout, cache)
        if wrong == "scaled_dx":
            return dataclasses.replace(good, dx=1.1 * good.dx)
        if wrong == "dropped_mean_path":
            return dataclasses.replace(good, dx=good.dx_via_x_sm)
        return dataclasses.replace(good, dgamma=-good.dgamma)

    monkeypatch.setattr(gradcheck, "backward", broken_backward)
    case = make_case(65, (3, 5), dtype, eps=1e-5)
    check = gradient_check(*case.args, case.dout, 1e-5)
    assert not check.passed
    tensor = "dgamma" if wrong == "dgamma_sign" else "dx"
    assert check.status("backward", tensor) == "fail"
    assert check.judgement("backward", tensor).excess > 1
    assert check.band("backward", tensor) in ("small", "large")
    assert check.status("closed_form", tensor) == "pass"  # the closed form is fine


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_small_relative_error_is_measured_not_hidden(dtype):
    case = make_case(66, (3, 5), dtype)
    check = gradient_check(*case.args, case.dout)
    scaled = Grads(
        dx=check.analytic.dx * 1.05, dgamma=check.analytic.dgamma, dbeta=check.analytic.dbeta
    )
    err = rel_error(scaled.dx, check.numerical.dx)
    assert err == pytest.approx(0.05 / 2.05, rel=0.05)
    assert check.judgement("backward", "dx", scaled.dx).status == "fail"


@pytest.mark.parametrize(
    ("dtype", "scale", "eps"),
    [
        (np.float64, 1e-100, 0.0),
        (np.float64, 1e-20, 0.0),
        (np.float64, 1e100, 0.0),
        (np.float64, 1e-100, 1e-5),
        (np.float32, 1e-15, 0.0),
        (np.float32, 1e15, 1e-5),
    ],
)
def test_gradient_check_at_extreme_magnitudes(dtype, scale, eps):
    base = np.array([[1.0, -2.0, 0.5, 3.0], [2.0, 2.5, -1.0, 0.0]])
    case = make_case(67, (2, 4), dtype)
    check = gradient_check((scale * base).astype(dtype), case.gamma, case.beta, case.dout, eps)
    assert check.passed, check.errors


def test_gradient_check_constant_vector_with_eps():
    case = make_case(68, (2, 4))
    check = gradient_check(np.full((2, 4), 7.0), case.gamma, case.beta, case.dout, 1e-3)
    assert check.passed, check.errors


def test_gradient_check_large_offset_float64():
    case = make_case(69, (3, 4), offset=1e4)
    check = gradient_check(*case.args, case.dout, 0.0)
    assert check.passed, check.errors


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "x", [np.array([[3.0], [-7.0], [0.5]]), np.full((2, 4), 3.0)], ids=["D=1", "constant"]
)
def test_gradient_check_where_only_eps_keeps_the_math_defined(dtype, x):
    d = x.shape[-1]
    gamma = np.linspace(-1.0, 2.0, d)
    dout = (np.arange(x.size).reshape(x.shape) - 1.0).astype(dtype)
    check = gradient_check(x.astype(dtype), gamma, np.zeros(d), dout, 1e-3)
    assert check.passed, check.errors
    for grads in (check.analytic, check.closed_form, check.numerical):
        assert np.all(np.isfinite(grads.dx))
