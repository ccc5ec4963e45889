"""The staged forward pass: Layer Normalization as ten named lines.

`FORWARD_LINES` below is the whole pass, one node per line, in the order it runs. The node
names, the graph's edges (`NODE_INPUTS`) and the Cache's fields are all read from those lines,
so the ten names are written once. mean() averages over `axis` and keeps it as size 1; the
variance is biased (divide by D, the number of entries averaged).

gamma and beta may be None (torch's elementwise_affine=False, or bias=False): a line that
multiplies by or adds a skipped parameter passes its other input through, so gx is then
normalized_x and out is gx, and `Cache.line` says so.

Because the lines are data, the same code runs the whole pass and re-runs only the nodes after
one that was perturbed (`forward_from`), which is how each local gradient is checked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, make_dataclass
from types import CodeType
from typing import ClassVar

import numpy as np

from ln_core.validation import (
    check_axis,
    check_eps,
    check_input_x,
    check_params,
    numeric_guard,
    param_shape,
)

FORWARD_LINES = (
    "sample_mean  = mean(x)",
    "x_sm         = x - sample_mean",
    "sq_xsm       = x_sm ** 2",
    "sample_var   = mean(sq_xsm)",
    "sve          = sample_var + eps",
    "sqrt_sve     = sqrt(sve)",
    "inv_sqrt_sve = 1 / sqrt_sve",
    "normalized_x = x_sm * inv_sqrt_sve",
    "gx           = gamma * normalized_x",
    "out          = gx + beta",
)

# The affine parameters; either may be None, and the line that uses it is then skipped.
PARAMETERS = ("gamma", "beta")


@dataclass(frozen=True)
class Line:
    """One forward line, `name = expression`, read from its text.

    inputs: the names the expression reads (function names such as mean and sqrt excluded).
    """

    name: str
    expression: str
    inputs: tuple[str, ...]
    code: CodeType = field(repr=False, compare=False)

    @classmethod
    def parse(cls, text: str) -> Line:
        name, expression = (part.strip() for part in text.split("=", 1))
        inputs = tuple(re.findall(r"\b([A-Za-z_]\w*)\b(?!\s*\()", expression))
        code = compile(expression, f"<line {name}>", "eval")
        return cls(name=name, expression=expression, inputs=inputs, code=code)

    def text(self, skipped: tuple[str, ...] = ()) -> str:
        """The line as it runs: `gx = normalized_x  (no gamma)` when gamma is skipped."""
        missing = [name for name in self.inputs if name in skipped]
        if not missing:
            return f"{self.name} = {self.expression}"
        kept = " ".join(name for name in self.inputs if name not in skipped)
        return f"{self.name} = {kept}  (no {' '.join(missing)})"

    def run(self, values: Mapping[str, np.ndarray | None], namespace: dict) -> np.ndarray:
        """The node's value from earlier `values`; mean, sqrt and eps come from `namespace`."""
        kept = [n for n in self.inputs if not (n in PARAMETERS and values[n] is None)]
        if len(kept) < len(self.inputs):
            return values[kept[0]]  # a skipped factor or term: the other input unchanged
        return eval(self.code, namespace, dict(values))


LINES = tuple(Line.parse(text) for text in FORWARD_LINES)
NODE_NAMES = tuple(line.name for line in LINES)
# Which earlier values each node reads: the edges of the computation graph.
NODE_INPUTS: Mapping[str, tuple[str, ...]] = {line.name: line.inputs for line in LINES}


def run_lines(
    lines: tuple[Line, ...],
    values: dict,
    axis: tuple[int, ...],
    eps: float,
    first: int = 0,
    stop: int | None = None,
) -> dict[str, np.ndarray]:
    """Compute lines[first:stop] from `values` (x, gamma, beta and any earlier nodes).

    Arrays may carry extra leading axes (a stack of perturbed copies): `axis` is negative and
    gamma/beta act on the trailing axes, so broadcasting keeps every copy separate.
    """
    values = dict(values)
    namespace = {
        "mean": lambda a: np.mean(a, axis=axis, keepdims=True),
        "sqrt": np.sqrt,
        "eps": eps,
    }
    for line in lines[first:stop]:
        values[line.name] = line.run(values, namespace)
    return values


class StagedCache:
    """What every staged forward cache offers; a subclass lists its lines in LINES."""

    LINES: ClassVar[tuple[Line, ...]]
    x: np.ndarray
    gamma: np.ndarray | None
    beta: np.ndarray | None
    axis: tuple[int, ...]

    @property
    def n(self) -> int:
        """How many entries each statistic averages over (D for LayerNorm, N for BatchNorm)."""
        return math.prod(self.x.shape[a] for a in self.axis)

    @property
    def nodes(self) -> dict[str, np.ndarray]:
        """The nodes in forward order."""
        return {line.name: getattr(self, line.name) for line in self.LINES}

    @property
    def dtype(self) -> np.dtype:
        return self.x.dtype

    @property
    def skipped(self) -> tuple[str, ...]:
        """The affine parameters left out (None): () for the full layer, up to (gamma, beta)."""
        return tuple(p for p in PARAMETERS if getattr(self, p) is None)

    @property
    def param_ndim(self) -> int:
        """How many trailing axes gamma and beta cover (see validation.param_shape)."""
        return len(param_shape(self.x.shape, self.axis))

    def line(self, node: str) -> str:
        """The forward line of `node` as this pass ran it (saying what it skipped)."""
        return self._line(node).text(self.skipped)

    def skipped_in(self, node: str) -> tuple[str, ...]:
        """The skipped parameters `node`'s line would read: ("gamma",) for gx without gamma."""
        return tuple(p for p in self.skipped if p in self._line(node).inputs)

    def _line(self, node: str) -> Line:
        return next(line for line in self.LINES if line.name == node)


