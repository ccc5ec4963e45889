"""Document 002, the 'transpose of batch normalization' notes: a batch of m vectors of H
features, one γ per feature, ε inside the root. Symbols by the lab's names: H = st.n,
x - μ = st.x_sm, (σ² + ε)^(-1/2) = st.s, ∂L/∂x̂ = dy ⊙ γ.

Lines that combine earlier partials ((3), (4)) are evaluated with the true partials, so each
line is judged on its own step.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.entries import load_entries
from ln_core.audit.model import Entry, Model
from ln_core.audit.setting import Setting

MODEL = Model(gamma="per-feature", eps=True, axis="features")


def _expanded(st: Setting, mean_weight: np.ndarray | float, variance_factor: float) -> np.ndarray:
    """dx̂ s - mean_weight s (1/H) Σ_j dx̂_j - variance_factor s³ (x - μ) Σ_j dx̂_j (x_j - μ)."""
    g, s = st.dy * st.gamma, st.s
    mean_term = mean_weight * s * st.group_sum(g) / st.n
    return g * s - mean_term - variance_factor * s**3 * st.x_sm * st.group_sum(g * st.x_sm)


def _bracket(st: Setting, weights: np.ndarray) -> np.ndarray:
    """s/H [H dx̂ - Σ_j dx̂_j - x̂ Σ_j dx̂_j weights_j]."""
    g = st.dy * st.gamma
    return st.s / st.n * (st.n * g - st.group_sum(g) - st.xhat * st.group_sum(g * weights))


def dmu_eq7(st: Setting) -> np.ndarray:
    return -st.s * st.group_sum(st.dy * st.gamma)


ENTRIES: tuple[Entry, ...] = load_entries(
    "002",
    {
        "MODEL": MODEL,
        "_bracket": _bracket,
        "_expanded": _expanded,
        "dmu_eq7": dmu_eq7,
        "np": np,
        "q": q,
    },
)
