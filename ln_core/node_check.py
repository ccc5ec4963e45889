"""Checking one node's gradient on its own: perturb the node, re-run only what comes after it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.backward import StagedGrads
from ln_core.forward import NODE_NAMES, Cache, forward_from
from ln_core.gradcheck import band, rel_error
from ln_core.numerical import copies_per_chunk, perturbed_copies
from ln_core.validation import numeric_guard


@dataclass(frozen=True)
class NodeCheck:
    """A node's analytic gradient next to its numerical one (both with the node's shape)."""

    node: str
    analytic: np.ndarray
    numerical: np.ndarray
    h: np.ndarray

    @property
    def max_abs_diff(self) -> float:
        return float(np.max(np.abs(self.analytic.astype(float) - self.numerical)))

    @property
    def rel_error(self) -> float:
        return rel_error(self.analytic, self.numerical)

    @property
    def verdict(self) -> str:
        """'exact' (equal to the last bit), or the gradient-check band of the error."""
        if np.array_equal(self.analytic, self.numerical):
            return "exact"
        return band(self.rel_error, self.analytic.dtype)


# The node whose size sets each node's natural unit: deviations are measured against the standard
# deviation, squares against the variance. Stepping in these units keeps var + eps positive while
# sq_xsm or sample_var is perturbed, even in float32.
_STEP_UNIT = {
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
    unit_node = _STEP_UNIT.get(node)
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


def check_node(
    cache: Cache, grads: StagedGrads, node: str, h: float | np.ndarray | None = None
) -> NodeCheck:
    """Compare grads' d<node> (or dx for node "x") with a numerical gradient of that node."""
    if node not in (*NODE_NAMES, "x"):
        raise ValueError(f"Unknown node {node!r}; the nodes are {', '.join(NODE_NAMES)} and x.")
    step = node_step(cache, node) if h is None else h
    return NodeCheck(
        node=node,
        analytic=grads.of(node),
        numerical=numerical_node_gradient(cache, grads.dout, node, step),
        h=step,
    )
