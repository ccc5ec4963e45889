"""Numerical gradients by central differences, for every element, without re-running the batch.

The loss is L = sum(dout * out). Two facts of the graph keep this cheap:
- perturbing x_j changes only the group it belongs to (its vector, or its block when several
  axes are normalized), so each group is perturbed as a stack of copies (one per element) and
  only that stack is normalized again;
- gamma_j and beta_j only touch output column j, so shifting all of gamma (or beta) at once by
  +h and -h gives every column's difference in two forward passes (out is linear in them, so
  their step is raised to at least cbrt(machine eps) times their size when h is smaller).
Each difference is divided by the step actually taken ((x + h) - (x - h) in the working dtype),
which matters in float32 where x + h rounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ln_core.backward import Grads, param_axes, times_gamma
from ln_core.forward import Cache, forward
from ln_core.validation import check_dout, numeric_guard

# Cap on the elements of one perturbed stack (1 MiB in float64): every node of the stack's
# forward pass is an array this size, so a class's checks at once stay small in a server's
# memory (2^21 made the Stepper's last step peak at 146 MB), and a stack this size stays in
# the processor's cache, which made the checks no slower (bench/bench_server_memory.py).
_STACK_ELEMENTS = 1 << 17

# Entries normalized in all, x.size copies of a group of P each: at the 5-30 million a
# second measured on a busy 2-core machine, this many take a few seconds (the app's largest,
# 4096 entries at D = 512, need 2 million).
MAX_EVALUATIONS = 1 << 24


def check_h(h: float) -> float:
    """Return h as a float after checking it is a positive finite step."""
    try:
        h = float(h)
    except (TypeError, ValueError):
        raise ValueError(f"The finite-difference step h must be a number, got {h!r}.") from None
    if not np.isfinite(h) or h <= 0:
        raise ValueError(f"The finite-difference step h must be a positive number, got {h}.")
    return h


def perturbed_copies(
    rows: np.ndarray, h: float | np.ndarray, columns: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacks of copies of rows (G, K) with one element moved by +h and by -h.

    Copy c of row g has element columns[c] moved (all K elements when columns is None), so
    plus and minus are (G, C, K). h is one step or one per element, (K,). Also returns the step
    actually taken, (G, C): (x + h) - (x - h) after rounding in the rows' dtype.
    """
    k = rows.shape[-1]
    columns = np.arange(k) if columns is None else columns
    hot = np.arange(k) == columns[:, None]
    shift = np.broadcast_to(np.asarray(h, dtype=rows.dtype), (k,))[columns]
    plus = np.where(hot, rows[:, None, :] + shift[:, None], rows[:, None, :])
    minus = np.where(hot, rows[:, None, :] - shift[:, None], rows[:, None, :])
    step = (rows[:, columns] + shift) - (rows[:, columns] - shift)
    return plus, minus, step


