"""The numbers every audited formula reads: the student's inputs in float64 (a `Case`) and, for
each document's model, the forward pass and staged backward on them (a `Setting`).

All vectors are flattened to rows (V, D): every document writes its formulas for one vector
(or one batch of vectors), so a token batch (B, L, D) is the same V = B * L vectors.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

import numpy as np

from ln_core.audit.model import AuditResult, Model, Quantity
from ln_core.backward import StagedGrads, backward
from ln_core.closed_form import PathTerms, dx_path_terms
from ln_core.forward import Cache, forward, forward_from
from ln_core.node_check import node_step
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
JACOBIAN_ROWS = 16


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


@dataclass(frozen=True)
class Setting:
    """One document's model evaluated on the inputs.

    cache, grads: the staged forward and backward (float64). x has shape (V, D) and is
    normalized over `cache.axis` (-1: features, LayerNorm; -2: the V vectors, BatchNorm).
    rows: the Jacobian rows k that Jacobian-shaped quantities hold, (R,).
    """

    model: Model
    cache: Cache
    grads: StagedGrads
    rows: np.ndarray

    # -- the document's symbols, by the lab's names ----------------------------------------

    @property
    def n(self) -> int:
        """How many entries each statistic averages (D for LayerNorm, N for BatchNorm)."""
        return self.cache.n

    @property
    def x(self) -> np.ndarray:
        return self.cache.x

    @property
    def dy(self) -> np.ndarray:
        return self.grads.dout

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
    def var(self) -> np.ndarray:
        return self.cache.sample_var

    @property
    def gamma(self) -> np.ndarray:
        """γ as the model has it: (D,) per feature; for one scalar γ, D copies of it."""
        return self.cache.gamma

    def group_sum(self, a: np.ndarray) -> np.ndarray:
        """Σ over the normalized axis, kept as size 1 so it broadcasts back."""
        return np.sum(a, axis=self.cache.axis, keepdims=True)

    def batch_sum(self, a: np.ndarray) -> np.ndarray:
        """Σ over the V vectors: what a per-feature parameter is shared across. (D,)."""
        return np.sum(a, axis=0)

    @cached_property
    def _references(self) -> dict[Quantity, tuple[np.ndarray, float]]:
        return {}

    def reference(self, quantity: Quantity) -> tuple[np.ndarray, float]:
        """The quantity's reference value and natural size in this setting, computed once."""
        if quantity not in self._references:
            value = np.asarray(quantity.compute(self), dtype=np.float64)
            self._references[quantity] = (value, quantity.scale(self))
        return self._references[quantity]

    # -- Jacobian-shaped values: (V, R, D), entry [v, r, l] for k = rows[r] -------------------

    def at_rows(self, a: np.ndarray) -> np.ndarray:
        """A per-entry value (V, D) at k = rows, shaped (V, R, 1)."""
        return a[:, self.rows, None]

    def at_columns(self, a: np.ndarray) -> np.ndarray:
        """A per-entry value (V, D) at every l, shaped (V, 1, D); per-vector (V, 1) stays."""
        return a[:, None, :]

    @cached_property
    def _diagonal(self) -> np.ndarray:
        return (self.rows[:, None] == np.arange(self.x.shape[-1]))[None]

    def diagonal(self) -> np.ndarray:
        """True where k = l, (1, R, D)."""
        return self._diagonal

    def off_diagonal(self) -> np.ndarray:
        return ~self._diagonal

    @cached_property
    def xhat_jacobian(self) -> PathTerms:
        """∂x̂_k/∂x_l split by path (direct, through μ, through σ²), rows k of `rows`.

        Row k of each path term is that path's dx for the upstream gradient dx̂ = e_k: the
        closed form that ln_core's Jacobian is built from, applied to R one-hot rows.
        """
        v, d = self.x.shape
        one_hot = np.broadcast_to(self._diagonal.astype(np.float64), (v, len(self.rows), d))
        terms = dx_path_terms(one_hot, self.at_columns(self.xhat), self.s[:, None, :], axis=-1)
        return PathTerms(
            direct=terms.direct,
            through_mean=np.broadcast_to(terms.through_mean, terms.direct.shape),
            through_variance=terms.through_variance,
        )

    # -- central differences -----------------------------------------------------------------

    @cached_property
    def _x_moved(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
        """Every node for R copies of each vector with x_j (j = rows) moved by + and - its step,
        and the step actually taken, (V, R). Only those copies are normalized again."""
        x = self.x
        hot = self.rows[:, None] == np.arange(x.shape[-1])
        shift = node_step(self.cache, "x")[:, self.rows, None] * hot
        plus, minus = x[:, None, :] + shift, x[:, None, :] - shift
        return (
            forward_from(self.cache, "x", plus),
            forward_from(self.cache, "x", minus),
            (plus - minus)[:, hot],
        )

    def x_derivative(self, node: str) -> np.ndarray:
        """∂node/∂x_j for j = rows by central differences, (V, R) + node's last axis (1 or D)."""
        plus, minus, step = self._x_moved
        return (plus[node] - minus[node]) / step[..., None]

    @cached_property
    def _node_moves(self) -> dict[str, tuple[dict, dict, np.ndarray]]:
        return {}

    def node_derivative(self, target: str, node: str) -> np.ndarray:
        """∂target/∂node for a per-group node (sample_mean, sample_var, sqrt_sve), holding x:
        the node moved by ± its step, the nodes after it recomputed. target's shape."""
        if node not in self._node_moves:
            value = getattr(self.cache, node)
            h = node_step(self.cache, node)
            self._node_moves[node] = (
                forward_from(self.cache, node, value + h),
                forward_from(self.cache, node, value - h),
                (value + h) - (value - h),
            )
        up, down, step = self._node_moves[node]
        return (up[target] - down[target]) / step

    # -- the residual block around LayerNorm (document 000) ---------------------------------

    @cached_property
    def residual(self) -> tuple[ResidualCache, ResidualGrads]:
        """z = x + F(x) with the lab's seeded sublayer F(x) = tanh(x W + c), then this model's
        LayerNorm of z; and its backward."""
        block = residual_forward(
            self.x,
            seeded_sublayer(self.x.shape[-1]),
            self.gamma,
            self.cache.beta,
            self.cache.eps,
        )
        return block, residual_backward(self.dy, block)


@dataclass(frozen=True)
class Case:
    """The student's inputs in float64, whatever dtype the app shows.

    x, dout: (V, D) rows; gamma, beta: (D,); eps: the student's ε (documents without ε are
    judged at 0). settings: one Setting per model and ε, built on first use; judged: the
    results of entries already judged, by entry id and ε.
    """

    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dout: np.ndarray
    eps: float
    settings: dict[tuple[Model, float], Setting] = field(
        default_factory=dict, repr=False, compare=False
    )
    judged: dict[tuple[str, float], AuditResult] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def of(
        cls, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float
    ) -> Case:
        """x: (D,), (N, D) or (B, L, D); gamma, beta: (D,); dout: x's shape. Raises ValueError."""
        x = check_input_x(x)
        gamma, beta = check_params(x, gamma, beta)
        dout = as_float_array("dout", dout, np.dtype(np.float64))
        if dout.shape != x.shape:
            raise ValueError(f"dout must have x's shape {x.shape}, got {dout.shape}.")
        d = x.shape[-1]
        return cls(
            x=x.astype(np.float64).reshape(-1, d),
            gamma=gamma.astype(np.float64),
            beta=beta.astype(np.float64),
            dout=dout.reshape(-1, d),
            eps=check_eps(eps),
        )

    @property
    def d(self) -> int:
        return self.x.shape[-1]

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
            gamma = np.full(self.d, np.mean(self.gamma)) if model.gamma == "scalar" else self.gamma
            axis = -1 if model.axis == "features" else 0
            cache = forward(self.x, gamma, self.beta, self.eps_for(model), axis)
            self.settings[key] = Setting(
                model=model,
                cache=cache,
                grads=backward(self.dout, cache),
                rows=jacobian_rows(self.d),
            )
        return self.settings[key]
