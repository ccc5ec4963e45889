"""Checking one node's gradient on its own: perturb the node, re-run only what comes after it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.agreement import ROUNDINGS, SHIFTED, backward_underflows, group_abs, mean_shift
from ln_core.backward import StagedGrads, times_gamma
from ln_core.forward import NODE_NAMES, Cache, forward_from
from ln_core.gradcheck import ROUND_OFF, TRUNCATION, reference_cache, unfaithful_groups
from ln_core.numerical import MAX_EVALUATIONS, copies_per_chunk, perturbed_copies
from ln_core.validation import numeric_guard, underflowed
from ln_core.verdict import Judgement, judge, rel_error


@dataclass(frozen=True)
class NodeCheck:
    """A node's analytic gradient next to its numerical one (both with the node's shape), and
    per entry a bound on what round-off and truncation explain between them (`node_bound`).
    underflow: a rounding of the staged backward or of the differences underflowed
    (ln_core.validation.underflowed), so the bound does not hold: "cannot resolve"."""

    node: str
    analytic: np.ndarray
    numerical: np.ndarray
    h: np.ndarray
    bound: np.ndarray
    underflow: bool = False

    @property
    def max_abs_diff(self) -> float:
        return float(np.max(np.abs(self.analytic.astype(float) - self.numerical)))

    @property
    def rel_error(self) -> float:
        return rel_error(self.analytic, self.numerical)

    @property
    def judgement(self) -> Judgement:
        """ln_core.verdict's rule: 'pass', 'fail' or 'cannot resolve', with its numbers."""
        underflow = self.analytic.dtype if self.underflow else None
        return judge(self.analytic, self.numerical, self.bound, underflow=underflow)

    @property
    def status(self) -> str:
        return self.judgement.status


# The node whose size sets each node's natural unit: deviations are measured against the standard
# deviation, squares against the variance. Stepping in these units keeps var + eps positive while
# sq_xsm or sample_var is perturbed, even in float32.
NODE_UNITS = {
    "x": "sqrt_sve",
    "sample_mean": "sqrt_sve",
    "x_sm": "sqrt_sve",
    "sq_xsm": "sve",
    "sample_var": "sve",
    "sve": "sve",
    "sqrt_sve": "sqrt_sve",
    "inv_sqrt_sve": "inv_sqrt_sve",
}


def node_step(cache: Cache, node: str) -> np.ndarray:
    """Central-difference steps for a node, one per element: cbrt(machine eps) times its unit.

    Each element is measured against its own vector's unit, so a vector with a tiny variance
    gets a tiny step. Nodes after the normalization (normalized_x, gx, out) only feed linear
    steps, so their unit is their own largest magnitude (at least 1).
    As in gradcheck.default_h, x with a large common offset leaves fewer digits for the change
    (its mean rounds to about eps * max|x|), so x's step is cbrt(eps * max(1, max|x| / unit)) *
    unit per vector. No step is below 4 units in the last place of the value it moves, so
    value + h and value - h always differ (a sample_mean far from 0 with a tiny spread).
    """
    value = getattr(cache, node)
    machine_eps = np.finfo(cache.dtype).eps
    unit_node = NODE_UNITS.get(node)
    if unit_node is None:
        unit = np.full(value.shape, max(1.0, float(np.max(np.abs(value)))))
    else:
        unit = np.broadcast_to(getattr(cache, unit_node), value.shape)
    spread = 1.0
    if node == "x":
        size = np.max(np.abs(value), axis=cache.axis, keepdims=True)
        spread = np.maximum(1.0, size / unit)
    step = np.cbrt(machine_eps * spread) * unit
    return np.maximum(step, 4 * machine_eps * np.abs(value))


def numerical_node_gradient(cache: Cache, dout: np.ndarray, node: str, h: np.ndarray) -> np.ndarray:
    """dL/d(node) by central differences, L = sum(dout * out); the node's shape.

    h: one step per element of the node (the node's shape) or a single step.

    Each copy of the node has one element moved; only the nodes after it are recomputed
    (`forward_from`), with all copies stacked on a leading axis.
    """
    value = getattr(cache, node)
    # Every copy runs the lines after the node on the whole of x again.
    evaluations = value.size * cache.x.size
    if evaluations > MAX_EVALUATIONS:
        raise ValueError(
            f"The numerical gradient of {node} moves each of its {value.size:,} entries on its "
            f"own and runs the lines after it on all {cache.x.size:,} entries of x again: "
            f"{evaluations:,} evaluations, more than the {MAX_EVALUATIONS:,} that finish in a "
            "few seconds. Use fewer vectors or a smaller D."
        )
    flat = value.reshape(1, -1)
    steps = np.broadcast_to(np.asarray(h, dtype=value.dtype), value.shape).reshape(-1)
    size = flat.shape[1]
    grad = np.empty(size, dtype=value.dtype)
    chunk = copies_per_chunk(cache.x.size)
    with numeric_guard(f"The numerical gradient of {node}"):
        for start in range(0, size, chunk):
            columns = np.arange(start, min(size, start + chunk))
            plus, minus, step = perturbed_copies(flat, steps, columns)
            stacked_shape = (len(columns), *value.shape)
            # out = gx + beta and beta is the same in both copies, so the difference is taken
            # on gx: adding beta first would only round away digits of the change.
            last = "out" if node == "out" else "gx"
            out_plus = forward_from(cache, node, plus.reshape(stacked_shape))[last]
            out_minus = forward_from(cache, node, minus.reshape(stacked_shape))[last]
            change = np.sum(dout * (out_plus - out_minus), axis=tuple(range(1, out_plus.ndim)))
            grad[columns] = change / step[0]
    return grad.reshape(value.shape)