def copies_per_chunk(copy_size: int) -> int:
    """How many perturbed copies of `copy_size` elements to evaluate at once within the cap."""
    return max(1, _STACK_ELEMENTS // max(1, copy_size))


def to_rows(a: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """a with the normalized axes moved last and flattened: (groups, P), one group per row."""
    k = len(axis)
    moved = np.moveaxis(a, axis, tuple(range(-k, 0)))
    return moved.reshape(-1, math.prod(moved.shape[moved.ndim - k :]))


def from_rows(rows: np.ndarray, like: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """Undo `to_rows`: rows (groups, P) back to the shape and axis order of `like`."""
    k = len(axis)
    moved_shape = np.moveaxis(like, axis, tuple(range(-k, 0))).shape
    return np.moveaxis(rows.reshape(moved_shape), tuple(range(-k, 0)), axis)


def _numerical_dx(cache: Cache, dout: np.ndarray, h: float) -> np.ndarray:
    """dL/dx, x's shape: every group perturbed as a stack of copies, normalized on its own.

    A group normalized over several axes is one vector of P entries to LayerNorm, so each is
    flattened to a row (P,).
    """
    rows_x = to_rows(cache.x, cache.axis)
    k = rows_x.shape[-1]
    # Only normalized_x depends on x: gamma scales its change and beta cancels in the difference.
    weight = to_rows(times_gamma(dout, cache), cache.axis)
    grad = np.empty_like(rows_x)
    # A stack holds whole groups' copies while they fit under the cap, else part of one
    # group's: a group of D = 1024 has a million entries in its copies.
    groups = copies_per_chunk(k * k)
    copies = min(k, copies_per_chunk(k))
    for start in range(0, rows_x.shape[0], groups):
        block = slice(start, start + groups)
        for first in range(0, k, copies):
            columns = np.arange(first, min(k, first + copies))
            plus, minus, step = perturbed_copies(rows_x[block], h, columns)
            change = (
                forward(plus, eps=cache.eps).normalized_x
                - forward(minus, eps=cache.eps).normalized_x
            )
            # A product, not np.einsum: einsum reports no floating-point flags, and a verdict
            # must see where dout * change underflows (ln_core.validation.underflowed).
            weighted = change * weight[block][:, None, :]
            grad[block, columns] = np.sum(weighted, axis=-1) / step
    return from_rows(grad, cache.x, cache.axis)


def check_size(cache: Cache) -> None:
    """Refuse an x whose numerical gradient could not finish in a few seconds, naming its size.

    Each of x's entries is moved on its own and its whole group (P entries) normalized again,
    so the work grows as x.size * P.
    """
    evaluations = cache.x.size * cache.n
    if evaluations > MAX_EVALUATIONS:
        raise ValueError(
            f"The numerical gradient moves each of x's {cache.x.size:,} entries on its own and "
            f"normalizes its group of {cache.n:,} again: {evaluations:,} evaluations for x of "
            f"shape {cache.x.shape}, more than the {MAX_EVALUATIONS:,} that finish in a few "
            "seconds. Use fewer vectors or a smaller D."
        )


def parameter_step(cache: Cache, h: float) -> float:
    """The step for gamma and beta: h, raised to at least cbrt(machine eps) times their size.

    out is linear in them, so the step only has to survive rounding. (h is sized for x; for an
    x with a tiny spread it is so small that gamma + h == gamma and the difference would be
    0 / 0.)
    """
    sizes = [float(np.max(np.abs(p))) for p in (cache.gamma, cache.beta) if p is not None]
    unit = max([1.0, *sizes])
    return max(h, float(np.cbrt(np.finfo(cache.dtype).eps)) * unit)


def _numerical_params(
    cache: Cache, dout: np.ndarray, h: float
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """dL/dgamma, dL/dbeta (their shape; None if skipped): all of one shifted at once."""
    axes = param_axes(cache.x.ndim, cache.param_ndim)
    step = parameter_step(cache, h)

    def derivative(name: str) -> np.ndarray | None:
        value = getattr(cache, name)
        if value is None:
            return None
        shift = np.full_like(value, step)
        outs = [
            forward(cache.x, eps=cache.eps, axis=cache.axis, **params).out
            for params in (
                {"gamma": cache.gamma, "beta": cache.beta, name: value + shift},
                {"gamma": cache.gamma, "beta": cache.beta, name: value - shift},
            )
        ]
        return np.sum(dout * (outs[0] - outs[1]), axis=axes) / ((value + shift) - (value - shift))

    return derivative("gamma"), derivative("beta")


def numerical_gradients(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    dout: np.ndarray,
    eps: float = 1e-5,
    h: float = 1e-5,
    axis: int | tuple[int, ...] | None = None,
) -> Grads:
    """Central-difference gradients of sum(dout * out) for EVERY element of x, gamma and beta.

    Shapes as in `forward`; dout has x's shape. Computed in x's dtype. Returns Grads with dx
    (x's shape), dgamma and dbeta (their parameter's shape, or None when it is skipped).
    """
    cache = forward(x, gamma, beta, eps, axis)
    dout = check_dout(dout, cache.x.shape, cache.dtype)
    h = check_h(h)
    check_size(cache)
    with numeric_guard("The numerical gradient"):
        dx = _numerical_dx(cache, dout, h)
        dgamma, dbeta = _numerical_params(cache, dout, h)
    return Grads(dx=dx, dgamma=dgamma, dbeta=dbeta)


def central_difference(
    loss: Callable[[np.ndarray], float], value: np.ndarray, h: float
) -> np.ndarray:
    """Generic dloss/dvalue, one element at a time; value's shape.

    For small models only (the residual block); the LayerNorm checks above use the graph's
    structure instead of this loop.
    """
    h = check_h(h)
    value = np.array(value, copy=True)
    grad = np.empty_like(value)
    flat, grad_flat = value.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        original = flat[i]
        flat[i] = original + h
        plus_step, loss_plus = flat[i], loss(value)
        flat[i] = original - h
        minus_step, loss_minus = flat[i], loss(value)
        flat[i] = original
        grad_flat[i] = (loss_plus - loss_minus) / (plus_step - minus_step)
    return grad
