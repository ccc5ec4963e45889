"""Comparing analytic gradients with numerical ones: the error measure, the step, the verdict.

Tolerances depend on the dtype because a central difference in float32 has only about
7 significant digits to work with:

| dtype   | pass if error <= | good     | suspicious | wrong  | step h                            |
|---------|------------------|----------|------------|--------|-----------------------------------|
| float64 | 1e-6             | <= 1e-7  | <= 1e-4    | > 1e-4 | sigma * cbrt(2.2e-16 * max(1, r)) |
| float32 | 1e-2             | <= 1e-3  | <= 1e-1    | > 1e-1 | sigma * cbrt(1.2e-7 * max(1, r))  |

with r = max|x| / sigma; 2.2e-16 and 1.2e-7 are the dtypes' machine epsilons.
sigma is the median of sqrt(var + eps) over the vectors. The step balances truncation error
(about (h / sigma)^2) against round-off (about machine_eps * max|x| / h): the cube root is the
classic optimum for central differences, and the max|x| / sigma factor widens h when a large
common offset leaves fewer digits for the deviations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.backward import Grads, backward
from ln_core.closed_form import closed_form_backward
from ln_core.forward import Cache, forward
from ln_core.numerical import check_h, numerical_gradients

# (pass tolerance, good up to, suspicious up to) per dtype; see the table above.
TOLERANCES = {
    np.dtype(np.float64): (1e-6, 1e-7, 1e-4),
    np.dtype(np.float32): (1e-2, 1e-3, 1e-1),
}
TENSORS = ("dx", "dgamma", "dbeta")


def rel_error(analytic: np.ndarray, numerical: np.ndarray) -> float:
    """max |a - n| / max(1e-12, max(|a| + |n|)): one number per tensor, scale-free.

    The denominator is the tensor's largest |a| + |n|, not each element's own, so an entry whose
    true gradient is near 0 cannot blow the ratio up with pure round-off.
    """
    a = np.asarray(analytic, dtype=np.float64)
    n = np.asarray(numerical, dtype=np.float64)
    return float(np.max(np.abs(a - n)) / max(1e-12, float(np.max(np.abs(a) + np.abs(n)))))


def elementwise_rel_error(analytic: np.ndarray, numerical: np.ndarray) -> np.ndarray:
    """|a - n| / max(1e-12, |a| + |n|) per element, for tables (same shape as the inputs)."""
    a = np.asarray(analytic, dtype=np.float64)
    n = np.asarray(numerical, dtype=np.float64)
    return np.abs(a - n) / np.maximum(1e-12, np.abs(a) + np.abs(n))


def tolerance(dtype: np.dtype) -> float:
    """The relative error at or below which a gradient check passes for this dtype."""
    return TOLERANCES[np.dtype(dtype)][0]


def band(error: float, dtype: np.dtype) -> str:
    """'good', 'suspicious' or 'wrong' for a relative error in this dtype."""
    _, good, suspicious = TOLERANCES[np.dtype(dtype)]
    return "good" if error <= good else "suspicious" if error <= suspicious else "wrong"


def default_h(cache: Cache) -> float:
    """The documented step rule (module docstring), from the forward pass's own numbers."""
    machine_eps = float(np.finfo(cache.dtype).eps)
    sigma = float(np.median(cache.sqrt_sve))
    spread = max(1.0, float(np.max(np.abs(cache.x))) / sigma)
    return sigma * float(np.cbrt(machine_eps * spread))


@dataclass(frozen=True)
class GradientCheck:
    """The outcome of comparing backward and closed form with central differences.

    errors[method][tensor] is rel_error against the numerical gradient, for method in
    ("backward", "closed_form") and tensor in ("dx", "dgamma", "dbeta").
    """

    analytic: Grads
    closed_form: Grads
    numerical: Grads
    errors: dict[str, dict[str, float]]
    h: float
    tolerance: float
    dtype: np.dtype

    @property
    def max_error(self) -> float:
        return max(e for per in self.errors.values() for e in per.values())

    @property
    def passed(self) -> bool:
        return self.max_error <= self.tolerance

    def band(self, method: str, tensor: str) -> str:
        return band(self.errors[method][tensor], self.dtype)


def compare(analytic: Grads, numerical: Grads) -> dict[str, float]:
    """rel_error per tensor (dx, dgamma, dbeta)."""
    return {t: rel_error(getattr(analytic, t), getattr(numerical, t)) for t in TENSORS}


def gradient_check(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float = 1e-5,
    h: float | None = None,
    axis: int = -1,
) -> GradientCheck:
    """Check backward and closed_form_backward against numerical_gradients.

    Shapes as in `forward`; dout has x's shape. h=None picks the step by `default_h`.
    """
    cache = forward(x, gamma, beta, eps, axis)
    step = default_h(cache) if h is None else check_h(h)
    analytic = backward(dout, cache)
    closed = closed_form_backward(dout, cache)
    numerical = numerical_gradients(cache.x, cache.gamma, cache.beta, dout, eps, step, axis)
    return GradientCheck(
        analytic=analytic,
        closed_form=closed,
        numerical=numerical,
        errors={
            "backward": compare(analytic, numerical),
            "closed_form": compare(closed, numerical),
        },
        h=step,
        tolerance=tolerance(cache.dtype),
        dtype=cache.dtype,
    )
