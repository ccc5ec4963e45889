"""Document 001, the three-path ∇X derivation: one vector X of n features, one γ per feature,
σ without ε. Symbols by the lab's names: n = st.n, X - μ = st.x_sm, σ = st.sigma, X̂ = st.xhat.

Jacobian-shaped lines are compared entry by entry on rows of Setting.rows: value [v, r, l] is
the entry for i = rows[r] (or j = rows[r] for a derivative with respect to X_j) and l.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import quantities as q
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


_HOLD = (
    "Read as a partial derivative: X̂ = (X − μ)/σ with the other two of X, μ, σ held fixed, as "
    "the components' headings say."
)

ENTRIES: tuple[Entry, ...] = (
    Entry(
        id="001-dxhat",
        document="001",
        step="step 1: ∇X̂",
        line=r"\nabla_{\hat{X}} = \frac{\partial \mathcal{L}}{\partial \hat{X}} = "
        r"\frac{\partial \mathcal{L}}{\partial Y} \cdot \frac{\partial Y}{\partial \hat{X}} = "
        r"\nabla_Y \odot \gamma",
        model=MODEL,
        quantity=q.DXHAT,
        formula=lambda st: st.dy * st.gamma,
    ),
    Entry(
        id="001-chain",
        document="001",
        step="step 2: the chain rule for ∇X",
        line=r"\nabla_X = \frac{\partial \hat{X}}{\partial X} \cdot \nabla_{\hat{X}}",
        model=MODEL,
        quantity=q.DX,
        formula=lambda st: q.applied_jacobian(st, st.dxhat),
        reading="The Jacobian ∂X̂/∂X times the column ∇X̂, with ∂X̂/∂X from ln_core (it is "
        "symmetric, so the order of the product does not matter).",
    ),
    Entry(
        id="001-direct",
        document="001",
        step="component 1: the direct effect",
        line=r"\frac{\partial \hat{X}}{\partial X}_{\text{direct}} = \frac{1}{\sigma}"
        r"\mathbf{I}",
        model=MODEL,
        quantity=q.XHAT_DIRECT,
        formula=lambda st: st.diagonal() / _sigma3(st),
    ),
    Entry(
        id="001-dmu",
        document="001",
        step="component 2: ∂μ/∂X_j",
        line=r"\frac{\partial \mu}{\partial X_j} = \frac{1}{n}",
        model=MODEL,
        quantity=q.DMU_DX,
        formula=lambda st: np.full(st.vector_shape(len(st.rows)), 1.0 / st.n),
    ),
    Entry(
        id="001-dxhat-dmu",
        document="001",
        step="component 2: ∂X̂_i/∂μ",
        line=r"\frac{\partial \hat{X}_i}{\partial \mu} = -\frac{1}{\sigma}",
        model=MODEL,
        quantity=q.XHAT_DMU,
        formula=lambda st: np.broadcast_to(-1.0 / st.sigma, st.x.shape),
        reading=_HOLD,
    ),
    Entry(
        id="001-via-mu",
        document="001",
        step="component 2: the effect through μ",
        line=r"\frac{\partial \hat{X}_i}{\partial X_j}_{\text{via }\mu} = \frac{\partial "
        r"\hat{X}_i}{\partial \mu} \cdot \frac{\partial \mu}{\partial X_j} = -\frac{1}{\sigma} "
        r"\cdot \frac{1}{n} = -\frac{1}{n\sigma}",
        model=MODEL,
        quantity=q.XHAT_VIA_MEAN,
        formula=lambda st: np.broadcast_to(
            -1.0 / (st.n * _sigma3(st)), st.xhat_jacobian.direct.shape
        ),
    ),
    Entry(
        id="001-dsigma-chain",
        document="001",
        step="component 3: ∂σ/∂X_j from σ² = (1/n) Σ (X_i − μ)²",
        line=r"{2\sigma} \cdot \frac{\partial \sigma}{\partial X_j} = \frac{\partial}{\partial "
        r"X_j}\left(\frac{1}{n}\sum_{i=1}^n(X_i-\mu)^2\right) \quad\Longrightarrow\quad "
        r"\frac{\partial \sigma}{\partial X_j} = \frac{1}{2\sigma} \cdot \frac{\partial}"
        r"{\partial X_j}\left(\frac{1}{n}\sum_{i=1}^n(X_i-\mu)^2\right)",
        model=MODEL,
        quantity=q.DSIGMA_DX,
        formula=lambda st: q.DVAR_DX.compute(st) / (2 * st.sigma),
        reading="The derivative of the variance on the right is taken from central "
        "differences, so the line is judged as the step from ∂σ²/∂X_j to ∂σ/∂X_j.",
    ),
    Entry(
        id="001-dsquare-own",
        document="001",
        step="component 3: the direct effect on (X_j − μ)²",
        line=r"\frac{\partial}{\partial X_j}(X_j-\mu)^2 = 2(X_j-\mu) \cdot \left(1 - "
        r"\frac{\partial \mu}{\partial X_j}\right) = 2(X_j-\mu) \cdot \left(1 - \frac{1}{n}"
        r"\right)",
        model=MODEL,
        quantity=q.DSQUARE_DX,
        formula=lambda st: np.broadcast_to(
            2 * st.at_rows(st.x_sm) * (1 - 1 / st.n), st.xhat_jacobian.direct.shape
        ),
        where=Setting.diagonal,
    ),
    Entry(
        id="001-dsquare-other",
        document="001",
        step="component 3: the effect through μ on (X_i − μ)², i ≠ j",
        line=r"\frac{\partial}{\partial X_j}(X_i-\mu)^2 = 2(X_i-\mu) \cdot \left(- "
        r"\frac{\partial \mu}{\partial X_j}\right) = -2(X_i-\mu) \cdot \frac{1}{n}",
        model=MODEL,
        quantity=q.DSQUARE_DX,
        formula=lambda st: np.broadcast_to(
            -2 * st.at_columns(st.x_sm) / st.n, st.xhat_jacobian.direct.shape
        ),
        where=Setting.off_diagonal,
    ),
    Entry(
        id="001-dsigma-combined",
        document="001",
        step="component 3: ∂σ/∂X_j, the two effects combined",
        line=r"\frac{\partial \sigma}{\partial X_j} = \frac{1}{2\sigma} \cdot \frac{1}{n} \cdot "
        r"\left(2(X_j-\mu)\left(1-\frac{1}{n}\right) - \sum_{i \neq j}2(X_i-\mu)\frac{1}{n}"
        r"\right)",
        model=MODEL,
        quantity=q.DSIGMA_DX,
        formula=dsigma_combined,
    ),
    Entry(
        id="001-dsigma",
        document="001",
        step="component 3: ∂σ/∂X_j simplified",
        line=r"\frac{\partial \sigma}{\partial X_j} = \frac{1}{n\sigma}(X_j-\mu)",
        model=MODEL,
        quantity=q.DSIGMA_DX,
        formula=lambda st: st.x_sm[..., st.rows] / (st.n * st.sigma),
    ),
    Entry(
        id="001-dsigma-xhat",
        document="001",
        step="component 3: ∂σ/∂X_j in terms of X̂",
        line=r"\frac{\partial \sigma}{\partial X_j} = \frac{1}{n}\hat{X}_j",
        model=MODEL,
        quantity=q.DSIGMA_DX,
        formula=lambda st: st.xhat[..., st.rows] / st.n,
    ),
    Entry(
        id="001-dxhat-dsigma",
        document="001",
        step="component 3: ∂X̂_i/∂σ",
        line=r"\frac{\partial \hat{X}_i}{\partial \sigma} = -\frac{X_i-\mu}{\sigma^2} = "
        r"-\frac{\hat{X}_i}{\sigma}",
        model=MODEL,
        quantity=q.XHAT_DSIGMA,
        formula=lambda st: -st.x_sm / st.sigma**2,
        reading=_HOLD,
    ),
    Entry(
        id="001-via-sigma",
        document="001",
        step="component 3: the effect through σ",
        line=r"\frac{\partial \hat{X}_i}{\partial X_j}_{\text{via }\sigma} = \frac{\partial "
        r"\hat{X}_i}{\partial \sigma} \cdot \frac{\partial \sigma}{\partial X_j} = "
        r"-\frac{\hat{X}_i}{\sigma} \cdot \frac{1}{n}\hat{X}_j = -\frac{1}{n\sigma}\hat{X}_i"
        r"\hat{X}_j",
        model=MODEL,
        quantity=q.XHAT_VIA_VAR,
        formula=lambda st: -st.at_rows(st.xhat) * st.at_columns(st.xhat) / (st.n * _sigma3(st)),
    ),
    Entry(
        id="001-dx-i",
        document="001",
        step="all three components, entry i",
        line=r"\nabla_{X_i} = \left(\frac{\partial \hat{X}}{\partial X}\right)_{i,:}\cdot "
        r"\nabla_{\hat{X}} = \frac{1}{\sigma}\nabla_{\hat{X}_i} - \frac{1}{n\sigma}"
        r"\sum_{j=1}^n \nabla_{\hat{X}_j} - \frac{\hat{X}_i}{n\sigma}\sum_{j=1}^n "
        r"\nabla_{\hat{X}_j}\hat{X}_j",
        model=MODEL,
        quantity=q.DX,
        formula=lambda st: three_terms(st, st.dxhat),
    ),
    Entry(
        id="001-dx-vector",
        document="001",
        step="in vector notation",
        line=r"\nabla_X = \frac{1}{\sigma}\nabla_{\hat{X}} - \frac{1}{n\sigma}\mathbf{1}"
        r"\sum_{i=1}^n \nabla_{\hat{X}_i} - \frac{1}{n\sigma}\hat{X} \odot \left(\sum_{i=1}^n "
        r"\nabla_{\hat{X}_i}\hat{X}_i\right)",
        model=MODEL,
        quantity=q.DX,
        formula=lambda st: three_terms(st, st.dxhat),
    ),
    Entry(
        id="001-dx-substituted",
        document="001",
        step="with ∇X̂ = ∇Y ⊙ γ substituted",
        line=r"\nabla_X = \frac{1}{\sigma}\left(\nabla_Y \odot \gamma - \frac{1}{n}\mathbf{1}"
        r"\sum_{i=1}^n (\nabla_Y \odot \gamma)_i - \hat{X} \odot \frac{1}{n}\sum_{i=1}^n"
        r"(\nabla_Y \odot \gamma \odot \hat{X})_i\right)",
        model=MODEL,
        quantity=q.DX,
        formula=lambda st: three_terms(st, st.dy * st.gamma),
    ),
    Entry(
        id="001-dx-compact",
        document="001",
        step="the compact form",
        line=r"\nabla_X = \frac{1}{\sigma}\left(\nabla_Y \odot \gamma - \left(\frac{1}{n}"
        r"\hat{X} \cdot (\nabla_Y \odot \gamma)\right) \odot \hat{X} - \frac{1}{n}\nabla_Y "
        r"\cdot \gamma \right)",
        model=MODEL,
        quantity=q.DX,
        formula=compact,
        reading="Both '·' are read as dot products over the features (one number per "
        "vector), as the line before writes the same sums.",
    ),
)