def staged_cache_class(name: str, lines: tuple[Line, ...], module: str, doc: str) -> type:
    """A frozen dataclass of the inputs (x, gamma, beta, eps, axis) and one field per line."""
    nodes = [(line.name, np.ndarray, field(repr=False)) for line in lines]
    inputs = [
        ("x", np.ndarray),
        ("gamma", np.ndarray | None),
        ("beta", np.ndarray | None),
        ("eps", float),
        ("axis", tuple),
    ]
    cls = make_dataclass(
        name, [*inputs, *nodes], bases=(StagedCache,), frozen=True, namespace={"LINES": lines}
    )
    cls.__doc__ = doc
    cls.__module__ = module
    return cls


Cache = staged_cache_class(
    "Cache",
    LINES,
    __name__,
    """Inputs and the ten nodes of one forward pass (one field per line of FORWARD_LINES).

    Shapes, for x of shape S (e.g. (D,), (N, D) or (B, L, D)) normalized over `axis` (a tuple):
    gamma, beta: `validation.param_shape` ((D,) for the last axis, (L, D) for the last two),
    or None when skipped. Reduced nodes (sample_mean, sample_var, sve, sqrt_sve, inv_sqrt_sve)
    have shape S with S[a] = 1 for every a in axis; every other node has shape S.
    `axis` is stored negative, so it still names the same axes if a stack axis is prepended.
    """,
)


def _position(which: tuple[int, ...], trailing: bool) -> str:
    """Where a group sits, in words: "in row 2", "at batch element 0, token 1", "number 3"."""
    if not trailing:
        return f"number {which[-1]}"
    if len(which) == 1:
        return f"in row {which[0]}"
    names = ("at batch element", "token")
    return ", ".join(f"{name} {i}" for name, i in zip(names, which, strict=True))


def _check_variance(sve: np.ndarray, axis: tuple[int, ...], eps: float) -> None:
    """sve >= eps, so it can only be 0 when eps = 0 (or rounds to 0) and a variance is 0."""
    zero = sve == 0
    if zero.any():
        # Drop the reduced axes (always 0 in a keepdims index) so the index names the group.
        found = np.argwhere(zero)[0]
        reduced = {a % zero.ndim for a in axis}
        which = tuple(int(i) for k, i in enumerate(found) if k not in reduced)
        trailing = axis == tuple(range(-len(axis), 0))
        group = "vector" if trailing else "feature (normalized over the batch)"
        eps_text = "eps = 0" if eps == 0 else f"eps = {eps:g} rounds to 0 in {sve.dtype.name}"
        where = f"The {group} {_position(which, trailing)}" if which else f"The {group}"
        raise ValueError(
            f"{where} has zero variance (its entries are all equal, or so "
            f"close that their squared differences round to 0) and {eps_text}, so "
            "x_sm / sqrt(var + eps) is 0 / 0. Set eps > 0 or make the entries differ."
        )


def forward(
    x: np.ndarray,
    gamma: np.ndarray | None = None,
    beta: np.ndarray | None = None,
    eps: float = 1e-5,
    axis: int | tuple[int, ...] = -1,
) -> Cache:
    """Staged LayerNorm forward pass.

    x: (D,), (N, D) or (B, L, D). `axis=-1` normalizes each vector over its D features
    (LayerNorm); `axis=(-2, -1)` each (L, D) block, like torch.nn.LayerNorm((L, D)); `axis=0`
    each feature over the batch (BatchNorm's view of the same graph). gamma, beta: of
    `validation.param_shape` ((D,) unless normalizing several trailing axes), or None to skip.
    Returns a Cache whose `out` has x's shape and dtype (float32 stays float32, integers become
    float64). Raises ValueError on any input where the result is undefined, and on an empty x.
    """
    x = check_input_x(x)
    eps = check_eps(eps)
    axis = check_axis(axis, x.ndim)
    gamma, beta = check_params(x, gamma, beta, axis)
    # Stop at sve to name a zero variance before sqrt and 1/x turn it into a generic error.
    after_sve = NODE_NAMES.index("sve") + 1
    with numeric_guard("The forward pass"):
        nodes = run_lines(LINES, {"x": x, "gamma": gamma, "beta": beta}, axis, eps, stop=after_sve)
        _check_variance(nodes["sve"], axis, eps)
        nodes = run_lines(LINES, nodes, axis, eps, first=after_sve)
    return Cache(eps=eps, axis=axis, **nodes)


def forward_from(cache: Cache, node: str, value: np.ndarray) -> dict[str, np.ndarray]:
    """Replace `node` (one of NODE_NAMES, or "x") by `value`; recompute only the nodes after it.

    `value` may have extra leading axes (one per perturbed copy). Returns every node, the
    replaced one included, so callers can read `out` for each copy.
    """
    first = 0 if node == "x" else NODE_NAMES.index(node) + 1
    values = {"x": cache.x, "gamma": cache.gamma, "beta": cache.beta, **cache.nodes, node: value}
    with numeric_guard("The forward pass"):
        return run_lines(LINES, values, cache.axis, cache.eps, first=first)
