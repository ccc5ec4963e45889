"""The fused kernel's parity with the staged passes on what PyTorch users expect of it.

D = 1 gives dx exactly 0; the row sums keep their error flat in D; gamma and beta may be
skipped; normalized_shape may span several trailing axes.
"""

from __future__ import annotations

import numpy as np
import pytest
from kit import DTYPES

from ln_core import backward, closed_form_backward, forward
from ln_core.fast import layernorm_forward_backward

AFFINE = ((True, True), (True, False), (False, False))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_a_single_feature_gives_exactly_zero_dx_on_every_path(dtype, threads):
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 50.0, (64, 1)).astype(dtype)
    dout = rng.normal(size=(64, 1)).astype(dtype)
    gamma, beta = np.array([1.7], dtype), np.array([0.25], dtype)
    fused = layernorm_forward_backward(x, gamma, beta, dout, 1e-5, block_rows=16, threads=threads)
    cache = forward(x, gamma, beta, 1e-5)
    for dx in (fused.dx, backward(dout, cache).dx, closed_form_backward(dout, cache).dx):
        np.testing.assert_array_equal(dx, 0.0)
    np.testing.assert_array_equal(fused.out, 0.25)


def _long_double_out(x: np.ndarray, eps: float) -> np.ndarray:
    x = x.astype(np.longdouble)
    xc = x - x.mean(axis=-1, keepdims=True)
    return xc / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + np.longdouble(eps))


def test_row_sums_stay_accurate_for_long_rows():
    """At D = 2^20 float32 the fused out is within 2x of the staged (pairwise) pass's error.

    A single float32 dot over the row is about 15x worse here and 90x at 2^22
    (bench/bench_accuracy.py measures every path there against PyTorch).
    """
    rng = np.random.default_rng(1)
    x = rng.normal(1.0, 1.0, (1, 1 << 20)).astype(np.float32)
    exact = _long_double_out(x, 1e-5)
    fused = layernorm_forward_backward(x, None, None, np.ones_like(x), 1e-5).out
    staged = forward(x, eps=1e-5).out
    fused_error = float(np.max(np.abs(fused - exact)))
    staged_error = float(np.max(np.abs(staged - exact)))
    assert fused_error <= 2 * staged_error, (fused_error, staged_error)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("has_gamma", "has_beta"), AFFINE)
@pytest.mark.parametrize(("shape", "k"), [((6, 16), 1), ((3, 4, 8), 2), ((2, 3, 4, 5), 3)])
def test_matches_the_staged_pass_with_optional_affine_and_several_axes(
    dtype, has_gamma, has_beta, shape, k
):
    rng = np.random.default_rng(2)
    block = shape[len(shape) - k :]
    x = rng.normal(0.5, 2.0, shape).astype(dtype)
    dout = rng.normal(size=shape).astype(dtype)
    gamma = rng.uniform(0.5, 2.0, block).astype(dtype) if has_gamma else None
    beta = rng.normal(size=block).astype(dtype) if has_beta else None
    axis = tuple(range(-k, 0))
    fused = layernorm_forward_backward(x, gamma, beta, dout, 1e-5, block_rows=2, axis=axis)
    cache = forward(x, gamma, beta, 1e-5, axis)
    grads = backward(dout, cache)
    rtol = 1e-11 if np.dtype(dtype) == np.float64 else 1e-4
    for name in ("dgamma", "dbeta"):
        ours, expected = getattr(fused, name), getattr(grads, name)
        assert (ours is None) == (expected is None), name
        if ours is not None:
            np.testing.assert_allclose(ours, expected, rtol=rtol, atol=rtol * 10, err_msg=name)
    np.testing.assert_allclose(fused.out, cache.out, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(fused.dx, grads.dx, rtol=rtol, atol=rtol * 10)


def test_batchnorm_axes_are_refused_with_a_reason():
    x = np.arange(12.0).reshape(4, 3)
    with pytest.raises(ValueError, match="trailing axes only"):
        layernorm_forward_backward(x, None, None, np.ones_like(x), axis=0)
