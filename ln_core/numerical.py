"""Numerical gradients by central differences, for every element, without re-running the batch.

The loss is L = sum(dout * out). Two facts of the graph keep this cheap:
- perturbing x_j changes only the vector it belongs to, so each vector is perturbed as a stack
  of D copies (one per element) and only that stack is normalized again;
- gamma_j and beta_j only touch output column j, so shifting all of gamma (or beta) at once by
  +h and -h gives every column's difference in two forward passes (out is linear in them, so
  their step is raised to at least cbrt(machine eps) times their size when h is smaller).
Each difference is divided by the step actually taken ((x + h) - (x - h) in the working dtype),
which matters in float32 where x + h rounds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ln_core.backward import Grads, param_axes
from ln_core.forward import Cache, forward
from ln_core.validation import check_dout, numeric_guard

# Cap on the elements of one perturbed stack, so memory stays small for large batches.
_STACK_ELEMENTS = 1 << 21


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


def _numerical_dx(cache: Cache, dout: np.ndarray, h: float) -> np.ndarray:
    """dL/dx, x's shape: every vector perturbed as a stack of copies, normalized on its own."""
    rows_x = np.moveaxis(cache.x, cache.axis, -1)
    moved_shape = rows_x.shape
    k = moved_shape[-1]
    rows_x = rows_x.reshape(-1, k)
    # Only normalized_x depends on x: gamma scales its change and beta cancels in the difference.
    weight = np.moveaxis(dout * cache.gamma, cache.axis, -1).reshape(-1, k)
    ones, zeros = np.ones(k, cache.dtype), np.zeros(k, cache.dtype)
    grad = np.empty_like(rows_x)
    chunk = copies_per_chunk(k * k)
    for start in range(0, rows_x.shape[0], chunk):
        block = slice(start, start + chunk)
        plus, minus, step = perturbed_copies(rows_x[block], h)
        change = (
            forward(plus, ones, zeros, cache.eps).normalized_x
            - forward(minus, ones, zeros, cache.eps).normalized_x
        )
        grad[block] = np.einsum("gck,gk->gc", change, weight[block]) / step
    return np.moveaxis(grad.reshape(moved_shape), -1, cache.axis)


def _numerical_params(cache: Cache, dout: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """dL/dgamma, dL/dbeta, (D,) each: all of gamma (or beta) shifted at once, column by column."""
    axes = param_axes(cache.x.ndim)
    # out is linear in gamma and beta, so the step only has to survive rounding: at least
    # cbrt(machine eps) times their size. (h is sized for x; for an x with a tiny spread it is
    # so small that gamma + h == gamma and the difference would be 0 / 0.)
    unit = max(1.0, float(np.max(np.abs(cache.gamma))), float(np.max(np.abs(cache.beta))))
    step = max(h, float(np.cbrt(np.finfo(cache.dtype).eps)) * unit)
    shift = np.full_like(cache.gamma, step)
    zero = np.zeros_like(shift)

    def column_difference(gamma_shift: np.ndarray, beta_shift: np.ndarray) -> np.ndarray:
        plus = forward(
            cache.x, cache.gamma + gamma_shift, cache.beta + beta_shift, cache.eps, cache.axis
        ).out
        minus = forward(
            cache.x, cache.gamma - gamma_shift, cache.beta - beta_shift, cache.eps, cache.axis
        ).out
        return np.sum(dout * (plus - minus), axis=axes)

    dgamma = column_difference(shift, zero) / ((cache.gamma + shift) - (cache.gamma - shift))
    dbeta = column_difference(zero, shift) / ((cache.beta + shift) - (cache.beta - shift))
    return dgamma, dbeta


def numerical_gradients(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float = 1e-5,
    h: float = 1e-5,
    axis: int = -1,
) -> Grads:
    """Central-difference gradients of sum(dout * out) for EVERY element of x, gamma and beta.

    Shapes as in `forward`; dout has x's shape. Computed in x's dtype. Returns Grads with dx
    (x's shape), dgamma and dbeta (D,).
    """
    cache = forward(x, gamma, beta, eps, axis)
    dout = check_dout(dout, cache.x.shape, cache.dtype)
    h = check_h(h)
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
