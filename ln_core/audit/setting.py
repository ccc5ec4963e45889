"""The numbers every audited formula reads: the student's inputs in float64 (a `Case`) and, for
each document's model, the forward pass and staged backward on them (a `Setting`).

A Case holds C independent cases stacked on a leading axis (C = 1 for the app; a sweep stacks
its seeds so every formula runs once for all of them). Within a case the vectors are
flattened to rows: every document writes its formulas for one vector or one batch of vectors,
so a token batch (B, L, D) is the same V = B * L vectors. Arrays are (C, V, D).

γ differs between stacked cases, while ln_core's forward takes one γ of shape (D,). Only
gx = γ x̂ and out read γ, and the backward from dnormalized_x = dout ⊙ γ down does not read it,
so the staged passes run with γ = 1, β = 0 and the upstream gradient dout ⊙ γ: every node
gradient from dnormalized_x to dx is then the one of the real γ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any, Protocol

import numpy as np

from ln_core.backward import StagedGrads, backward
from ln_core.closed_form import PathTerms, dx_path_terms
from ln_core.forward import Cache, forward, forward_from, run_nodes
from ln_core.gradcheck import ROUND_OFF as DIFFERENCE_ROUND_OFF
from ln_core.gradcheck import TRUNCATION as DIFFERENCE_TRUNCATION
from ln_core.node_check import NODE_UNITS, node_step
from ln_core.residual import (
    ResidualCache,
    ResidualGrads,
    Sublayer,
    make_sublayer,
    residual_backward,
    residual_forward,
)
from ln_core.validation import as_float_array, check_eps, check_input_x, check_params

# Rows k of a D x D Jacobian that the audit compares (all of them when D is at most this):
# every row obeys the same formula, and a D x D matrix per vector would cost D^2 per vector.
JACOBIAN_ROWS = 8


def jacobian_rows(d: int) -> np.ndarray:
    """The row indices k checked in a D x D Jacobian: all, or JACOBIAN_ROWS evenly spaced."""
    if d <= JACOBIAN_ROWS:
        return np.arange(d)
    return np.unique(np.linspace(0, d - 1, JACOBIAN_ROWS).round().astype(int))


@lru_cache(maxsize=8)
def seeded_sublayer(d: int) -> Sublayer:
    """The Residual block page's sublayer at its default seed 0, made once per D."""
    return make_sublayer(d, seed=0)


@lru_cache(maxsize=8)
def sublayer_gain(d: int) -> float:
    """1 + the largest Σ_j |W_ij| of seeded_sublayer(d): how much ∂y/∂x can grow a row."""
    return 1.0 + float(np.max(np.sum(np.abs(seeded_sublayer(d).W), axis=1)))


def per_case_max(a: np.ndarray | float, cases: int) -> np.ndarray:
    """max over everything but the leading case axis, (C,)."""
    return np.max(np.broadcast_to(a, (cases, *np.shape(a)[1:])).reshape(cases, -1), axis=1)


@dataclass(frozen=True)
class Model:
    """What a document assumes: one scalar γ or one per feature, ε or not, which axis it
    normalizes ("features": LayerNorm, each vector over its D features; "batch": each feature
    over the N vectors of the batch, BatchNorm's graph)."""

    gamma: str
    eps: bool
    axis: str

    def describe(self) -> str:
        gamma = "one scalar γ and β" if self.gamma == "scalar" else "one γ and β per feature"
        eps = "σ² + ε under the root" if self.eps else "no ε (σ is the plain standard deviation)"
        axis = (
            "statistics over the D features of each vector (LayerNorm)"
            if self.axis == "features"
            else "statistics over the N vectors of the batch, per feature (BatchNorm's graph)"
        )
        return f"{gamma}; {eps}; {axis}"


class Reference(Protocol):
    """What a reference is computed from: an audit Quantity (ln_core.audit.model), which
    reads a Setting, so this module names only the two parts it calls."""

    compute: Callable[[Setting], np.ndarray]
    scale: Callable[[Setting], Any]


