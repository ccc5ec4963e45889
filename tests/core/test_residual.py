"""Unit tests for the post-LN residual block y = LN(x + tanh(x W + c)) (ln_core.residual)."""

from __future__ import annotations

import numpy as np
import pytest
from kit import DTYPES, assert_close, direct_layernorm, make_case

from ln_core import (
    ResidualCache,
    ResidualGrads,
    Sublayer,
    backward,
    forward,
    make_sublayer,
    residual_backward,
    residual_forward,
    residual_numerical_grads,
)

SHAPES = [(4,), (3, 4), (2, 2, 4)]


def test_make_sublayer_shapes_dtype_and_seed():
    sub = make_sublayer(5, seed=3)
    assert sub.W.shape == (5, 5) and sub.c.shape == (5,)
    again = make_sublayer(5, seed=3)
    np.testing.assert_array_equal(sub.W, again.W)
    assert not np.array_equal(sub.W, make_sublayer(5, seed=4).W)
    assert make_sublayer(3, dtype=np.float32).W.dtype == np.float32


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_residual_forward_is_ln_of_x_plus_f(shape, dtype):
    case = make_case(80, shape, dtype)
    sub = make_sublayer(shape[-1], seed=1)
    cache = residual_forward(*case.args[:1], sub, case.gamma, case.beta, 1e-5)
    assert isinstance(cache, ResidualCache)
    x64 = case.x.astype(np.float64)
    f = np.tanh(x64 @ sub.W + sub.c)
    _, out = direct_layernorm(x64 + f, case.gamma, case.beta, 1e-5)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    assert_close(cache.f, f, rtol, 1.0, "f")
    assert_close(cache.z, x64 + f, rtol, np.max(np.abs(x64)) + 1, "z")
    assert_close(cache.out, out, 10 * rtol, np.max(np.abs(out)), "out")
    assert cache.out.dtype == dtype and cache.f.dtype == dtype
    assert cache.sublayer.W.dtype == dtype  # float64 W is cast to a float32 lesson's dtype
    np.testing.assert_array_equal(cache.ln.out, cache.out)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_skip_and_sublayer_parts_sum_to_dx(shape, dtype):
    case = make_case(81, shape, dtype)
    sub = make_sublayer(shape[-1], seed=2, dtype=dtype)
    cache = residual_forward(case.x, sub, case.gamma, case.beta)
    grads = residual_backward(case.dout, cache)
    assert isinstance(grads, ResidualGrads)
    np.testing.assert_array_equal(grads.dx, grads.dx_skip + grads.dx_sublayer)
    np.testing.assert_array_equal(grads.dx_skip, grads.dz)  # the skip passes dz unchanged
    ln = backward(case.dout, forward(cache.z, case.gamma, case.beta))
    np.testing.assert_array_equal(grads.dz, ln.dx)
    np.testing.assert_array_equal(grads.dgamma, ln.dgamma)
    np.testing.assert_array_equal(grads.dbeta, ln.dbeta)
    # neither path alone is the whole gradient
    assert not np.allclose(grads.dx, grads.dx_skip, rtol=1e-3)
    assert not np.allclose(grads.dx, grads.dx_sublayer, rtol=1e-3)
    for g in (grads.dx, grads.dx_skip, grads.dx_sublayer, grads.dW, grads.dc):
        assert g.dtype == dtype
    assert grads.dW.shape == (shape[-1], shape[-1]) and grads.dc.shape == (shape[-1],)


def test_sublayer_part_by_hand():
    case = make_case(82, (3, 4))
    sub = make_sublayer(4, seed=5)
    cache = residual_forward(case.x, sub, case.gamma, case.beta)
    grads = residual_backward(case.dout, cache)
    dpre = grads.dz * (1 - cache.f**2)
    np.testing.assert_allclose(grads.dx_sublayer, dpre @ sub.W.T)
    np.testing.assert_allclose(grads.dW, case.x.T @ dpre)
    np.testing.assert_allclose(grads.dc, dpre.sum(axis=0))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.3])
def test_residual_backward_matches_numerical(shape, eps):
    case = make_case(83, shape, eps=eps, scale=1.5)
    sub = make_sublayer(shape[-1], seed=3)
    cache = residual_forward(case.x, sub, case.gamma, case.beta, eps)
    grads = residual_backward(case.dout, cache)
    num = residual_numerical_grads(case.x, sub, case.gamma, case.beta, case.dout, eps, h=1e-6)
    assert set(num) == {"dx", "dW", "dc"}
    for name in ("dx", "dW", "dc"):
        analytic = getattr(grads, name)
        scale = np.max(np.abs(analytic)) + np.max(np.abs(grads.dz))
        assert_close(num[name], analytic, 1e-6, scale, name)


def test_residual_float32_numerical_with_a_float32_step():
    case = make_case(84, (2, 4), np.float32)
    sub = make_sublayer(4, seed=4, dtype=np.float32)
    cache = residual_forward(case.x, sub, case.gamma, case.beta)
    grads = residual_backward(case.dout, cache)
    num = residual_numerical_grads(case.x, sub, case.gamma, case.beta, case.dout, h=1e-2)
    for name in ("dx", "dW", "dc"):
        analytic = getattr(grads, name)
        assert_close(num[name], analytic, 1e-2, np.max(np.abs(analytic)), name)


def test_zero_sublayer_reduces_to_plain_layernorm():
    case = make_case(85, (3, 5))
    sub = Sublayer(W=np.zeros((5, 5)), c=np.zeros(5))
    cache = residual_forward(case.x, sub, case.gamma, case.beta)
    grads = residual_backward(case.dout, cache)
    plain = backward(case.dout, forward(*case.args))
    np.testing.assert_array_equal(cache.out, forward(*case.args).out)
    np.testing.assert_array_equal(grads.dx, plain.dx)
    np.testing.assert_array_equal(grads.dx_sublayer, 0.0)


def test_residual_numerical_gradient_refuses_sizes_it_cannot_finish_in_seconds():
    x = np.random.default_rng(0).normal(size=(16, 64))  # 2 * (1024 + 4096 + 64) passes
    with pytest.raises(ValueError, match=r"10,368 passes for x of shape \(16, 64\) and D = 64"):
        residual_numerical_grads(x, make_sublayer(64), np.ones(64), np.zeros(64), np.ones_like(x))


def test_a_product_beyond_the_range_is_refused_naming_the_pass():
    big = Sublayer(W=np.full((2, 2), 1e300), c=np.zeros(2))
    with pytest.raises(ValueError, match="The sublayer is not representable"):
        residual_forward(np.array([1e10, -3e10]), big, np.ones(2), np.zeros(2))
