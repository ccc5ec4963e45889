"""The staged forward pass: Layer Normalization as ten named nodes.

`run_nodes` below is the whole pass, one NumPy statement per node in the order it runs, and
`forward` runs it with its input checks. mean() averages over `axis` and keeps it as size 1;
the variance is biased (divide by D, the number of entries averaged).

gamma and beta may be None (torch's elementwise_affine=False, or bias=False): the node that
multiplies by or adds a skipped parameter passes its other input through, so gx is then
normalized_x and out is gx, and `Cache.line` says so.

`run_nodes` can start after any node, so the same statements re-run only the nodes after one
that was perturbed (`forward_from`), which is how each local gradient is checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ln_core.nodes import NODE_NAMES, NODES
from ln_core.staged import Line, StagedCache
from ln_core.validation import (
    check_eps,
    check_input_x,
    check_params,
    check_representable,
    numeric_guard,
    resolve_axis,
)

# The lesson's table of the ten lines (ln_core/nodes.py); run_nodes below computes the same
# lines, and tests/core/test_nodes.py fails if the two disagree.
LINES: tuple[Line, ...] = NODES
NODE_INPUTS: Mapping[str, tuple[str, ...]] = {line.name: line.inputs for line in LINES}


@dataclass(frozen=True)
class Cache(StagedCache):
    """Inputs and the ten nodes of one forward pass.

    Shapes, for x of shape S (e.g. (D,), (N, D) or (B, L, D)) normalized over `axis` (a tuple):
    gamma, beta: `validation.param_shape` ((D,) for the last axis, (L, D) for the last two),
    or None when skipped. Reduced nodes (sample_mean, sample_var, sve, sqrt_sve, inv_sqrt_sve)
    have shape S with S[a] = 1 for every a in axis; every other node has shape S.
    `axis` is stored negative, so it still names the same axes if a stack axis is prepended.
    """

    LINES: ClassVar[tuple[Line, ...]] = LINES

    x: np.ndarray
    gamma: np.ndarray | None
    beta: np.ndarray | None
    eps: float
    axis: tuple[int, ...]
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


def run_nodes(
    values: Mapping[str, np.ndarray | None],
    axis: tuple[int, ...],
    eps: float,
    after: str = "x",
    through: str = "out",
) -> dict[str, np.ndarray | None]:
    """The nodes after `after` up to and including `through`, from `values`.

    values: x, gamma and beta, and every node up to `after` that the computed nodes read.
    Returns values with the computed nodes added. Arrays may carry extra leading axes (a stack
    of perturbed copies): `axis` is negative and gamma/beta act on the trailing axes, so
    broadcasting keeps every copy separate.
    """
    v = dict(values)
    first = 0 if after == "x" else NODE_NAMES.index(after) + 1
    todo = NODE_NAMES[first : NODE_NAMES.index(through) + 1]

    def mean(a: np.ndarray) -> np.ndarray:
        return np.mean(a, axis=axis, keepdims=True)

    if "sample_mean" in todo:
        v["sample_mean"] = mean(v["x"])
    if "x_sm" in todo:
        v["x_sm"] = v["x"] - v["sample_mean"]
    if "sq_xsm" in todo:
        v["sq_xsm"] = v["x_sm"] ** 2
    if "sample_var" in todo:
        v["sample_var"] = mean(v["sq_xsm"])
    if "sve" in todo:
        v["sve"] = v["sample_var"] + eps
    if "sqrt_sve" in todo:
        v["sqrt_sve"] = np.sqrt(v["sve"])
    if "inv_sqrt_sve" in todo:
        v["inv_sqrt_sve"] = 1 / v["sqrt_sve"]
    if "normalized_x" in todo:
        v["normalized_x"] = v["x_sm"] * v["inv_sqrt_sve"]
    if "gx" in todo:
        gamma = v["gamma"]
        v["gx"] = v["normalized_x"] if gamma is None else gamma * v["normalized_x"]
    if "out" in todo:
        beta = v["beta"]
        v["out"] = v["gx"] if beta is None else v["gx"] + beta
    return v


def _position(which: tuple[int, ...], trailing: bool) -> str:
    """Where a group sits, in words: "in row 2", "at batch element 0, token 1", "number 3"."""
    if not trailing:
        return f"number {which[-1]}"
    if len(which) == 1:
        return f"in row {which[0]}"
    names = ("at batch element", "token")
    return ", ".join(f"{name} {i}" for name, i in zip(names, which, strict=True))


def group_at(axis: tuple[int, ...], ndim: int, index: np.ndarray) -> str:
    """'the vector in row 1': the group an index of a node lies in, in a student's words."""
    # Drop the reduced axes (always 0 in a keepdims index) so the index names the group.
    reduced = {a % ndim for a in axis}
    which = tuple(int(i) for k, i in enumerate(index) if k not in reduced)
    trailing = axis == tuple(range(-len(axis), 0))
    group = "vector" if trailing else "feature (normalized over the batch)"
    return f"the {group} {_position(which, trailing)}" if which else f"the {group}"


def eps_said(eps: float, dtype: np.dtype) -> str:
    """eps as a refusal names it: 0, or a value the dtype rounds to 0 (1e-46 in float32)."""
    return "eps = 0" if eps == 0 else f"eps = {eps:g} rounds to 0 in {np.dtype(dtype).name}"


