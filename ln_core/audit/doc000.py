"""Document 000, the residual-connection derivation: one vector z of N features, one scalar γ
and β, σ without ε, a loss C. Its lines are judged with γ = the mean of the student's γ.

Its formulas (doc000.toml) name N as N, z − μ as x_sm, σ as σ and w as xhat.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit.entries import load_entries
from ln_core.audit.model import Entry
from ln_core.audit.setting import Case, Model, Setting

MODEL = Model(gamma="scalar", eps=False, axis="features")
PER_FEATURE = Model(gamma="per-feature", eps=False, axis="features")


def _times_j(st: Setting, row: np.ndarray) -> np.ndarray:
    """row · J with J_kl = N δ_kl - 1 - w_k w_l, summed term by term (no N x N matrix). (V, N)."""
    w = st.xhat
    return st.n * row - st.group_sum(row) - w * st.group_sum(row * w)


def per_feature_note(case: Case) -> list[str]:
    """How the lab's one-γ-per-feature changes ∂C/∂z, one note per stacked case: a model
    difference, not a mistake."""
    try:
        st = case.setting(PER_FEATURE)
    except ValueError:
        return [""] * case.count
    gap = st.largest(np.abs(st.gamma / (st.n * st.sigma) * _times_j(st, st.dy) - st.grads.dx))
    errors = gap / np.maximum(1e-12, 2 * st.largest(np.abs(st.grads.dx)))
    notes = []
    for c, error in enumerate(errors):
        text = (
            "A note on the model, not a mistake: with one γ per feature, as in the lab, γ_k "
            "multiplies row k of the Jacobian, so ∂C/∂z = 1/(Nσ) ((∂C/∂y ⊙ γ) · J). Putting "
            f"your γ in front of the product, as this formula does for one γ, is off by "
            f"{error:.1e} against the lab's dx at ε = 0"
        )
        uniform = np.all(case.gamma[c] == case.gamma[c][0])
        notes.append(
            f"{text}; your γ is uniform, so both placements agree here." if uniform else f"{text}."
        )
    return notes


ENTRIES: tuple[Entry, ...] = load_entries(
    "000", {"MODEL": MODEL, "per_feature_note": per_feature_note}
)
