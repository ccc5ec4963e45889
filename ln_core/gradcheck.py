"""Comparing analytic gradients with numerical ones: the error measure, the step, the verdict.

Each tensor is judged by ln_core.verdict's rule: its gap to the central difference against a
bound on what round-off and truncation explain (see `_dx_bound`), "cannot resolve" where that
bound is not small against the gradient itself.

The reference is a float64 central difference of the same inputs, whatever their dtype, as
PyTorch's gradcheck advises: in float32 the differences keep few digits (under a large common
offset, fewer than the analytic gradient), so a float32 reference would make a check that
cannot tell a right float32 gradient from one off by 10 %. The bound is then the float64
reference's own error plus the analytic float32 value's rounding (ln_core.agreement), and the
float32 differences are kept beside it as the lesson on precision. The step h is chosen per
dtype:

| dtype   | step h                            |
|---------|-----------------------------------|
| float64 | sigma * cbrt(2.2e-16 * max(1, r)) |
| float32 | sigma * cbrt(1.2e-7 * max(1, r))  |

with r = max|x| / sigma; 2.2e-16 and 1.2e-7 are the dtypes' machine epsilons.
sigma is the median of sqrt(var + eps) over the vectors. The step balances truncation error
(about (h / sigma)^2) against round-off (about machine_eps * max|x| / h): the cube root is the
classic optimum for central differences, and the max|x| / sigma factor widens h when a large
common offset leaves fewer digits for the deviations. The step is never below 4 units in the
last place of max|x|, so x + h and x - h always differ.

Where the exact gradient is not large against that bound (D = 2, where dx is of the order of
eps; eps = 0 with a vector whose dx is exactly 0; a large common offset in float32), the
numerical gradient cannot tell a right answer from a wrong one. The tensor is then reported
"cannot resolve", with advice, rather than "pass" or "fail": a check that cries wolf teaches
students to ignore it, and one that passes anything teaches nothing. So is every tensor where a
rounding of the backward, the closed form or the differences underflowed (a float32 dout near
1e-38): the bounds are relative to the values and do not hold below the smallest normal number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.agreement import mean_rounding, rounding_bounds
from ln_core.backward import Grads, backward, param_axes, times_gamma
from ln_core.closed_form import closed_form_backward
from ln_core.forward import Cache, forward
from ln_core.numerical import check_h, from_rows, numerical_gradients, parameter_step, to_rows
from ln_core.validation import check_dout, underflowed
from ln_core.verdict import CANNOT_RESOLVE, FAIL, Judgement, judge, rel_error

# Where one entry's relative error sits, in words other than a verdict's (tiny up to, small up
# to), per dtype: a tensor's verdict comes from ln_core.verdict's rule, and an entry whose true
# gradient is near 0 may show a large relative error in a tensor that passes.
BANDS = {
    np.dtype(np.float64): (1e-7, 1e-4),
    np.dtype(np.float32): (1e-3, 1e-1),
}
TENSORS = ("dx", "dgamma", "dbeta")
# Safety factors of the bounds (see _dx_bound), measured by `python -m bench.verdict_sweep`:
# over its grid the largest |numerical - exact| stays below a fifth of the bound (0.49 of it
# with all three at 1, at D = 128 with an outlier and a one-hot upstream gradient).
ROUND_OFF = 3.0
TRUNCATION = 2.0
# The analytic bounds treat the working dtype's forward pass as a small perturbation of the
# exact one; beyond this relative change of s, or this shift of xhat by the mean's rounding,
# they do not hold (a float32 constant vector far from 0 whose mean rounds: its variance is
# then the rounding's own), and a group's analytic values count as unknown (`unfaithful`).
FAITHFUL = 1e-2


def band(error: float, dtype: np.dtype) -> str:
    """'tiny', 'small' or 'large' for one entry's relative error in this dtype."""
    tiny, small = BANDS[np.dtype(dtype)]
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


def _per_group(a: np.ndarray, cache: Cache, reduce=np.max) -> np.ndarray:
    """reduce(|a|) over each normalized group, (groups, 1), in float64."""
    return reduce(np.abs(to_rows(a, cache.axis).astype(np.float64)), axis=1, keepdims=True)


def _to_x(per_group: np.ndarray, cache: Cache) -> np.ndarray:
    """A per-group value (groups, 1) spread over x's shape."""
    rows = np.broadcast_to(per_group, to_rows(cache.x, cache.axis).shape)
    return from_rows(rows, cache.x, cache.axis)


