"""Document 001, the three-path ∇X derivation: one vector X of n features, one γ per feature,
σ without ε. Symbols by the lab's names: n = st.n, X - μ = st.x_sm, σ = st.sigma, X̂ = st.xhat.

Jacobian-shaped lines are compared entry by entry on rows of Setting.rows: value [v, r, l] is
the entry for i = rows[r] (or j = rows[r] for a derivative with respect to X_j) and l.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.entries import load_entries
from ln_core.audit.model import Entry, Model
from ln_core.audit.setting import Setting

MODEL = Model(gamma="per-feature", eps=False, axis="features")


def three_terms(st: Setting, g: np.ndarray) -> np.ndarray:
    """(1/σ) g - (1/(nσ)) Σ_j g_j - (X̂/(nσ)) Σ_j g_j X̂_j, g = ∇X̂. (C, V, n)."""
    n, s = st.n, 1.0 / st.sigma
    return s * g - s / n * st.group_sum(g) - s / n * st.xhat * st.group_sum(g * st.xhat)


def compact(st: Setting) -> np.ndarray:
    """(1/σ)(∇Y⊙γ - ((1/n) X̂ · (∇Y⊙γ)) ⊙ X̂ - (1/n) ∇Y · γ), both '·' dot products."""
    g = st.dy * st.gamma
    dot_xhat = st.group_sum(st.xhat * g) / st.n
    dot_gamma = st.group_sum(st.dy * st.gamma) / st.n
    return (g - dot_xhat * st.xhat - dot_gamma) / st.sigma


def dsigma_combined(st: Setting) -> np.ndarray:
    """1/(2σ) · 1/n · (2(X_j - μ)(1 - 1/n) - Σ_{i≠j} 2(X_i - μ)/n) at j = rows. (C, V, R)."""
    own = st.x_sm[..., st.rows]
    others = st.group_sum(st.x_sm) - own
    return 1.0 / (2 * st.sigma) / st.n * (2 * own * (1 - 1 / st.n) - 2 * others / st.n)


def _sigma3(st: Setting) -> np.ndarray:
    """σ per vector, shaped (C, V, 1, 1) for Jacobian-shaped values."""
    return st.at_columns(st.sigma)


ENTRIES: tuple[Entry, ...] = load_entries(
    "001",
    {
        "MODEL": MODEL,
        "_sigma3": _sigma3,
        "compact": compact,
        "dsigma_combined": dsigma_combined,
        "np": np,
        "q": q,
        "three_terms": three_terms,
    },
)
