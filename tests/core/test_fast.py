"""ln_core.fast: the fused, blocked, threaded forward + backward equals the staged passes."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ln_core import backward, forward
from ln_core.fast import FastResult, layernorm_forward_backward

# Relative to each tensor's natural scale (below): a few hundred roundings of the dtype.
RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-5}


def make_inputs(shape: tuple[int, ...], dtype: type, seed: int = 0, offset: float = 0.0):
    rng = np.random.default_rng(seed)
    d = shape[-1]
    x = rng.normal(offset, 2.0, shape).astype(dtype)
    gamma = rng.normal(1.0, 0.5, d).astype(dtype)
    beta = rng.normal(0.0, 0.5, d).astype(dtype)
    dout = rng.normal(0.0, 1.0, shape).astype(dtype)
    return x, gamma, beta, dout


def assert_matches_staged(result: FastResult, x, gamma, beta, dout, eps: float) -> None:
    cache = forward(x, gamma, beta, eps)
    grads = backward(dout, cache)
    rtol = RTOL[cache.dtype]
    rows = tuple(range(cache.x.ndim - 1))
    dout = grads.dout
    # Sizes of the terms each result is summed from, so a result that cancels to about 0
    # (dx for D = 1) is held to the precision of its terms, not to its own tiny size.
    for name, actual, expected, terms in (
        ("out", result.out, cache.out, np.abs(cache.gx) + np.abs(cache.beta)),
        ("dx", result.dx, grads.dx, np.abs(cache.inv_sqrt_sve * grads.dnormalized_x)),
        ("dgamma", result.dgamma, grads.dgamma, np.sum(np.abs(dout * cache.normalized_x), rows)),
        ("dbeta", result.dbeta, grads.dbeta, np.sum(np.abs(dout), rows)),
    ):
        assert actual.dtype == cache.dtype, name
        assert actual.shape == expected.shape, name
        scale = float(np.max(terms))
        error = float(np.max(np.abs(actual.astype(np.float64) - expected)))
        assert error <= rtol * scale, f"{name}: {error:.3e} > {rtol:g} * {scale:.3e}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    ("shape", "block_rows", "threads"),
    [
        ((7,), None, 2),
        ((5, 16), 2, 2),
        ((37, 24), 8, 2),  # 37 rows: the last block has 5
        ((3, 37, 24), 8, 3),
        ((3, 37, 24), 1000, 2),  # one block: the second thread gets nothing
        ((2, 5, 64), 3, 1),
        ((64, 768), None, 2),
    ],
)
def test_matches_staged_forward_and_backward(dtype, shape, block_rows, threads):
    x, gamma, beta, dout = make_inputs(shape, dtype)
    result = layernorm_forward_backward(
        x, gamma, beta, dout, block_rows=block_rows, threads=threads
    )
    assert_matches_staged(result, x, gamma, beta, dout, 1e-5)


def test_same_bits_for_any_thread_count_and_every_run():
    x, gamma, beta, dout = make_inputs((6, 10, 32), np.float32, seed=1)
    runs = [
        layernorm_forward_backward(x, gamma, beta, dout, block_rows=7, threads=threads)
        for threads in (1, 2, 4, 2, 2)
    ]
    assert_matches_staged(runs[0], x, gamma, beta, dout, 1e-5)
    for run in runs[1:]:
        for name in ("out", "dx", "dgamma", "dbeta"):
            np.testing.assert_array_equal(getattr(run, name), getattr(runs[0], name), name)


def test_concurrent_calls_share_the_pool():
    cases = [make_inputs((50, 16), np.float64, seed=seed) for seed in range(8)]
    with ThreadPoolExecutor(4) as callers:
        results = list(
            callers.map(lambda case: layernorm_forward_backward(*case, block_rows=3), cases)
        )
    for result, case in zip(results, cases, strict=True):
        assert_matches_staged(result, *case, 1e-5)


def test_large_offset_and_large_eps():
    x, gamma, beta, dout = make_inputs((9, 33), np.float64, seed=2, offset=1e3)
    result = layernorm_forward_backward(x, gamma, beta, dout, eps=0.5, block_rows=4)
    assert_matches_staged(result, x, gamma, beta, dout, 0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_d_equal_one_with_eps(dtype):
    # Every vector is a single number: it normalizes to 0, so out = beta and dx = 0.
    x, gamma, beta, dout = make_inputs((6, 1), dtype, seed=3)
    result = layernorm_forward_backward(x, gamma, beta, dout, eps=1e-3, block_rows=4)
    np.testing.assert_array_equal(result.out, np.broadcast_to(beta, x.shape))
    np.testing.assert_allclose(result.dx, 0.0, atol=1e-6)
    assert_matches_staged(result, x, gamma, beta, dout, 1e-3)


def test_eps_zero_with_nonzero_variance():
    x, gamma, beta, dout = make_inputs((4, 8), np.float64, seed=4)
    result = layernorm_forward_backward(x, gamma, beta, dout, eps=0.0)
    assert_matches_staged(result, x, gamma, beta, dout, 0.0)


def test_non_contiguous_and_integer_inputs():
    x, gamma, beta, dout = make_inputs((16, 12), np.float64, seed=5)
    result = layernorm_forward_backward(x.T.copy().T, gamma, beta, dout[::1])
    assert_matches_staged(result, x, gamma, beta, dout, 1e-5)
    whole = np.arange(12).reshape(3, 4)
    ints = layernorm_forward_backward(whole, [1, 2, 3, 4], [0, 0, 0, 0], np.ones((3, 4), int))
    assert ints.out.dtype == np.float64
    assert_matches_staged(ints, whole, [1, 2, 3, 4], [0, 0, 0, 0], np.ones((3, 4)), 1e-5)


def test_inputs_are_not_modified():
    x, gamma, beta, dout = make_inputs((10, 16), np.float32, seed=6)
    copies = [a.copy() for a in (x, gamma, beta, dout)]
    layernorm_forward_backward(x, gamma, beta, dout, block_rows=3)
    for before, after in zip(copies, (x, gamma, beta, dout), strict=True):
        np.testing.assert_array_equal(before, after)


def good_inputs() -> dict:
    x, gamma, beta, dout = make_inputs((4, 6), np.float64, seed=7)
    return {"x": x, "gamma": gamma, "beta": beta, "dout": dout}


def _with(array: np.ndarray, index: tuple[int, ...], value: float) -> np.ndarray:
    changed = array.copy()
    changed[index] = value
    return changed


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"x": np.array([[1.0, np.nan, 2.0, 3.0, 4.0, 5.0]] * 4)}, "x contains NaN"),
        ({"x": 3.0}, "single number"),
        ({"x": np.array([["a"] * 6] * 4)}, "x must contain numbers"),
        ({"gamma": np.ones(5)}, "gamma has shape"),
        ({"beta": np.ones((4, 6))}, "beta has shape"),
        ({"dout": np.ones((4, 5))}, "dout has shape"),
        ({"dout": np.full((4, 6), np.inf)}, "dout contains an infinite value"),
        # The kernel scans x and dout only when its sums come out non-finite or its guard
        # trips: one bad entry anywhere must still be found and named.
        ({"x": _with(good_inputs()["x"], (3, 5), np.inf)}, "x contains an infinite value"),
        ({"x": _with(good_inputs()["x"], (2, 0), -np.inf)}, "x contains an infinite value"),
        ({"dout": _with(good_inputs()["dout"], (1, 4), np.nan)}, "dout contains NaN"),
        ({"dout": _with(np.zeros((4, 6)), (0, 0), np.nan)}, "dout contains NaN"),
        ({"eps": -1e-5}, "eps must be >= 0"),
        ({"block_rows": 0}, "block_rows must be a whole number"),
        ({"block_rows": 2.5}, "block_rows must be a whole number"),
        ({"threads": 0}, "threads must be a whole number"),
        ({"threads": True}, "threads must be a whole number"),
    ],
)
def test_bad_input_raises_value_error(change, message):
    with pytest.raises(ValueError, match=message):
        layernorm_forward_backward(**{**good_inputs(), **change})


@pytest.mark.parametrize("threads", [1, 2])
def test_zero_variance_without_eps_raises_value_error(threads):
    arguments = good_inputs()
    arguments["x"] = arguments["x"].copy()
    arguments["x"][1:] = 7.0  # every block but the first: whichever thread claims one fails
    with pytest.raises(ValueError, match="variance"):
        layernorm_forward_backward(**arguments, eps=0.0, block_rows=1, threads=threads)


def test_an_output_beyond_the_range_raises_value_error():
    arguments = {k: v.astype(np.float32) for k, v in good_inputs().items()}
    arguments["gamma"] = np.full(6, 1e38, np.float32)  # out = gamma * xhat with |xhat| up to 2
    with pytest.raises(ValueError, match="not representable"):
        layernorm_forward_backward(**arguments)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_flag_raised_inside_blas_does_not_refuse_a_good_block(blas_raising_invalid, threads):
    """The CI failure of 2026-11-25: x of shape (2, 5) in float32, eps = 0, refused once with
    "invalid value encountered in dot" and answered on the replay. Every product is judged by
    its value, so the flag changes nothing, on the calling thread and the pool's alike."""
    x, gamma, beta, dout = make_inputs((64, 5), np.float32)
    result = layernorm_forward_backward(
        x, gamma, beta, dout, eps=0.0, block_rows=8, threads=threads
    )
    assert_matches_staged(result, x, gamma, beta, dout, 0.0)
