"""The staged forward pass: Layer Normalization as ten named nodes.

    1  sample_mean  = mean(x)                 reduced over `axis`, kept as size 1
    2  x_sm         = x - sample_mean
    3  sq_xsm       = x_sm ** 2
    4  sample_var   = mean(sq_xsm)            biased: divide by D, the number of entries reduced
    5  sve          = sample_var + eps
    6  sqrt_sve     = sqrt(sve)
    7  inv_sqrt_sve = 1 / sqrt_sve
    8  normalized_x = x_sm * inv_sqrt_sve
    9  gx           = gamma * normalized_x
    10 out          = gx + beta

The stages are data (`STAGES`), so the same code runs the whole pass and re-runs only the nodes
after one that was perturbed (`forward_from`), which is how each local gradient is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ln_core.validation import (
    check_axis,
    check_eps,
    check_input_x,
    check_params,
    numeric_guard,
)

NODE_NAMES = (
    "sample_mean",
    "x_sm",
    "sq_xsm",
    "sample_var",
    "sve",
    "sqrt_sve",
    "inv_sqrt_sve",
    "normalized_x",
    "gx",
    "out",
)

# Which earlier values each node reads: the edges of the computation graph.
NODE_INPUTS: Mapping[str, tuple[str, ...]] = {
    "sample_mean": ("x",),
    "x_sm": ("x", "sample_mean"),
    "sq_xsm": ("x_sm",),
    "sample_var": ("sq_xsm",),
    "sve": ("sample_var", "eps"),
    "sqrt_sve": ("sve",),
    "inv_sqrt_sve": ("sqrt_sve",),
    "normalized_x": ("x_sm", "inv_sqrt_sve"),
    "gx": ("gamma", "normalized_x"),
    "out": ("gx", "beta"),
}

Stage = Callable[[dict, int, float], np.ndarray]


def _mean(a: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(a, axis=axis, keepdims=True)


STAGES: tuple[tuple[str, Stage], ...] = (
    ("sample_mean", lambda v, axis, eps: _mean(v["x"], axis)),
    ("x_sm", lambda v, axis, eps: v["x"] - v["sample_mean"]),
    ("sq_xsm", lambda v, axis, eps: v["x_sm"] ** 2),
    ("sample_var", lambda v, axis, eps: _mean(v["sq_xsm"], axis)),
    ("sve", lambda v, axis, eps: v["sample_var"] + eps),
    ("sqrt_sve", lambda v, axis, eps: np.sqrt(v["sve"])),
    ("inv_sqrt_sve", lambda v, axis, eps: 1.0 / v["sqrt_sve"]),
    ("normalized_x", lambda v, axis, eps: v["x_sm"] * v["inv_sqrt_sve"]),
    ("gx", lambda v, axis, eps: v["gamma"] * v["normalized_x"]),
    ("out", lambda v, axis, eps: v["gx"] + v["beta"]),
)


class StagedCache:
    """What every staged forward cache offers; a subclass lists its nodes in NODES."""

    NODES: ClassVar[tuple[str, ...]]
    x: np.ndarray
    axis: int

    @property
    def n(self) -> int:
        """How many entries each statistic averages over (D for LayerNorm, N for BatchNorm)."""
        return self.x.shape[self.axis]

    @property
    def nodes(self) -> dict[str, np.ndarray]:
        """The nodes in forward order."""
        return {name: getattr(self, name) for name in self.NODES}

    @property
    def dtype(self) -> np.dtype:
        return self.x.dtype


@dataclass(frozen=True)
class Cache(StagedCache):
    """Inputs and the ten nodes of one forward pass.

    Shapes, for x of shape S (e.g. (D,), (N, D), (B, L, D)) normalized over `axis`:
    gamma, beta: (D,) acting on the last axis. Reduced nodes (sample_mean, sample_var, sve,
    sqrt_sve, inv_sqrt_sve) have shape S with S[axis] = 1; every other node has shape S.
    `axis` is stored negative, so it still names the same axis if a stack axis is prepended.
    """

    NODES: ClassVar[tuple[str, ...]] = NODE_NAMES
    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    eps: float
    axis: int
    sample_mean: np.ndarray = field(repr=False)
    x_sm: np.ndarray = field(repr=False)
    sq_xsm: np.ndarray = field(repr=False)
    sample_var: np.ndarray = field(repr=False)
    sve: np.ndarray = field(repr=False)
    sqrt_sve: np.ndarray = field(repr=False)
    inv_sqrt_sve: np.ndarray = field(repr=False)
    normalized_x: np.ndarray = field(repr=False)
    gx: np.ndarray = field(repr=False)
    out: np.ndarray = field(repr=False)


def run_stages(
    values: dict, axis: int, eps: float, first: int = 0, stop: int = len(STAGES)
) -> dict[str, np.ndarray]:
    """Compute nodes STAGES[first:stop] from `values` (x, gamma, beta and any earlier nodes).

    Arrays may carry extra leading axes (a stack of perturbed copies): `axis` is negative and
    gamma/beta act on the last axis, so broadcasting keeps every copy separate.
    """
    values = dict(values)
    with numeric_guard("The forward pass"):
        for name, stage in STAGES[first:stop]:
            values[name] = stage(values, axis, eps)
    return values


def _check_variance(sve: np.ndarray, axis: int, eps: float) -> None:
    """sve >= eps, so it can only be 0 when eps = 0 (or rounds to 0) and a variance is 0."""
    zero = sve == 0
    if zero.any():
        # Drop the reduced axis (always 0 in a keepdims index) so the index names the vector.
        found = np.argwhere(zero)[0]
        which = tuple(int(i) for k, i in enumerate(found) if k != axis % zero.ndim)
        group = "vector" if axis == -1 else "feature (normalized over the batch)"
        eps_text = "eps = 0" if eps == 0 else f"eps = {eps:g} rounds to 0 in {sve.dtype.name}"
        where = f"The {group} at index {which}" if which else "The vector"
        raise ValueError(
            f"{where} has zero variance (its entries are all equal, or so "
            f"close that their squared differences round to 0) and {eps_text}, so "
            "x_sm / sqrt(var + eps) is 0 / 0. Set eps > 0 or make the entries differ."
        )


def forward(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    eps: float = 1e-5,
    axis: int = -1,
) -> Cache:
    """Staged LayerNorm forward pass.

    x: (D,), (N, D) or (B, L, D); gamma, beta: (D,). `axis=-1` normalizes each vector over its
    D features (LayerNorm); `axis=0` normalizes each feature over the batch (BatchNorm's view of
    the same graph). Returns a Cache whose `out` has x's shape and dtype (float32 stays float32,
    integers become float64). Raises ValueError on any input where the result is undefined.
    """
    x = check_input_x(x)
    gamma, beta = check_params(x, gamma, beta)
    eps = check_eps(eps)
    axis = check_axis(axis, x.ndim)
    # Stop at sve to name a zero variance before sqrt and 1/x turn it into a generic error.
    after_sve = NODE_NAMES.index("sve") + 1
    nodes = run_stages({"x": x, "gamma": gamma, "beta": beta}, axis, eps, stop=after_sve)
    _check_variance(nodes["sve"], axis, eps)
    nodes = run_stages(nodes, axis, eps, first=after_sve)
    return Cache(eps=eps, axis=axis, **nodes)


def forward_from(cache: Cache, node: str, value: np.ndarray) -> dict[str, np.ndarray]:
    """Replace `node` (one of NODE_NAMES, or "x") by `value`; recompute only the nodes after it.

    `value` may have extra leading axes (one per perturbed copy). Returns every node, the
    replaced one included, so callers can read `out` for each copy.
    """
    first = 0 if node == "x" else NODE_NAMES.index(node) + 1
    values = {"x": cache.x, "gamma": cache.gamma, "beta": cache.beta, **cache.nodes, node: value}
    return run_stages(values, cache.axis, cache.eps, first=first)