@dataclass(frozen=True)
class Setting:
    """One document's model evaluated on the inputs.

    cache, grads: the staged forward and backward (float64, γ = 1 and upstream dout ⊙ γ, see
    the module docstring). x: (C, V, D), normalized over `cache.axis` (-1: features,
    LayerNorm; -2: the V vectors, BatchNorm). gamma: (C, 1, D) as the model has it (one scalar
    repeated D times for a scalar γ). dy: the upstream gradient, (C, V, D).
    rows: the Jacobian rows k that Jacobian-shaped quantities hold, (R,).
    """

    model: Model
    cache: Cache
    grads: StagedGrads
    gamma: np.ndarray
    beta: np.ndarray
    dy: np.ndarray
    rows: np.ndarray

    # -- the document's symbols, by the lab's names ----------------------------------------

    @property
    def cases(self) -> int:
        return self.x.shape[0]

    @property
    def n(self) -> int:
        """How many entries each statistic averages (D for LayerNorm, N for BatchNorm)."""
        return self.cache.n

    @property
    def x(self) -> np.ndarray:
        return self.cache.x

    @property
    def dxhat(self) -> np.ndarray:
        """dL/dx̂ = dy ⊙ γ, the staged backward's dnormalized_x."""
        return self.grads.dnormalized_x

    @property
    def xhat(self) -> np.ndarray:
        return self.cache.normalized_x

    @property
    def x_sm(self) -> np.ndarray:
        return self.cache.x_sm

    @property
    def s(self) -> np.ndarray:
        """1/sqrt(σ² + ε) per group, kept as size 1 on the reduced axis."""
        return self.cache.inv_sqrt_sve

    @property
    def sigma(self) -> np.ndarray:
        """sqrt(σ² + ε) per group (σ itself in a model without ε)."""
        return self.cache.sqrt_sve

    @property
    def gamma_scalar(self) -> np.ndarray:
        """The one γ of a scalar-γ model, (C, 1, 1)."""
        return self.gamma[..., :1]

    @property
    def offset(self) -> np.ndarray:
        """1 + max(s |x|) per case, (C,): what a few ulp of the largest |x| are worth in units
        of σ, where x − μ cancels them."""
        return 1.0 + self.largest(np.abs(self.x) * self.s)

    def group_sum(self, a: np.ndarray) -> np.ndarray:
        """Σ over the normalized axis, kept as size 1 so it broadcasts back."""
        return np.sum(a, axis=self.cache.axis, keepdims=True)

    def batch_sum(self, a: np.ndarray) -> np.ndarray:
        """Σ over the V vectors of each case: what a per-feature parameter is shared across.
        (C, 1, D)."""
        return np.sum(a, axis=-2, keepdims=True)

    def total(self, a: np.ndarray) -> np.ndarray:
        """Σ over the vectors and features of each case: a parameter shared by all. (C, 1, 1)."""
        return np.sum(a, axis=(-2, -1), keepdims=True)

    def largest(self, a: np.ndarray | float) -> np.ndarray:
        """max over everything but the case axis, (C,)."""
        return per_case_max(a, self.cases)

    def vector_shape(self, last: int) -> tuple[int, ...]:
        """(C, V, last): one value per vector and `last` per vector."""
        return (*self.x.shape[:-1], last)

    # -- Jacobian-shaped values: (C, V, R, D), entry [c, v, r, l] for k = rows[r] -------------

    def at_rows(self, a: np.ndarray) -> np.ndarray:
        """A per-entry value (C, V, D) at k = rows, shaped (C, V, R, 1)."""
        return a[..., self.rows, None]

    def at_columns(self, a: np.ndarray) -> np.ndarray:
        """A per-entry value (C, V, D) at every l, or a per-vector one (C, V, 1): (C, V, 1, D)."""
        return a[..., None, :]

    @cached_property
    def _diagonal(self) -> np.ndarray:
        return self.rows[:, None] == np.arange(self.x.shape[-1])

    def diagonal(self) -> np.ndarray:
        """True where k = l, (R, D)."""
        return self._diagonal

    def off_diagonal(self) -> np.ndarray:
        return ~self._diagonal

    @cached_property
    def xhat_jacobian(self) -> PathTerms:
        """∂x̂_k/∂x_l split by path (direct, through μ, through σ²), rows k of `rows`.

        Row k of each path term is that path's dx for the upstream gradient dx̂ = e_k: the
        closed form that ln_core's Jacobian is built from, applied to R one-hot rows.
        """
        one_hot = np.broadcast_to(
            self._diagonal.astype(np.float64), self.vector_shape(0)[:-1] + self._diagonal.shape
        )
        terms = dx_path_terms(one_hot, self.at_columns(self.xhat), self.at_columns(self.s), axis=-1)
        return PathTerms(
            direct=terms.direct,
            through_mean=np.broadcast_to(terms.through_mean, terms.direct.shape),
            through_variance=terms.through_variance,
        )

    # -- references computed once per setting ------------------------------------------------

    @cached_property
    def _references(self) -> dict[Reference, tuple[np.ndarray, np.ndarray]]:
        return {}

    def reference(self, quantity: Reference) -> tuple[np.ndarray, np.ndarray]:
        """The quantity's reference value and natural size per case, (C,), computed once."""
        if quantity not in self._references:
            value = np.asarray(quantity.compute(self), dtype=np.float64)
            scale = per_case_max(np.asarray(quantity.scale(self), np.float64), self.cases)
            self._references[quantity] = (value, scale)
        return self._references[quantity]

    # -- central differences -----------------------------------------------------------------

    @cached_property
    def _x_moved(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
        """The statistics (up to sqrt_sve) of R copies of each vector with x_j (j = rows) moved
        by + and - its step, and the step actually taken, (C, V, R)."""
        x, hot = self.x, self._diagonal
        shift = node_step(self.cache, "x")[..., self.rows, None] * hot
        plus, minus = x[..., None, :] + shift, x[..., None, :] - shift

        def statistics(moved: np.ndarray) -> dict[str, np.ndarray]:
            return run_nodes({"x": moved}, self.cache.axis, self.cache.eps, through="sqrt_sve")

        return statistics(plus), statistics(minus), (plus - minus)[..., hot]

    def x_derivative(self, node: str) -> np.ndarray:
        """∂node/∂x_j for j = rows by central differences, (C, V, R) + node's last axis; node
        is one of sample_mean .. sqrt_sve."""
        plus, minus, step = self._x_moved
        return (plus[node] - minus[node]) / step[..., None]

    @cached_property
    def _node_moves(self) -> dict[str, tuple[dict, dict, np.ndarray]]:
        return {}

    def _node_moved(self, node: str) -> tuple[dict, dict, np.ndarray]:
        """Every node with `node` moved up and down by its step (x held), and the step taken."""
        if node not in self._node_moves:
            value = getattr(self.cache, node)
            h = node_step(self.cache, node)
            self._node_moves[node] = (
                forward_from(self.cache, node, value + h),
                forward_from(self.cache, node, value - h),
                (value + h) - (value - h),
            )
        return self._node_moves[node]

    def node_derivative(self, target: str, node: str) -> np.ndarray:
        """∂target/∂node for a per-group node (sample_mean, sample_var, sqrt_sve), holding x:
        the node moved by ± its step, the nodes after it recomputed. target's shape."""
        up, down, step = self._node_moved(node)
        return (up[target] - down[target]) / step

    def sublayer_output_derivative(self) -> np.ndarray:
        """∂C/∂y_k for the sublayer's output y, k = rows, by central differences with x held:
        z = x + y moves by ± the step of z's own LayerNorm, which alone re-runs. (C, V, R)."""
        block = self.residual[0]
        z, hot = block.z, self._diagonal
        shift = node_step(block.ln, "x")[..., self.rows, None] * hot
        plus, minus = z[..., None, :] + shift, z[..., None, :] - shift

        def normalized(moved: np.ndarray) -> np.ndarray:
            nodes = run_nodes({"x": moved}, (-1,), block.ln.eps, through="normalized_x")
            return nodes["normalized_x"]

        # The block's LayerNorm has γ = 1 and the upstream dout ⊙ γ (see the module docstring).
        upstream = (self.dy * self.gamma)[..., None, :]
        change = np.sum(upstream * (normalized(plus) - normalized(minus)), axis=-1)
        return change / (plus - minus)[..., hot]

    def difference_bound(self, moved: str, read: str, scale: np.ndarray) -> np.ndarray:
        """How far a central difference (x or node `moved`, node `read`) may sit from the
        exact derivative, per case (C,); scale: the derivative's natural size per case.

        Round-off: `read` is recomputed with an error of up to a chain of 2 + log2 n roundings
        of its own size (here and on the moved copies) and, when x moves, of the mean's error
        (a few ulp of the group's largest |x|, M) times how much `read` moves with the mean (at
        most n times the derivative's size); divided by the step. Truncation: (h / unit)^2
        times the size, times (1 + max|x̂|)^2 for how fast the derivative itself bends.
        """
        machine_eps = float(np.finfo(np.float64).eps)
        chain = 2.0 + np.log2(self.n)
        cases = self.cases
        # The sublayer's output y moves z, the input of the block's own LayerNorm.
        cache = self.residual[0].ln if moved == "y" else self.cache
        moved = "x" if moved == "y" else moved
        h = node_step(cache, moved)
        inverse_step = per_case_max(1.0 / h, cases)
        value = per_case_max(np.abs(getattr(cache, read)), cases)
        if moved == "x":
            unit = cache.sqrt_sve
            offset = per_case_max(np.abs(cache.x), cases) * self.n * scale
        else:
            unit = getattr(cache, NODE_UNITS[moved])
            offset = 0.0
            # What the difference subtracts are the moved copies' values: a node that is 0 here
            # (the variance of a single entry) is not 0 once the mean has moved.
            up, down, _ = self._node_moved(moved)
            moved_values = np.maximum(np.abs(up[read]), np.abs(down[read]))
            value = np.maximum(value, per_case_max(moved_values, cases))
        round_off = machine_eps * chain * (value + offset) * inverse_step
        bend = (1.0 + self.largest(np.abs(cache.normalized_x))) ** 2
        truncation = per_case_max((h / unit) ** 2, cases) * scale * bend
        return DIFFERENCE_ROUND_OFF * round_off + DIFFERENCE_TRUNCATION * truncation

    # -- the residual block around LayerNorm (document 000) ---------------------------------

    @cached_property
    def residual(self) -> tuple[ResidualCache, ResidualGrads]:
        """z = x + F(x) with the lab's seeded sublayer F(x) = tanh(x W + c), then LayerNorm of
        z in this model (γ = 1 with the upstream dout ⊙ γ, as above); and its backward."""
        d = self.x.shape[-1]
        block = residual_forward(
            self.x, seeded_sublayer(d), np.ones(d), np.zeros(d), self.cache.eps
        )
        return block, residual_backward(self.dy * self.gamma, block)


@dataclass(frozen=True)
class Case:
    """Inputs in float64, whatever dtype the app shows: C cases stacked on a leading axis.

    x, dout: (C, V, D); gamma, beta: (C, D); eps: the student's ε (documents without ε are
    judged at 0). settings: one Setting per model and ε, built on first use; judged: the
    AuditResults (ln_core.audit.model) of entries already judged, by entry id and ε. Cases
    made by with_eps share both.
    """

    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dout: np.ndarray
    eps: float
    settings: dict[tuple[Model, float], Setting] = field(
        default_factory=dict, repr=False, compare=False
    )
    judged: dict[tuple[str, float], list[Any]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def of(
        cls, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float
    ) -> Case:
        """One case. x: (D,), (N, D) or (B, L, D); gamma, beta: (D,); dout: x's shape.
        Raises ValueError."""
        return cls.stack([(x, gamma, beta, dout)], eps)

    @classmethod
    def stack(
        cls,
        inputs: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
        eps: float,
    ) -> Case:
        """Several cases (x, gamma, beta, dout) of one shape, judged together. Raises
        ValueError."""
        rows = []
        for x, gamma, beta, dout in inputs:
            x = check_input_x(x)
            gamma, beta = check_params(x, gamma, beta)
            dout = as_float_array("dout", dout, np.dtype(np.float64))
            if dout.shape != x.shape:
                raise ValueError(f"dout must have x's shape {x.shape}, got {dout.shape}.")
            d = x.shape[-1]
            rows.append((x.astype(np.float64).reshape(-1, d), gamma, beta, dout.reshape(-1, d)))
        x, gamma, beta, dout = (np.stack([r[i] for r in rows]) for i in range(4))
        return cls(
            x=x,
            gamma=gamma.astype(np.float64),
            beta=beta.astype(np.float64),
            dout=dout,
            eps=check_eps(eps),
        )

    @property
    def d(self) -> int:
        return self.x.shape[-1]

    @property
    def count(self) -> int:
        return self.x.shape[0]

    def with_eps(self, eps: float) -> Case:
        """The same inputs at another ε. Both cases fill and read the same settings, so a
        model without ε is evaluated once for all of them."""
        return replace(self, eps=check_eps(eps))

    def eps_for(self, model: Model) -> float:
        return self.eps if model.eps else 0.0

    def setting(self, model: Model) -> Setting:
        """The forward and staged backward in `model`. Raises ValueError where it is undefined
        (a zero variance without ε)."""
        key = (model, self.eps_for(model))
        if key not in self.settings:
            gamma = self.gamma[:, None, :]
            if model.gamma == "scalar":
                gamma = np.broadcast_to(np.mean(gamma, axis=-1, keepdims=True), gamma.shape)
            axis = -1 if model.axis == "features" else -2
            ones, zeros = np.ones(self.d), np.zeros(self.d)
            cache = forward(self.x, ones, zeros, self.eps_for(model), axis)
            self.settings[key] = Setting(
                model=model,
                cache=cache,
                grads=backward(self.dout * gamma, cache),
                gamma=gamma,
                beta=self.beta[:, None, :],
                dy=self.dout,
                rows=jacobian_rows(self.d),
            )
        return self.settings[key]
