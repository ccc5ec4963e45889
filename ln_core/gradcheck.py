"""Comparing analytic gradients with numerical ones: the error measure, the step, the verdict.

Tolerances depend on the dtype because a central difference in float32 has only about
7 significant digits to work with:

| dtype   | pass if error <= | tiny     | small      | large  | step h                            |
|---------|------------------|----------|------------|--------|-----------------------------------|
| float64 | 1e-6             | <= 1e-7  | <= 1e-4    | > 1e-4 | sigma * cbrt(2.2e-16 * max(1, r)) |
| float32 | 1e-2             | <= 1e-3  | <= 1e-1    | > 1e-1 | sigma * cbrt(1.2e-7 * max(1, r))  |

with r = max|x| / sigma; 2.2e-16 and 1.2e-7 are the dtypes' machine epsilons.
sigma is the median of sqrt(var + eps) over the vectors. The step balances truncation error
(about (h / sigma)^2) against round-off (about machine_eps * max|x| / h): the cube root is the
classic optimum for central differences, and the max|x| / sigma factor widens h when a large
common offset leaves fewer digits for the deviations. The step is never below 4 units in the
last place of max|x|, so x + h and x - h always differ.

A small error is not the only way to be right: where the exact gradient is below what central
differences can resolve at this step (D = 2, where dx is of the order of eps; eps = 0 with a
vector whose dx is exactly 0), the numerical gradient is pure round-off and no tolerance can
compare with it. Each tensor is then reported "cannot resolve", with advice, rather than "fail":
a check that cries wolf teaches students to ignore it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.backward import Grads, backward, param_axes, times_gamma
from ln_core.closed_form import closed_form_backward
from ln_core.forward import Cache, forward
from ln_core.numerical import check_h, numerical_gradients, parameter_step, to_rows
from ln_core.validation import check_dout

# (pass tolerance, tiny up to, small up to) per dtype; see the table above. The bands
# describe one entry's error, in words other than a verdict's: a tensor passes or fails as a
# whole, and an entry whose true gradient is near 0 may show a large error in a passing tensor.
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
    """'tiny', 'small' or 'large' for a relative error in this dtype."""
    _, tiny, small = TOLERANCES[np.dtype(dtype)]
    return "tiny" if error <= tiny else "small" if error <= small else "large"


def default_h(cache: Cache) -> float:
    """The documented step rule (module docstring), from the forward pass's own numbers.

    Never below 4 units in the last place of the largest |x|, so x + h and x - h always differ
    (a single feature, D = 1, has sigma = sqrt(eps), which can be far below x's own spacing).
    """
    machine_eps = float(np.finfo(cache.dtype).eps)
    largest = float(np.max(np.abs(cache.x)))
    sigma = float(np.median(cache.sqrt_sve))
    spread = max(1.0, largest / sigma)
    floor = 4 * float(np.spacing(cache.dtype.type(largest)))
    return max(sigma * float(np.cbrt(machine_eps * spread)), floor)


def _group_sums(a: np.ndarray, cache: Cache) -> np.ndarray:
    """sum |a| over each normalized group, (groups, 1), in float64."""
    return np.sum(np.abs(to_rows(a, cache.axis).astype(np.float64)), axis=1, keepdims=True)


def _group_max(a: np.ndarray, cache: Cache) -> np.ndarray:
    return np.max(np.abs(to_rows(a, cache.axis).astype(np.float64)), axis=1, keepdims=True)


def _dx_resolution(cache: Cache, dout: np.ndarray, h: float) -> float:
    """How far a central-difference dx may sit from the exact one at step h (absolute).

    Per group, with s = 1/sqrt(var + eps), M = its largest |x| and w = dout * gamma:
    round-off: each normalized_x carries about machine_eps * (s * M + max|normalized_x|) of
    error (M because x - mean cancels its leading digits), summed with weights |w| and divided
    by the step; truncation: (h s)^2 times dx's natural size s * sum|w|.
    """
    machine_eps = float(np.finfo(cache.dtype).eps)
    s = to_rows(cache.inv_sqrt_sve, cache.axis).astype(np.float64)
    weight = _group_sums(times_gamma(dout, cache), cache)
    wobble = machine_eps * (s * _group_max(cache.x, cache) + _group_max(cache.normalized_x, cache))
    round_off = weight * wobble / h
    truncation = (h * s) ** 2 * s * weight
    return float(np.max(round_off + truncation))


def _param_resolution(cache: Cache, dout: np.ndarray, h: float) -> float:
    """The same for dgamma and dbeta: out is linear in them, so only round-off, of size
    machine_eps * (|gamma * normalized_x| + |beta| + step * |normalized_x|) per output, summed
    with weights |dout| over the rows and divided by the step."""
    machine_eps = float(np.finfo(cache.dtype).eps)
    step = parameter_step(cache, h)
    axes = param_axes(cache.x.ndim, cache.param_ndim)
    size = np.abs(cache.gx.astype(np.float64)) + step * np.abs(cache.normalized_x)
    if cache.beta is not None:
        size = size + np.abs(cache.beta)
    total = np.sum(np.abs(dout.astype(np.float64)) * size, axis=axes)
    return float(np.max(machine_eps * total / step))


@dataclass(frozen=True)
class GradientCheck:
    """The outcome of comparing backward and closed form with central differences.

    errors[method][tensor] is rel_error against the numerical gradient, for method in
    ("backward", "closed_form") and tensor in ("dx", "dgamma", "dbeta"); a skipped parameter's
    tensor is left out. resolution[tensor]: how far (absolutely) a central difference at this
    step may sit from the exact gradient, from round-off and truncation. A tensor whose error
    is over the tolerance fails only when its gap to the numerical gradient is larger than
    that; otherwise the differences cannot resolve it at this step (see `status`).
    """

    analytic: Grads
    closed_form: Grads
    numerical: Grads
    errors: dict[str, dict[str, float]]
    h: float
    tolerance: float
    dtype: np.dtype
    group_size: int
    resolution: dict[str, float]

    @property
    def max_error(self) -> float:
        return max(e for per in self.errors.values() for e in per.values())

    @property
    def tensors(self) -> tuple[str, ...]:
        """The tensors compared (dgamma or dbeta drop out when their parameter is skipped)."""
        return tuple(self.errors["backward"])

    def gap(self, method: str, tensor: str) -> float:
        """max |analytic - numerical| for one method's tensor."""
        grads = self.analytic if method == "backward" else self.closed_form
        analytic = np.asarray(getattr(grads, tensor), dtype=np.float64)
        return float(np.max(np.abs(analytic - getattr(self.numerical, tensor))))

    def status(self, method: str, tensor: str) -> str:
        """'pass', 'fail', or 'cannot resolve' (the error is over the tolerance but within
        what central differences can tell apart at this step: the exact gradient is too small
        for them, so neither a pass nor a fail would mean anything)."""
        if self.errors[method][tensor] <= self.tolerance:
            return "pass"
        return "cannot resolve" if self.gap(method, tensor) <= self.resolution[tensor] else "fail"

    @property
    def passed(self) -> bool:
        """No tensor of either method failed (an unresolvable one is not a failure)."""
        return all(
            self.status(method, tensor) != "fail"
            for method in self.errors
            for tensor in self.tensors
        )

    @property
    def unresolved(self) -> tuple[str, ...]:
        """The tensors the differences cannot resolve at this step, for either method."""
        return tuple(
            t
            for t in self.tensors
            if any(self.status(m, t) == "cannot resolve" for m in self.errors)
        )

    def advice(self, tensor: str) -> str:
        """What to say about a tensor that cannot be resolved: why, and what to try."""
        grads = np.asarray(getattr(self.analytic, tensor), dtype=np.float64)
        tries = ["float64"] if self.dtype == np.float32 else []
        if tensor == "dx" and self.group_size <= 2:
            tries.append(
                "D >= 3 (with D = 2 every vector normalizes to about (-1, 1) whatever x is, "
                "so dx is of the order of eps)"
            )
        tries.append(f"a larger step h than {self.h:.1e}")
        return (
            f"{tensor}: cannot resolve at this step. Its largest exact entry, "
            f"{float(np.max(np.abs(grads))):.1e}, is too small for central differences in "
            f"{self.dtype.name}, which only tell gradients apart to about "
            f"{self.resolution[tensor]:.1e} here; try {', or '.join(tries)}."
        )

    def band(self, method: str, tensor: str) -> str:
        return band(self.errors[method][tensor], self.dtype)

    def verdict(self, method: str, tensor: str) -> str:
        """The band of the error, or 'cannot resolve' where no band would mean anything."""
        status = self.status(method, tensor)
        return status if status == "cannot resolve" else self.band(method, tensor)


def compare(analytic: Grads, numerical: Grads) -> dict[str, float]:
    """rel_error per tensor (dx, dgamma, dbeta), leaving out tensors that are None."""
    return {
        t: rel_error(getattr(analytic, t), getattr(numerical, t))
        for t in TENSORS
        if getattr(analytic, t) is not None
    }


def gradient_check(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    dout: np.ndarray,
    eps: float = 1e-5,
    h: float | None = None,
    axis: int | tuple[int, ...] | None = None,
) -> GradientCheck:
    """Check backward and closed_form_backward against numerical_gradients.

    Shapes as in `forward` (gamma or beta may be None); dout has x's shape. h=None picks the
    step by `default_h`.
    """
    cache = forward(x, gamma, beta, eps, axis)
    step = default_h(cache) if h is None else check_h(h)
    analytic = backward(dout, cache)
    closed = closed_form_backward(dout, cache)
    numerical = numerical_gradients(cache.x, cache.gamma, cache.beta, dout, eps, step, cache.axis)
    dout = check_dout(dout, cache.x.shape, cache.dtype)
    params = _param_resolution(cache, dout, step)
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
        group_size=cache.n,
        resolution={"dx": _dx_resolution(cache, dout, step), "dgamma": params, "dbeta": params},
    )
