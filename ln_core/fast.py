"""LayerNorm's forward and backward fused, on blocks of rows, on several threads.

The staged pass keeps ten full-size nodes and the closed form several full-size temporaries.
Here each full-size array is read or written once from memory (x, dout in; out, dx out) and
everything else happens on a block of rows that stays in cache. Per row, with xc = x - mean,
s = 1/sqrt(var + eps), xhat = s * xc, g = dout * gamma and sums over the last axis (D entries):

    out    = xhat * gamma + beta                     = xc * S + beta,   S = outer(s, gamma)
    dx     = s / D * (D * g - sum(g) - xhat * sum(g * xhat))
           = dout * S - (s^3 * sum(g * xc) / D) * xc - s * sum(g) / D
    dgamma = sum over rows of dout * xhat            = s @ (dout * xc)
    dbeta  = sum over rows of dout

Writing everything in xc and S, not xhat and g, saves a full pass over the block, because S
serves both out and dx. Every sum is a matrix-vector product (BLAS) on the block in cache.
The calling thread and threads - 1 pool threads claim blocks from a shared queue; NumPy and
BLAS release the GIL inside their loops, so the blocks really run at the same time. Each block
writes its own row of partial dgamma/dbeta sums, added in block order at the end.

Every row sum is a BLAS dot over at most 4096 entries, the chunks then added in float64, so
its error does not grow with D (a single dot over 2^22 float32 entries would be 60x less
accurate than PyTorch). With D = 1 the two terms of dx cancel only to rounding, times
1/sqrt(eps); dx is then set to its exact value, 0.

Why it lives in ln_core and not in bench/: it is the same math as `forward` and `backward`
(the tests hold it to them on every input), and bench/ and the tests use it as ln_core's fast
kernel. It is kept apart from the prose, as llm.c keeps its fast kernels apart from
doc/layernorm: no page imports it, and nothing in the staged graph depends on it.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import cache
from queue import Empty, SimpleQueue

import numpy as np

from ln_core.closed_form import as_half, closed_form_checked
from ln_core.validation import (
    check_dout,
    check_eps,
    check_input_x,
    check_params,
    numeric_guard,
    resolve_axis,
)

# Bytes of one (block_rows, D) array. On (32, 128, 768) float32 with two threads, blocks of
# 128-512 rows (384 KiB-1.5 MiB) are within 5% of each other, 256-341 rows the fastest:
# smaller blocks pay NumPy's per-call overhead (about 20 calls per block) more often, and above
# about 460k entries per block OpenBLAS starts threads of its own inside each matrix-vector
# product, which fight these for the same cores.
_BLOCK_BYTES = 1024 * 1024

# Entries a single BLAS dot adds up along a row. float32 BLAS accumulates in float32, so its
# error grows with the count: longer rows are cut into chunks of this many, whose sums are then
# added in float64, and the error of every row sum stays flat in D (2^22 entries included).
_CHUNK = 4096


@dataclass(frozen=True)
class FastResult:
    """out and dx have x's shape; dgamma and dbeta have gamma's shape ((D,), or the normalized
    block's), None for a skipped parameter; all in x's dtype.

    out and dx are two halves of one allocation, freed when neither is referenced.
    """

    out: np.ndarray
    dx: np.ndarray
    dgamma: np.ndarray | None
    dbeta: np.ndarray | None


@dataclass(frozen=True)
class _Problem:
    """One call's work: the inputs flattened to rows, the outputs, and the blocks not yet done.

    x, dout, out, dx: (N, D); gamma: (D,) (ones when skipped); beta: (D,) or None;
    dgamma_parts, dbeta_parts: (blocks, D), one row
    per block of `block_rows` rows; todo: the indices of blocks no thread has claimed yet.
    """

    x: np.ndarray
    dout: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray | None
    eps: float
    block_rows: int
    out: np.ndarray
    dx: np.ndarray
    dgamma_parts: np.ndarray
    dbeta_parts: np.ndarray
    todo: SimpleQueue


def _check_count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}.")
    return int(value)


@cache
def _pool(workers: int) -> ThreadPoolExecutor:
    # Kept for the life of the process: starting threads on every call would cost more than a
    # small problem's whole run.
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ln_core.fast")


def _work(p: _Problem) -> None:
    """Claim blocks until none is left: fill their rows of out and dx and their partial sums.

    Threads take blocks as they come free rather than a fixed share, so one that starts late
    (a sleeping core takes a while to wake) or runs slow (a busy machine) holds nobody up.
    Scratch: three (block_rows, D) buffers, reused by every block this thread claims.
    """
    d, dtype = p.x.shape[1], p.x.dtype
    buffer_rows = min(p.block_rows, p.x.shape[0])
    xc_buffer, s_buffer, work_buffer = (np.empty((buffer_rows, d), dtype) for _ in range(3))
    ones_rows, ones_d = np.ones(buffer_rows, dtype), np.ones(d, dtype)
    low, high = _safe_range(dtype)
    largest, gamma_size = np.finfo(dtype).max, np.max(np.abs(p.gamma))
    # The guard is per thread: NumPy's error state does not carry over into pool threads.
    with numeric_guard("The fused LayerNorm forward and backward"):
        while (index := _claim(p.todo)) is not None:
            block = slice(index * p.block_rows, (index + 1) * p.block_rows)
            x, dout, out, dx = p.x[block], p.dout[block], p.out[block], p.dx[block]
            n = x.shape[0]
            xc, s_gamma, work = xc_buffer[:n], s_buffer[:n], work_buffer[:n]
            # Every BLAS product is taken with the flags ignored and judged by its value: OpenBLAS
            # can raise the invalid flag on finite inputs it handles correctly (see
            # validation.checked_product), which would refuse a good block at random.
            # np.dot, not @: NumPy's matmul keeps the GIL for a single matrix-vector product,
            # which would make the two threads take turns.
            with np.errstate(all="ignore"):
                np.subtract(x, (_row_dot(x, ones_d) / d)[:, None], out=xc)
                np.multiply(xc, xc, out=work)
                var = _row_dot(work, ones_d) / d
                sve = var + p.eps
                s = 1.0 / np.sqrt(sve)
                # A k = 1 matrix product: BLAS writes the outer product twice as fast as
                # multiply() broadcasting one value per row.
                np.dot(s[:, None], p.gamma[None, :], out=s_gamma)
                np.multiply(dout, xc, out=work)
                sum_g = _row_dot(dout, p.gamma)
                sum_g_xc = _row_dot(work, p.gamma)
                np.dot(ones_rows[:n], dout, out=p.dbeta_parts[index])  # checked after the run
                np.dot(s, work, out=p.dgamma_parts[index])
                in_range = (
                    np.all((sve >= low) & (var <= high))  # (NaN fails both)
                    and np.max(s) * gamma_size <= largest  # so s_gamma is finite
                    and np.all(np.isfinite(sum_g) & np.isfinite(sum_g_xc))
                )
            if not in_range:
                _closed_form_block(p, index)
                continue
            np.multiply(xc, s_gamma, out=out)
            if p.beta is not None:
                out += p.beta
            # s * s before the product with s * sum_g_xc: s**3 alone overflows float32 already
            # for variances near 1e-26 (eps = 0), where the staged pass still has an answer.
            np.multiply(xc, ((s * s) * (s * sum_g_xc) / d)[:, None], out=dx)
            dx += (s * sum_g / d)[:, None]
            np.multiply(dout, s_gamma, out=work)
            np.subtract(work, dx, out=dx)


def _safe_range(dtype: np.dtype) -> tuple[np.floating, np.floating]:
    """Bounds on var + eps (low) and var (high) within which a block runs as written.

    With 2**-m <= var + eps and var <= 2**m, m = half the dtype's exponent range, no square,
    no s = 1/sqrt(var + eps) and no s**3 * sum(g * xc) leaves the range, and no variance has
    lost digits to underflow. Rows outside (huge x, tiny spreads) take the closed form, which
    rescales before squaring.
    """
    m = np.finfo(dtype).maxexp // 2
    one = dtype.type(1)
    return np.ldexp(one, -m), np.ldexp(one, m)


def _closed_form_block(p: _Problem, index: int) -> None:
    """Block `index` by the rescaling closed form: its rows of out and dx, its partial sums."""
    block = slice(index * p.block_rows, (index + 1) * p.block_rows)
    dout = p.dout[block]
    result = closed_form_checked(p.x[block], p.gamma, p.beta, dout, p.eps, (-1,))
    p.out[block], p.dx[block] = result.out, result.dx
    p.dgamma_parts[index] = result.dgamma
    p.dbeta_parts[index] = np.sum(dout, axis=0) if result.dbeta is None else result.dbeta


def _row_dot(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """a @ v for a block of rows a (n, D) and v (D,): (n,), with an error flat in D."""
    d = a.shape[1]
    if d <= _CHUNK:
        return np.dot(a, v)
    starts = range(0, d, _CHUNK)
    parts = np.empty((len(starts), a.shape[0]), a.dtype)
    for k, start in enumerate(starts):
        np.dot(a[:, start : start + _CHUNK], v[start : start + _CHUNK], out=parts[k])
    return parts.sum(axis=0, dtype=np.float64).astype(a.dtype)


def _claim(todo: SimpleQueue) -> int | None:
    """The next unclaimed block index, or None when all are taken."""
    try:
        return todo.get_nowait()
    except Empty:
        return None


def _run(p: _Problem, threads: int) -> None:
    """_work on the calling thread and threads - 1 pool threads, until every block is done."""
    helpers = [_pool(threads - 1).submit(_work, p) for _ in range(threads - 1)]
    try:
        _work(p)
    finally:
        # After an error here, empty the queue so the helpers stop after their current block.
        while _claim(p.todo) is not None:
            pass
        # A helper still waiting for a pool thread (busy with another call) has nothing to do.
        for helper in helpers:
            helper.cancel()
        wait(helpers)
    for helper in helpers:
        if not helper.cancelled():
            helper.result()  # re-raises a helper's ValueError


def layernorm_forward_backward(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    dout: np.ndarray,
    eps: float = 1e-5,
    block_rows: int | None = None,
    threads: int = 2,
    axis: int | tuple[int, ...] | None = None,
) -> FastResult:
    """LayerNorm over the trailing `axis` and the gradients of sum(dout * out), fused.

    x, dout: (D,), (N, D) or (B, L, D); gamma, beta: (D,), or the block's shape when several
    trailing axes are normalized (each block is then one row of P entries), or None to skip.
    axis=None follows gamma's shape (PyTorch's normalized_shape), else the last axis.
    Equals `forward` then `backward` to rounding, in x's dtype (float32 stays float32, float16
    is computed in float32 and returned in float16), and the result is the same for any
    `threads` and from run to run. A block whose variances are out of the range where the
    fused formulas are safe (see `_safe_range`) is computed by the rescaling closed form, so
    any finite x whose normalization is defined has an answer. block_rows=None picks blocks of
    about 1 MiB per array; threads counts the calling thread, so threads=1 uses no other.
    Raises ValueError on bad input, a zero variance with eps = 0, or a result out of range.
    """
    # x and dout are not scanned for NaN and inf up front (that pass alone costs half of
    # PyTorch's whole time here): a non-finite entry makes the dgamma/dbeta sums non-finite or
    # trips the numeric guard, and only then are the inputs scanned, for the message.
    half = np.asarray(x).dtype == np.float16
    x = check_input_x(x, finite=False)
    axis = resolve_axis(axis, x, gamma, beta)
    if axis != tuple(range(-len(axis), 0)):
        raise ValueError(
            f"The fused kernel normalizes over trailing axes only (LayerNorm), not axis {axis}; "
            "use forward and backward for BatchNorm's view."
        )
    gamma, beta = check_params(x, gamma, beta, axis)
    dout = check_dout(dout, x.shape, x.dtype, finite=False)
    eps = check_eps(eps)
    threads = _check_count("threads", threads)
    param_shape = x.shape[x.ndim - len(axis) :]
    d = math.prod(param_shape)
    if block_rows is None:
        block_rows = max(1, _BLOCK_BYTES // (d * x.itemsize))
    block_rows = _check_count("block_rows", block_rows)

    flat_x = np.ascontiguousarray(x).reshape(-1, d)
    n_blocks = -(-flat_x.shape[0] // block_rows)
    # One allocation for both outputs. glibc (by default) sets its mmap threshold to the largest
    # block freed and trims the heap once twice that is free at its top: freeing out and dx
    # separately hits exactly that, so every call would fault in fresh pages. One block of
    # both stays in the heap and is reused by the next call.
    out, dx = np.empty((2, *flat_x.shape), x.dtype)
    todo: SimpleQueue = SimpleQueue()
    for index in range(n_blocks):
        todo.put(index)
    problem = _Problem(
        x=flat_x,
        dout=np.ascontiguousarray(dout).reshape(-1, d),
        gamma=np.ones(d, x.dtype) if gamma is None else gamma.reshape(-1),
        beta=None if beta is None else beta.reshape(-1),
        eps=eps,
        block_rows=block_rows,
        out=out,
        dx=dx,
        dgamma_parts=np.empty((n_blocks, d), x.dtype),
        dbeta_parts=np.empty((n_blocks, d), x.dtype),
        todo=todo,
    )
    try:
        _run(problem, min(threads, n_blocks))
    except ValueError:
        _check_finite(x, dout)  # a NaN or inf input is the better explanation
        raise
    # Summing the per-block partials in block order makes the result independent of which
    # thread did which block: the same inputs give the same bits for any thread count.
    dgamma, dbeta = problem.dgamma_parts.sum(axis=0), problem.dbeta_parts.sum(axis=0)
    if d == 1:
        # One entry per row: x - mean(x) is exactly 0, so out = beta and dx = 0 whatever x is.
        # The formula's two terms cancel only to rounding, times 1/sqrt(eps): say it exactly.
        problem.dx.fill(0)
    if not (np.isfinite(dgamma).all() and np.isfinite(dbeta).all()):
        _check_finite(x, dout)
        raise ValueError(
            "The fused LayerNorm produced a non-finite gradient from finite inputs; rescale them."
        )
    result = FastResult(
        out=problem.out.reshape(x.shape),
        dx=problem.dx.reshape(x.shape),
        dgamma=None if gamma is None else dgamma.reshape(param_shape),
        dbeta=None if beta is None else dbeta.reshape(param_shape),
    )
    return as_half(result) if half else result


def _check_finite(x: np.ndarray, dout: np.ndarray) -> None:
    """Raise the input checks' own ValueError if x or dout holds a NaN or an inf.

    Every NaN or inf input reaches dgamma or dbeta (0 * NaN is NaN) or trips the numeric guard,
    so looking only after such a sign misses none of them.
    """
    check_input_x(x)
    check_dout(dout, x.shape, x.dtype)
