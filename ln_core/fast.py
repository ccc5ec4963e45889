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
serves both out and dx. Row sums weighted by gamma or s are matrix-vector products (BLAS).
Each thread owns a contiguous span of blocks and its own partial dgamma/dbeta, added at the end;
NumPy and BLAS release the GIL inside their loops, so the spans really run at the same time.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from itertools import pairwise

import numpy as np

from ln_core.validation import check_dout, check_eps, check_input_x, check_params, numeric_guard

# Bytes of one (block_rows, D) array. Measured on (32, 128, 768) float32 with two threads:
# 128-512 rows (384 KiB-1.5 MiB) are equally fast; below that NumPy's per-call overhead
# (about 16 calls per block) dominates, above it the block falls out of L2 and the two cores
# contend for L3 and memory bandwidth.
_BLOCK_BYTES = 512 * 1024


@dataclass(frozen=True)
class FastResult:
    """out and dx have x's shape; dgamma and dbeta are (D,); all in x's dtype."""

    out: np.ndarray
    dx: np.ndarray
    dgamma: np.ndarray
    dbeta: np.ndarray


@dataclass(frozen=True)
class _Rows:
    """The problem flattened to rows: x, dout, out, dx are (N, D); gamma, beta are (D,)."""

    x: np.ndarray
    dout: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    eps: float
    out: np.ndarray
    dx: np.ndarray


def _check_count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}.")
    return int(value)


@cache
def _pool(threads: int) -> ThreadPoolExecutor:
    # Kept for the life of the process: starting threads on every call would cost more than a
    # small problem's whole run.
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="ln_core.fast")


def _spans(n_rows: int, block_rows: int, threads: int) -> list[tuple[int, int]]:
    """Split N rows into at most `threads` contiguous (start, stop) spans of whole blocks."""
    n_blocks = -(-n_rows // block_rows)
    bounds = [min(n_rows, block_rows * (n_blocks * k // threads)) for k in range(threads + 1)]
    return [(a, b) for a, b in pairwise(bounds) if b > a]


def _span(rows: _Rows, start: int, stop: int, block_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward for rows [start, stop), block by block.

    Returns this span's (dgamma, dbeta), (D,) each. Scratch: three (block_rows, D) buffers,
    reused by every block.
    """
    d, dtype = rows.x.shape[1], rows.x.dtype
    buffer_rows = min(block_rows, stop - start)
    xc_buffer, s_buffer, work_buffer = (np.empty((buffer_rows, d), dtype) for _ in range(3))
    ones_rows, ones_d = np.ones(buffer_rows, dtype), np.ones(d, dtype)
    dgamma = np.zeros(d, dtype)
    dbeta = np.zeros(d, dtype)
    # The guard is per thread: NumPy's error state does not carry over into pool threads.
    with numeric_guard("The fused LayerNorm forward and backward"):
        for first in range(start, stop, block_rows):
            block = slice(first, min(first + block_rows, stop))
            n = block.stop - block.start
            x, dout, out, dx = rows.x[block], rows.dout[block], rows.out[block], rows.dx[block]
            xc, s_gamma, work = xc_buffer[:n], s_buffer[:n], work_buffer[:n]

            np.subtract(x, (x @ ones_d / d)[:, None], out=xc)
            # (n, 1, D) @ (n, D, 1): one dot product per row, in BLAS.
            sum_sq = (xc[:, None, :] @ xc[:, :, None]).reshape(n)
            s = 1.0 / np.sqrt(sum_sq / d + rows.eps)
            np.multiply(s[:, None], rows.gamma, out=s_gamma)
            np.multiply(xc, s_gamma, out=out)
            out += rows.beta

            dbeta += ones_rows[:n] @ dout
            np.multiply(dout, xc, out=work)
            dgamma += s @ work
            sum_g = dout @ rows.gamma
            sum_g_xc = work @ rows.gamma
            # s * s before the product with s * sum_g_xc: s**3 alone overflows float32 already
            # for variances near 1e-26 (eps = 0), where the staged pass still has an answer.
            np.multiply(xc, ((s * s) * (s * sum_g_xc) / d)[:, None], out=dx)
            dx += (s * sum_g / d)[:, None]
            np.multiply(dout, s_gamma, out=work)
            np.subtract(work, dx, out=dx)
    return dgamma, dbeta


def layernorm_forward_backward(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float = 1e-5,
    block_rows: int | None = None,
    threads: int = 2,
) -> FastResult:
    """LayerNorm over the last axis and the gradients of sum(dout * out), fused.

    x, dout: (D,), (N, D) or (B, L, D); gamma, beta: (D,). Equals `forward` then `backward`
    to rounding, in x's dtype (float32 stays float32). block_rows=None picks blocks of about
    512 KiB per array; threads=1 runs in the calling thread. Raises ValueError on bad input or
    when a value is not representable (for instance a zero variance with eps = 0).
    """
    x = check_input_x(x)
    gamma, beta = check_params(x, gamma, beta)
    dout = check_dout(dout, x.shape, x.dtype)
    eps = check_eps(eps)
    threads = _check_count("threads", threads)
    d = x.shape[-1]
    if block_rows is None:
        block_rows = max(1, _BLOCK_BYTES // (d * x.itemsize))
    block_rows = _check_count("block_rows", block_rows)

    flat_x = np.ascontiguousarray(x).reshape(-1, d)
    rows = _Rows(
        x=flat_x,
        dout=np.ascontiguousarray(dout).reshape(-1, d),
        gamma=gamma,
        beta=beta,
        eps=eps,
        out=np.empty_like(flat_x),
        dx=np.empty_like(flat_x),
    )
    spans = _spans(flat_x.shape[0], block_rows, threads)
    if len(spans) == 1:
        partials = [_span(rows, *spans[0], block_rows)]
    else:
        partials = list(_pool(threads).map(lambda span: _span(rows, *span, block_rows), spans))
    return FastResult(
        out=rows.out.reshape(x.shape),
        dx=rows.dx.reshape(x.shape),
        dgamma=np.sum([dgamma for dgamma, _ in partials], axis=0, dtype=x.dtype),
        dbeta=np.sum([dbeta for _, dbeta in partials], axis=0, dtype=x.dtype),
    )
