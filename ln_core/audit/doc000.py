"""Document 000, the residual-connection derivation: one vector z of N features, one scalar γ
and β, σ without ε, a loss C. Its lines are judged with γ = the mean of the student's γ.

Symbols by the lab's names: N = st.n, z - μ = st.x_sm, σ = st.sigma, w = st.xhat.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.entries import load_entries
from ln_core.audit.model import Entry, Model
from ln_core.audit.setting import Case, Setting

MODEL = Model(gamma="scalar", eps=False, axis="features")
PER_FEATURE = Model(gamma="per-feature", eps=False, axis="features")


def dgamma_product(st: Setting) -> np.ndarray:
    """The row ∂C/∂y times the column (z - μ)/σ: Σ_k ∂C/∂y_k (z_k - μ)/σ, summed over vectors."""
    return st.total(st.dy * st.x_sm / st.sigma)


def dgamma_averaged(st: Setting) -> np.ndarray:
    return dgamma_product(st) / st.n


def dbeta_product(st: Setting) -> np.ndarray:
    """The row ∂C/∂y times the column ∂y/∂β = 1: Σ_k ∂C/∂y_k, summed over vectors."""
    return st.total(st.dy)


def dbeta_averaged(st: Setting) -> np.ndarray:
    return dbeta_product(st) / st.n


def _times_j(st: Setting, row: np.ndarray) -> np.ndarray:
    """row · J with J_kl = N δ_kl - 1 - w_k w_l, summed term by term (no N x N matrix). (V, N)."""
    w = st.xhat
    return st.n * row - st.group_sum(row) - w * st.group_sum(row * w)


def dz(st: Setting) -> np.ndarray:
    """γ/(Nσ) (∂C/∂y · J)."""
    return st.gamma_scalar / (st.n * st.sigma) * _times_j(st, st.dy)


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


def _sublayer_jacobian_times(st: Setting, row: np.ndarray) -> np.ndarray:
    """row · ∂y/∂x for the sublayer y = tanh(x W + c): ∂y_j/∂x_i = (1 - y_j²) W_ij. (V, D)."""
    block, _ = st.residual
    return (row * (1.0 - block.f**2)) @ block.sublayer.W.T


def _block_dz(st: Setting) -> np.ndarray:
    """∂C/∂z of the block's LayerNorm (the formula above, on z = x + y)."""
    return st.residual[1].ln.dx


ENTRIES: tuple[Entry, ...] = load_entries(
    "000",
    {
        "MODEL": MODEL,
        "_block_dz": _block_dz,
        "_sublayer_jacobian_times": _sublayer_jacobian_times,
        "dbeta_averaged": dbeta_averaged,
        "dbeta_product": dbeta_product,
        "dgamma_averaged": dgamma_averaged,
        "dgamma_product": dgamma_product,
        "dz": dz,
        "np": np,
        "per_feature_note": per_feature_note,
        "q": q,
    },
)