# Nodes the loss is linear in (no truncation error), and those whose move reaches only their
# own entry of gx (the others reach their whole group through the mean or the variance).
_LINEAR = ("inv_sqrt_sve", "normalized_x", "gx", "out")
_OWN_ENTRY = ("normalized_x", "gx", "out")


def _natural_size(cache: Cache, dout: np.ndarray, node: str) -> np.ndarray:
    """The size of d<node>'s terms, per entry or per group (broadcasts to the node's shape):
    with w = dout * gamma, s = 1/sqrt(var + eps) and m = sum |w * x_sm| per group, dgx = dout,
    dnormalized_x = w, dinv_sqrt_sve = sum(w x_sm), dsqrt_sve = -s^2 of that, dsve = dvar =
    -s^3/2 of it, dsq_xsm = dvar / D; dx_sm, dsample_mean and dx are s * (w terms) plus
    x_sm's share of dvar, at most s * sum|w| * (1 + max|normalized_x|)."""
    if node in ("out", "gx"):
        return np.abs(dout.astype(np.float64))
    w = times_gamma(dout, cache).astype(np.float64)
    if node == "normalized_x":
        return np.abs(w)
    if node in _OF_MOMENT:
        return _of_moment(cache, node, group_abs(w * cache.x_sm, cache))
    s = cache.inv_sqrt_sve.astype(np.float64)
    return s * group_abs(w, cache) * (1 + group_abs(cache.normalized_x, cache, np.max))


# The nodes whose gradient is dinv_sqrt_sve = sum(w * x_sm) times a power of s.
_OF_MOMENT = ("inv_sqrt_sve", "sqrt_sve", "sve", "sample_var", "sq_xsm")


def _of_moment(cache: Cache, node: str, moment: np.ndarray) -> np.ndarray:
    """d<node> of a node in _OF_MOMENT, for dinv_sqrt_sve of size `moment`."""
    s = cache.inv_sqrt_sve.astype(np.float64)
    return {
        "inv_sqrt_sve": moment,
        "sqrt_sve": s**2 * moment,
        "sve": 0.5 * s**3 * moment,
        "sample_var": 0.5 * s**3 * moment,
        "sq_xsm": 0.5 * s**3 * moment / cache.n,
    }[node]


def rounding_bound(cache: Cache, dout: np.ndarray, node: str) -> np.ndarray:
    """How far the computed d<node> may sit from its exact value, per entry (x's shape for x
    and the paths into x_sm, the node's shape otherwise; float64): `_own_rounding`. node: a
    node name, "x", or a part of one (dx_sm_via_normalized_x...: its natural size is the
    node's, "x_sm" here)."""
    shape = getattr(cache, node).shape if node in NODE_NAMES else cache.x.shape
    natural = _natural_size(cache, dout, node)
    shifted = natural
    if node in _OF_MOMENT:
        # The mean's rounding moves every x_sm by the same amount, so dinv_sqrt_sve by that
        # times sum(w), however small sum|w * x_sm| is (a one-hot dout on an entry near the
        # mean): in sigma units of x_sm, that is sum|w| / s.
        w = times_gamma(dout, cache).astype(np.float64)
        s = cache.inv_sqrt_sve.astype(np.float64)
        shifted = _of_moment(
            cache, node, group_abs(w * cache.x_sm, cache) + group_abs(w, cache) / s
        )
    return np.broadcast_to(_own_rounding(cache, natural, shifted), shape)


def _own_rounding(
    cache: Cache, natural: np.ndarray, shifted: np.ndarray | None = None
) -> np.ndarray:
    """ROUNDINGS * machine_eps * (2 + log2 D) times a gradient's natural size, plus SHIFTED
    times how far the mean's measured rounding shifts xhat (ln_core.agreement.mean_shift)
    times the size the gradient has for a shift of x_sm by sigma (`shifted`; natural unless
    given): every gradient below normalized_x reads x - mean, which carries that rounding. A
    mean that does not round (a constant vector, where x - mean is exactly 0) adds nothing,
    however small eps makes sigma."""
    machine_eps = float(np.finfo(cache.dtype).eps)
    chain = 2.0 + np.log2(cache.n)
    shifted = natural if shifted is None else shifted
    return natural * ROUNDINGS * machine_eps * chain + shifted * SHIFTED * mean_shift(cache)


