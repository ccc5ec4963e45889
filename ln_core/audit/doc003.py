"""Document 003, the per-token transformer derivation: one token's vector of D features, one γ
per feature, ε inside the root; a table sums dγ and dβ over batch and sequence.
Symbols by the lab's names: D = st.n, x - μ = st.x_sm, 1/sqrt(σ² + ε) = st.s, dx̂ = dy ⊙ γ.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.doc001 import three_terms
from ln_core.audit.entries import load_entries
from ln_core.audit.model import Entry, Model
from ln_core.audit.setting import Setting

MODEL = Model(gamma="per-feature", eps=True, axis="features")


def dxhat(st: Setting) -> np.ndarray:
    """Step A: dx̂_j = dy_j γ_j."""
    return st.dy * st.gamma


def dvar(st: Setting) -> np.ndarray:
    """dσ² = Σ_j dx̂_j (x_j - μ) (-1/2 (σ² + ε)^(-3/2))."""
    return st.group_sum(dxhat(st) * st.x_sm * (-0.5 * st.s**3))


def dmu(st: Setting) -> np.ndarray:
    """dμ = -1/sqrt(σ² + ε) Σ_j dx̂_j."""
    return -st.s * st.group_sum(dxhat(st))


def combined(st: Setting) -> np.ndarray:
    """The step the text refers to: dx_i = dx̂_i s + dσ² 2(x_i - μ)/D + dμ/D."""
    return dxhat(st) * st.s + dvar(st) * 2 * st.x_sm / st.n + dmu(st) / st.n


def _expanded(st: Setting) -> np.ndarray:
    """The fully expanded dx: the three terms with (σ² + ε)^(-1/2) in place of 1/σ."""
    return three_terms(st, dxhat(st))


ENTRIES: tuple[Entry, ...] = load_entries(
    "003",
    {
        "MODEL": MODEL,
        "_expanded": _expanded,
        "combined": combined,
        "dmu": dmu,
        "dvar": dvar,
        "dxhat": dxhat,
        "q": q,
    },
)