def _dx_bound(cache: Cache, dout: np.ndarray, h: float) -> np.ndarray:
    """How far the central difference at step h may sit from the exact dx, per entry (x's
    shape, absolute), in the dtype of `cache` (the reference's).

    Per group, with s = 1/sqrt(var + eps), M = its largest |x|, X = its largest |normalized_x|
    and W = sum |dout * gamma|:
    - round-off: every normalized_x of a perturbed copy is off by up to
      ROUND_OFF * machine_eps * (s * M + X) (M because x - mean cancels its leading digits, and
      each copy's mean, a sum of D terms, rounds on its own by a few ulp of M), weighted by
      |dout * gamma|, summed, and divided by the step: the difference of two copies, over 2h;
    - truncation: the h^2 term of the central difference, TRUNCATION * (h s)^2 times dx's
      natural size s * W.
    """
    machine_eps = float(np.finfo(cache.dtype).eps)
    s = to_rows(cache.inv_sqrt_sve, cache.axis).astype(np.float64)
    weight = _per_group(times_gamma(dout, cache), cache, np.sum)
    offset = s * _per_group(cache.x, cache)
    spread = _per_group(cache.normalized_x, cache)
    round_off = weight * ROUND_OFF * machine_eps * (offset + spread) / h
    truncation = TRUNCATION * (h * s) ** 2 * s * weight
    return _to_x(round_off + truncation, cache)


def _param_bound(cache: Cache, dout: np.ndarray, h: float) -> dict[str, np.ndarray]:
    """The same for dgamma and dbeta (their shape): out is linear in them, so no truncation;
    round-off of up to machine_eps * (|gamma * normalized_x| + |beta| + step * |normalized_x|)
    per output, summed with weights |dout| over the rows and divided by the step.

    Both differences of dgamma read the same normalized_x, which is off from the exact one by
    ROUND_OFF * machine_eps * s * M per entry (M: the group's largest |x|, as in `_dx_bound`):
    the central difference carries that error into dgamma whole, weighted by |dout|, so it is
    counted too; dbeta does not read normalized_x."""
    machine_eps = float(np.finfo(cache.dtype).eps)
    step = parameter_step(cache, h)
    axes = param_axes(cache.x.ndim, cache.param_ndim)
    size = np.abs(cache.gx.astype(np.float64)) + step * np.abs(cache.normalized_x)
    if cache.beta is not None:
        size = size + np.abs(cache.beta)
    total = np.sum(np.abs(dout.astype(np.float64)) * size, axis=axes)
    round_off = ROUND_OFF * machine_eps * total / step
    offset = _to_x(to_rows(cache.inv_sqrt_sve, cache.axis) * _per_group(cache.x, cache), cache)
    shared = ROUND_OFF * machine_eps * np.sum(np.abs(dout.astype(np.float64)) * offset, axis=axes)
    return {"dgamma": round_off + shared, "dbeta": round_off}


def unfaithful(cache: Cache, wide: Cache, dout: np.ndarray) -> dict[str, np.ndarray]:
    """What to add to the analytic bounds where the working dtype's forward pass is no small
    perturbation of the exact one (wide: the float64 forward pass of the same inputs): per
    group whose s is off by more than FAITHFUL relative, or whose xhat the mean's rounding
    shifts by more than FAITHFUL, no rounding bound holds, so the bound is how far a value of
    the analytic gradient's size may lie from one of the reference's (twice both sizes): such
    a group is "cannot resolve", never failed. Zero elsewhere."""
    s = cache.inv_sqrt_sve.astype(np.float64)
    exact = wide.inv_sqrt_sve.astype(np.float64)
    off = unfaithful_groups(cache, wide)
    weight = np.sum(np.abs(times_gamma(dout, wide)), axis=cache.axis, keepdims=True)
    spread = 1.0 + np.maximum(
        np.max(np.abs(cache.normalized_x.astype(np.float64)), axis=cache.axis, keepdims=True),
        np.max(np.abs(wide.normalized_x), axis=cache.axis, keepdims=True),
    )
    unknown = np.where(off, 4.0 * np.maximum(s, exact) * weight * spread, 0.0)
    axes = param_axes(cache.x.ndim, cache.param_ndim)
    xhat = np.abs(cache.normalized_x.astype(np.float64)) + np.abs(wide.normalized_x)
    return {
        "dx": np.broadcast_to(unknown, cache.x.shape),
        "dgamma": np.sum(np.where(off, np.abs(dout) * xhat, 0.0), axis=axes),
        "dbeta": 0.0,
    }


def unfaithful_groups(cache: Cache, wide: Cache) -> np.ndarray:
    """Per group (kept as size 1), whether the working dtype's forward pass is no small
    perturbation of the exact one (wide: the float64 forward pass of the same inputs): its s
    off by more than FAITHFUL relative, or its xhat shifted by the mean's rounding by more."""
    s = cache.inv_sqrt_sve.astype(np.float64)
    exact = wide.inv_sqrt_sve.astype(np.float64)
    shift = exact * mean_rounding(cache)
    return (np.abs(s - exact) > FAITHFUL * exact) | (shift > FAITHFUL)


def reference_cache(cache: Cache) -> Cache:
    """The forward pass the reference differences run on: float64 of the same inputs, eps as
    the working dtype rounds it (float32 adds float32(eps) to the variance), so that the
    reference differentiates the very function the analytic gradients differentiate. A float64
    forward pass is its own."""
    if cache.dtype == np.float64:
        return cache
    wide = [None if a is None else a.astype(np.float64) for a in (cache.x, cache.gamma, cache.beta)]
    return forward(*wide, float(cache.dtype.type(cache.eps)), cache.axis)