def node_bound(cache: Cache, dout: np.ndarray, node: str, h: np.ndarray) -> np.ndarray:
    """How far a correct d<node> may sit from its central difference at steps h, per entry
    (the node's shape, float64): the sum of

    - round-off: each gx the move reaches is recomputed with an error of up to
      ROUND_OFF * machine_eps * ((2 + log2 D) |gx| + |gamma| s M), where 2 + log2 D covers the
      chain of roundings (the variance sums D terms) and M, the group's largest |x|, enters only
      when x itself moves (its mean is recomputed, and x - mean cancels M's leading digits);
      weighted by |dout|, summed over what the move reaches and divided by the step;
    - truncation: TRUNCATION * (h / unit)^2 times the natural size, except where the loss is
      linear in the node;
    - the analytic gradient's own rounding (`_own_rounding`): its chain of roundings and the
      mean's measured rounding, times the natural size.
    """
    machine_eps = float(np.finfo(cache.dtype).eps)
    chain = 2.0 + np.log2(cache.n)
    s = cache.inv_sqrt_sve.astype(np.float64)
    gamma = np.abs(times_gamma(np.ones_like(cache.x), cache).astype(np.float64))
    offset = s * group_abs(cache.x, cache, np.max) if node == "x" else 0.0
    wobble = np.abs(dout.astype(np.float64)) * (
        chain * np.abs(cache.gx.astype(np.float64)) + gamma * offset
    )
    reach = wobble if node in _OWN_ENTRY else group_abs(wobble, cache)
    value = getattr(cache, node)
    steps = np.broadcast_to(np.asarray(h, dtype=np.float64), value.shape)
    round_off = ROUND_OFF * machine_eps * np.broadcast_to(reach, value.shape) / steps
    natural = np.broadcast_to(_natural_size(cache, dout, node), value.shape)
    truncation = 0.0
    if node not in _LINEAR:
        unit = np.broadcast_to(getattr(cache, NODE_UNITS[node]).astype(np.float64), value.shape)
        truncation = TRUNCATION * (steps / unit) ** 2 * natural
    return round_off + truncation + _own_rounding(cache, natural)


def check_node(
    cache: Cache, grads: StagedGrads, node: str, h: float | np.ndarray | None = None
) -> NodeCheck:
    """Compare grads' d<node> (or dx for node "x") with a numerical gradient of that node."""
    if node not in (*NODE_NAMES, "x"):
        raise ValueError(f"Unknown node {node!r}; the nodes are {', '.join(NODE_NAMES)} and x.")
    if h is None and cache.dtype != np.float64:
        return _wide_check(cache, grads, node)
    step = node_step(cache, node) if h is None else h

    value, differences_underflow = underflowed(
        lambda: numerical_node_gradient(cache, grads.dout, node, step)
    )
    underflow = differences_underflow or backward_underflows(cache, grads.dout)
    return NodeCheck(
        node=node,
        analytic=grads.of(node),
        numerical=value,
        h=step,
        bound=node_bound(cache, grads.dout, node, step),
        underflow=underflow,
    )


def _wide_check(cache: Cache, grads: StagedGrads, node: str) -> NodeCheck:
    """d<node> of a working dtype narrower than float64 against float64 differences of the
    same inputs, as the gradient check's reference (ln_core.gradcheck): float32 differences
    keep few digits (each moved copy of x computes its own mean, whose rounding, a few ulp of
    a large common offset over the step, swamps dx's difference; a moved square's change to the
    variance is rounded to an ulp of the variance, 1e-3 of dsq_xsm's difference at D = 64).
    The bound: the float64 differences' own (`node_bound`), the working d<node>'s rounding
    (`rounding_bound`), and where the working forward pass is no small perturbation of the
    exact one (`ln_core.gradcheck.unfaithful_groups`), four times the larger natural size of
    d<node> in either pass: "cannot resolve" there, never a fail. gx, normalized_x and out reach
    only their own entry of gx, whose gradient does not depend on where it is taken."""
    wide = reference_cache(cache)
    dout = grads.dout.astype(np.float64)
    step = node_step(wide, node)
    value, differences_underflow = underflowed(
        lambda: numerical_node_gradient(wide, dout, node, step)
    )
    bound = node_bound(wide, dout, node, step) + rounding_bound(cache, grads.dout, node)
    if node not in _OWN_ENTRY:
        natural = np.maximum(
            _natural_size(cache, grads.dout, node), _natural_size(wide, dout, node)
        )
        bound = bound + np.where(unfaithful_groups(cache, wide), 4.0 * natural, 0.0)
    return NodeCheck(
        node=node,
        analytic=grads.of(node),
        numerical=value,
        h=step,
        bound=bound,
        underflow=differences_underflow or backward_underflows(cache, grads.dout),
    )
