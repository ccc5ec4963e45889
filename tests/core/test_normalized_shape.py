"""normalized_shape over k >= 1 trailing axes, and optional gamma / beta, on every path.

Normalizing x of shape (..., L, D) over its last two axes is, by definition, normalizing the
rows of x.reshape(-1, L * D); every path (staged forward and backward, closed form, Jacobian,
numerical gradients, gradient check, RMSNorm) must agree with that reshape. Skipping gamma must
equal gamma = 1 and skipping beta must equal beta = 0, with the skipped gradient None.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from kit import ANALYTIC_RTOL, DTYPES, FAST, NUMERIC_RTOL, assert_close

from ln_core import (
    NODE_NAMES,
    backward,
    closed_form_backward,
    forward,
    gradient_check,
    jacobian,
    jacobian_parts,
    numerical_gradients,
    rms_backward,
    rms_forward,
    rms_jacobian,
)
from ln_core.fast import layernorm_forward_backward
from ln_core.validation import param_shape

AFFINE = ("gamma and beta", "gamma only", "neither")


def _skip(affine: str, gamma: np.ndarray, beta: np.ndarray):
    """gamma and beta as the affine option passes them (None where skipped)."""
    return (
        None if affine == "neither" else gamma,
        beta if affine == "gamma and beta" else None,
    )


@st.composite
def blocks(draw, max_lead: int = 2):
    """x of shape (*lead, *block) normalized over its k = len(block) trailing axes.

    Returns (x, gamma, beta, dout, eps, k); gamma and beta have the block's shape.
    """
    k = draw(st.integers(1, 3))
    lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=max_lead))
    block = draw(st.lists(st.integers(1, 4), min_size=k, max_size=k))
    if math.prod(block) < 3:
        block[-1] = 3
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from(DTYPES))
    shape = (*lead, *block)
    x = (draw(st.floats(-2, 2)) + rng.normal(size=shape)).astype(dtype)
    gamma = rng.uniform(0.5, 2.0, size=block).astype(dtype)
    beta = rng.normal(size=block).astype(dtype)
    dout = rng.normal(size=shape).astype(dtype)
    eps = draw(st.sampled_from([1e-5, 1e-3, 0.1]))
    return x, gamma, beta, dout, eps, k


def _rows(a: np.ndarray, k: int) -> np.ndarray:
    return a.reshape(-1, math.prod(a.shape[a.ndim - k :]))


def _trailing(k: int) -> tuple[int, ...]:
    return tuple(range(-k, 0))


@FAST
@given(blocks(), st.sampled_from(AFFINE))
def test_staged_pass_equals_the_reshape_to_one_axis(case, affine):
    x, gamma, beta, dout, eps, k = case
    gamma, beta = _skip(affine, gamma, beta)
    flat = (None if p is None else p.reshape(-1) for p in (gamma, beta))
    cache = forward(x, gamma, beta, eps, axis=_trailing(k))
    reference = forward(_rows(x, k), *flat, eps)
    assert cache.axis == _trailing(k)
    assert cache.n == reference.n
    rtol = ANALYTIC_RTOL[x.dtype]
    for name in NODE_NAMES:
        assert_close(_rows(getattr(cache, name), k), getattr(reference, name), rtol, what=name)
    grads = backward(dout, cache)
    ref_grads = backward(_rows(dout, k), reference)
    scale = float(np.max(np.abs(ref_grads.dx))) + 1.0
    assert_close(_rows(grads.dx, k), ref_grads.dx, rtol, scale, what="dx")
    assert_close(_rows(closed_form_backward(dout, cache).dx, k), ref_grads.dx, rtol, scale)
    for tensor in ("dgamma", "dbeta"):
        ours, ref = getattr(grads, tensor), getattr(ref_grads, tensor)
        assert (ours is None) == (ref is None), tensor
        if ours is not None:
            assert ours.shape == x.shape[x.ndim - k :]
            assert_close(ours.reshape(-1), ref, rtol, what=tensor)


@FAST
@given(blocks(max_lead=1), st.sampled_from(AFFINE))
def test_numerical_gradients_and_the_check_follow_the_block(case, affine):
    x, gamma, beta, dout, eps, k = case
    gamma, beta = _skip(affine, gamma, beta)
    check = gradient_check(x, gamma, beta, dout, eps, axis=_trailing(k))
    assert check.passed, check.errors
    assert set(check.tensors) == {"dx"} | {
        t for t, p in (("dgamma", gamma), ("dbeta", beta)) if p is not None
    }
    exact = backward(dout, forward(x, gamma, beta, eps, _trailing(k)))
    numerical = numerical_gradients(x, gamma, beta, dout, eps, check.working_h, _trailing(k))
    scale = float(np.max(np.abs(exact.dx))) + 1.0
    assert_close(numerical.dx, exact.dx, 100 * NUMERIC_RTOL[x.dtype], scale, what="dx")


@FAST
@given(blocks(max_lead=0), st.sampled_from(AFFINE[:2]))
def test_jacobian_of_a_block_is_the_jacobian_of_the_flattened_block(case, affine):
    x, gamma, _, _, eps, k = case
    gamma = None if affine == "neither" else gamma
    flat_gamma = None if gamma is None else gamma.reshape(-1)
    rtol = ANALYTIC_RTOL[x.dtype]
    expected = jacobian(x.reshape(-1), flat_gamma, eps)
    assert_close(jacobian(x, gamma, eps, axis=_trailing(k)), expected, rtol)
    assert_close(jacobian_parts(x, gamma, eps, _trailing(k)).total, expected, rtol)
    assert_close(
        rms_jacobian(x, gamma, eps, _trailing(k)),
        rms_jacobian(x.reshape(-1), flat_gamma, eps),
        rtol,
    )


@FAST
@given(blocks(), st.sampled_from(AFFINE))
def test_rmsnorm_follows_the_block_and_the_affine_option(case, affine):
    x, gamma, beta, dout, eps, k = case
    gamma, beta = _skip(affine, gamma, beta)
    flat = [None if p is None else p.reshape(-1) for p in (gamma, beta)]
    cache = rms_forward(x, gamma, beta, eps, _trailing(k))
    reference = rms_forward(_rows(x, k), *flat, eps)
    rtol = ANALYTIC_RTOL[x.dtype]
    assert_close(_rows(cache.out, k), reference.out, rtol, what="out")
    grads, ref_grads = rms_backward(dout, cache), rms_backward(_rows(dout, k), reference)
    assert_close(_rows(grads.dx, k), ref_grads.dx, rtol, float(np.max(np.abs(ref_grads.dx))) + 1)
    assert (grads.dbeta is None) == (beta is None)


@pytest.mark.parametrize("dtype", DTYPES)
def test_skipping_gamma_and_beta_equals_one_and_zero(dtype):
    rng = np.random.default_rng(3)
    x, dout = rng.normal(size=(2, 3, 4)).astype(dtype), rng.normal(size=(2, 3, 4)).astype(dtype)
    ones, zeros = np.ones(4, dtype), np.zeros(4, dtype)
    full = forward(x, ones, zeros)
    full_grads = backward(dout, full)
    for gamma, beta, skipped in ((None, zeros, ("gamma",)), (ones, None, ("beta",))):
        cache = forward(x, gamma, beta)
        assert cache.skipped == skipped
        np.testing.assert_array_equal(cache.out, full.out)
        grads = backward(dout, cache)
        np.testing.assert_array_equal(grads.dx, full_grads.dx)
        assert (grads.dgamma is None) == (gamma is None)
        assert (grads.dbeta is None) == (beta is None)
    bare = forward(x)
    assert bare.skipped == ("gamma", "beta")
    assert bare.gamma is None and bare.beta is None
    np.testing.assert_array_equal(bare.out, bare.normalized_x)
    np.testing.assert_array_equal(
        closed_form_backward(dout, bare).dx, closed_form_backward(dout, full).dx
    )


def test_nodes_gx_and_out_say_what_they_skip():
    cache = forward(np.arange(6.0).reshape(2, 3))
    assert cache.line("gx") == "gx = normalized_x  (no gamma)"
    assert cache.line("out") == "out = gx  (no beta)"
    full = forward(np.arange(6.0).reshape(2, 3), np.ones(3), np.zeros(3))
    assert full.line("gx") == "gx = gamma * normalized_x"
    assert full.line("x_sm") == "x_sm = x - sample_mean"


def test_rmsnorm_has_no_beta_by_default():
    cache = rms_forward(np.array([[1.0, -2.0, 3.0]]), np.array([1.0, 2.0, 0.5]))
    assert cache.beta is None
    assert rms_backward(np.ones((1, 3)), cache).dbeta is None


@pytest.mark.parametrize(
    ("shape", "axis", "expected"),
    [
        ((2, 3, 4), (-1,), (4,)),
        ((2, 3, 4), (-2, -1), (3, 4)),
        ((2, 3, 4), (-3, -2, -1), (2, 3, 4)),
        ((2, 3, 4), (-3,), (4,)),  # BatchNorm's view: per feature on the last axis
    ],
)
def test_parameter_shape_follows_the_normalized_axes(shape, axis, expected):
    assert param_shape(shape, axis) == expected


def test_a_block_gamma_of_the_wrong_shape_is_named():
    x = np.zeros((2, 3, 4)) + np.arange(4.0)
    with pytest.raises(ValueError, match=r"gamma has shape \(4,\) but must have shape \(3, 4\)"):
        forward(x, np.ones(4), None, axis=(-2, -1))
    with pytest.raises(ValueError, match=r"names the same axis twice"):
        forward(x, axis=(-1, 2))


def test_the_jacobian_of_a_batch_of_blocks_asks_for_one_block():
    with pytest.raises(ValueError, match=r"one block, but x has shape \(2, 3, 4\)"):
        jacobian(np.random.default_rng(0).normal(size=(2, 3, 4)), axis=(-2, -1))


def test_an_empty_batch_is_refused_with_its_shape_named():
    # PyTorch returns an empty result for (0, D); ln_core names the slip instead (see
    # validation.as_float_array), on every path.
    empty = np.zeros((0, 3))
    for call in (
        lambda: forward(empty),
        lambda: gradient_check(empty, None, None, empty),
        lambda: rms_forward(empty),
        lambda: layernorm_forward_backward(empty, None, None, empty),
    ):
        with pytest.raises(ValueError, match=r"x is empty \(shape \(0, 3\)\)"):
            call()