@dataclass(frozen=True)
class GradientCheck:
    """The outcome of comparing backward and closed form with central differences.

    errors[method][tensor] is rel_error against the numerical gradient, for method in
    ("backward", "closed_form") and tensor in ("dx", "dgamma", "dbeta"); a skipped parameter's
    tensor is left out. bounds[tensor]: per entry (the tensor's shape), how far a correct
    analytic gradient may sit from the numerical one at this step: the central difference's
    round-off and truncation plus the analytic value's own rounding. Each tensor is judged by
    ln_core.verdict's rule (see `judgement`). underflow: a rounding of the backward, the closed
    form or the working dtype's differences underflowed (ln_core.validation.underflowed), so no
    bound holds and every tensor is "cannot resolve".

    numerical is the reference: central differences in float64 of the same inputs, whatever
    their dtype (as PyTorch's gradcheck advises: float32 differences keep few digits, most of
    all under a large common offset), at step h. working: the same differences in the working
    dtype at its own step working_h, the lesson on precision (the reference itself in float64).
    """

    analytic: Grads
    closed_form: Grads
    numerical: Grads
    errors: dict[str, dict[str, float]]
    h: float
    dtype: np.dtype
    group_size: int
    bounds: dict[str, np.ndarray]
    working: Grads
    working_h: float
    underflow: bool = False

    @property
    def working_errors(self) -> dict[str, float]:
        """rel_error of the working dtype's differences against the reference, per tensor."""
        return compare(self.working, self.numerical)

    @property
    def max_error(self) -> float:
        return max(e for per in self.errors.values() for e in per.values())

    @property
    def tensors(self) -> tuple[str, ...]:
        """The tensors compared (dgamma or dbeta drop out when their parameter is skipped)."""
        return tuple(self.errors["backward"])

    @property
    def resolution(self) -> dict[str, float]:
        """The largest bound per tensor: how finely the differences tell gradients apart."""
        return {t: float(np.max(b, initial=0.0)) for t, b in self.bounds.items()}

    def judgement(self, method: str, tensor: str, candidate: np.ndarray | None = None) -> Judgement:
        """One method's tensor (or any `candidate` of its shape, e.g. a buggy dx) against the
        numerical gradient, under ln_core.verdict's rule."""
        if candidate is None:
            grads = self.analytic if method == "backward" else self.closed_form
            candidate = getattr(grads, tensor)
        underflow = self.dtype if self.underflow else None
        return judge(
            candidate, getattr(self.numerical, tensor), self.bounds[tensor], underflow=underflow
        )

    def status(self, method: str, tensor: str) -> str:
        """'pass', 'fail' or 'cannot resolve' (ln_core.verdict's rule)."""
        return self.judgement(method, tensor).status

    @property
    def passed(self) -> bool:
        """No tensor of either method failed (an unresolvable one is not a failure)."""
        return all(
            self.status(method, tensor) != FAIL for method in self.errors for tensor in self.tensors
        )

    @property
    def unresolved(self) -> tuple[str, ...]:
        """The tensors the differences cannot resolve at this step, for either method."""
        return tuple(
            t for t in self.tensors if any(self.status(m, t) == CANNOT_RESOLVE for m in self.errors)
        )

    def band(self, method: str, tensor: str) -> str:
        return band(self.errors[method][tensor], self.dtype)


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
    working_h = default_h(cache) if h is None else check_h(h)
    # Cast first: rounding the given dout to the dtype is not the computation's own underflow.
    dout = check_dout(dout, cache.x.shape, cache.dtype)

    def gradients() -> tuple[Grads, Grads, Grads]:
        # The differences normalize x again: they watch the forward pass's roundings too.
        return (
            backward(dout, cache),
            closed_form_backward(dout, cache),
            numerical_gradients(cache.x, cache.gamma, cache.beta, dout, eps, working_h, cache.axis),
        )

    (analytic, closed, working), underflow = underflowed(gradients)
    wide = reference_cache(cache)
    wide_dout = dout.astype(np.float64)
    step = working_h if wide is cache or h is not None else default_h(wide)
    numerical = (
        working
        if wide is cache
        else numerical_gradients(
            wide.x, wide.gamma, wide.beta, wide_dout, wide.eps, step, wide.axis
        )
    )
    # The reference's own error, plus each analytic value's rounding in the working dtype.
    own = rounding_bounds(cache, dout)
    if wide is not cache:
        unknown = unfaithful(cache, wide, wide_dout)
        own = {name: own[name] + unknown[name] for name in TENSORS}
    reference = {"dx": _dx_bound(wide, wide_dout, step), **_param_bound(wide, wide_dout, step)}
    return GradientCheck(
        analytic=analytic,
        closed_form=closed,
        numerical=numerical,
        errors={
            "backward": compare(analytic, numerical),
            "closed_form": compare(closed, numerical),
        },
        h=step,
        dtype=cache.dtype,
        group_size=cache.n,
        bounds={t: reference[t] + own[t] for t in TENSORS},
        working=working,
        working_h=working_h,
        underflow=underflow,
    )