class ZeroVariance(ValueError):
    """A group whose entries are all equal, at eps = 0: its output is 0 / 0, undefined. A
    ValueError like every refusal; its own kind, so the app can offer the ways out its message
    names (eps > 0, or entries that differ)."""


def check_variance(sve: np.ndarray, axis: tuple[int, ...], eps: float) -> None:
    """Refuse a group whose var + eps is 0: all its entries equal, and eps = 0 (or rounds to 0).

    sve: the reduced shape; any group with entries that differ must be left out by the caller.
    """
    zero = sve == 0
    if zero.any():
        where = group_at(axis, zero.ndim, np.argwhere(zero)[0]).capitalize()
        raise ZeroVariance(
            f"{where} has zero variance (its entries are all equal) and "
            f"{eps_said(eps, sve.dtype)}, so "
            "x_sm / sqrt(var + eps) is 0 / 0. Set eps > 0 or make the entries differ."
        )


_CLOSED_FORM = (
    "The closed form rescales x before squaring and handles this x "
    "(ln_core.layernorm_closed_form); or rescale x."
)


def _check_nodes(nodes: Mapping[str, np.ndarray], axis: tuple[int, ...], eps: float) -> None:
    """Refuse, naming the node, where a node is not what its line says in this dtype.

    The staged pass shows its nodes as they are, so it cannot rescale: a node beyond the
    dtype's range, or a variance the squares have underflowed (fewer digits than the dtype
    holds, or 0 though the entries differ), is refused rather than shown.
    """

    def shown(lines: tuple[Line, ...]) -> list[tuple[str, np.ndarray]]:
        return [(line.text(), nodes[line.name]) for line in lines]

    upto_sve = NODE_NAMES.index("sve") + 1
    check_representable("The staged pass", shown(LINES[:upto_sve]), _CLOSED_FORM)
    sve, dtype = nodes["sve"], nodes["sve"].dtype
    differ = np.max(np.abs(nodes["x_sm"]), axis=axis, keepdims=True) > 0
    check_variance(np.where(differ, 1, sve), axis, eps)
    lost = differ & (sve < np.finfo(dtype).smallest_normal)
    if lost.any():
        index = np.argwhere(lost)[0]
        group = group_at(axis, lost.ndim, index)
        raise ValueError(
            f"The staged pass cannot show sq_xsm = x_sm ** 2 for {group}: its entries "
            f"differ, but their squares underflow (sve = {float(sve[tuple(index)]):.1e}, "
            f"below {dtype.name}'s smallest normal number, "
            f"{np.finfo(dtype).smallest_normal:.1e}), losing digits. " + _CLOSED_FORM
        )
    check_representable("The staged pass", shown(LINES[upto_sve:]), _CLOSED_FORM)


def forward(
    x: np.ndarray,
    gamma: np.ndarray | None = None,
    beta: np.ndarray | None = None,
    eps: float = 1e-5,
    axis: int | tuple[int, ...] | None = None,
) -> Cache:
    """Staged LayerNorm forward pass.

    x: (D,), (N, D) or (B, L, D). `axis=-1` normalizes each vector over its D features
    (LayerNorm); `axis=(-2, -1)` each (L, D) block, like torch.nn.LayerNorm((L, D)); `axis=0`
    each feature over the batch (BatchNorm's view of the same graph). axis=None (the default)
    follows gamma's shape as PyTorch's normalized_shape does (gamma (L, D) means (-2, -1)),
    and is -1 otherwise. gamma, beta: of `validation.param_shape` ((D,) unless normalizing
    several trailing axes), or None to skip.
    Returns a Cache whose `out` has x's shape and dtype (float32 stays float32, float16 is
    shown as the float32 it is computed in, integers become float64). Raises ValueError on any
    input where the result is undefined, on an empty x, and where a node is not representable
    (naming it: the staged pass shows its nodes as they are, so it cannot rescale; the closed
    form, ln_core.layernorm_closed_form, does).
    """
    x = check_input_x(x)
    eps = check_eps(eps)
    axis = resolve_axis(axis, x, gamma, beta)
    gamma, beta = check_params(x, gamma, beta, axis)
    # Overflow is let through here and then looked for node by node, so the refusal names the
    # first node that is not what its line says. Underflow is left as the caller set it (a
    # verdict watches for it: ln_core.validation.underflowed).
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        nodes = run_nodes({"x": x, "gamma": gamma, "beta": beta}, axis, eps)
    _check_nodes(nodes, axis, eps)
    return Cache(eps=eps, axis=axis, **nodes)


def forward_from(cache: Cache, node: str, value: np.ndarray) -> dict[str, np.ndarray]:
    """Replace `node` (one of NODE_NAMES, or "x") by `value`; recompute only the nodes after it.

    `value` may have extra leading axes (one per perturbed copy). Returns every node, the
    replaced one included, so callers can read `out` for each copy.
    """
    values = {"x": cache.x, "gamma": cache.gamma, "beta": cache.beta, **cache.nodes, node: value}
    with numeric_guard("The forward pass"):
        return run_nodes(values, cache.axis, cache.eps, after=node)
