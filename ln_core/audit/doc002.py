"""Document 002, the 'transpose of batch normalization' notes: a batch of m vectors of H
features, one γ per feature, ε inside the root. Symbols by the lab's names: H = st.n,
x - μ = st.x_sm, (σ² + ε)^(-1/2) = st.s, ∂L/∂x̂ = dy ⊙ γ.

Lines that combine earlier partials ((3), (4)) are evaluated with the true partials, so each
line is judged on its own step.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.model import Correction, Entry, Model
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


_TRUE_PARTS = (
    "Each factor is given its true value (∂L/∂x̂, ∂L/∂μ and ∂L/∂σ² from the staged backward), "
    "so this line is judged as the chain rule it states."
)

ENTRIES: tuple[Entry, ...] = (
    Entry(
        id="002-dgamma",
        document="002",
        step="(1) ∂L/∂γ",
        line=r"\frac{\partial \mathcal{L}}{\partial \mathbf{\gamma}} = \sum_{i=1}^{m} "
        r"\frac{\partial \mathcal{L}}{\partial y_i} \odot \mathbf{\hat{x_i}} \tag{1}",
        model=MODEL,
        quantity=q.DGAMMA,
        formula=lambda st: st.batch_sum(st.dy * st.xhat),
        reading="Here i counts the m vectors of the batch (y_i and x̂_i are rows).",
    ),
    Entry(
        id="002-dbeta",
        document="002",
        step="(2) ∂L/∂β",
        line=r"\frac{\partial \mathcal{L}}{\partial \mathbf{\beta}} = \sum_{i=1}^{m} "
        r"\frac{\partial \mathcal{L}}{\partial y_i} \tag{2}",
        model=MODEL,
        quantity=q.DBETA,
        formula=lambda st: st.batch_sum(st.dy),
    ),
    Entry(
        id="002-chain",
        document="002",
        step="(3) the chain rule for ∂L/∂x",
        line=r"\frac{\partial \mathcal{L}}{\partial \mathbf{x}} = \frac{\partial \mathcal{L}}"
        r"{\partial \mathbf{\hat{x}}}\frac{\partial \mathbf{\hat x}}{\partial \mathbf{x}} + "
        r"\frac{\partial \mathcal{L}}{\partial \mu}\frac{\partial \mu }{\partial \mathbf{x}} + "
        r"\frac{\partial \mathcal{L}}{\partial \sigma ^2}\frac{\partial \sigma^2}{\partial "
        r"\mathbf{x}} \tag{3}",
        model=MODEL,
        quantity=q.DX,
        formula=lambda st: (
            st.grads.dnormalized_x * st.s
            + st.grads.dsample_mean / st.n
            + st.grads.dsample_var * 2 * st.x_sm / st.n
        ),
        reading="∂x̂/∂x is the direct part ((σ² + ε)^(−1/2), μ and σ² held), as the first "
        "part below says. " + _TRUE_PARTS,
    ),
    Entry(
        id="002-dxhat",
        document="002",
        step="the first part: ∂L/∂x̂",
        line=r"\frac{\partial \mathcal{L}}{\partial \mathbf{\hat{x}}} = \frac{\partial "
        r"\mathcal{L}}{\partial y} \odot \gamma",
        model=MODEL,
        quantity=q.DXHAT,
        formula=lambda st: st.dy * st.gamma,
    ),
    Entry(
        id="002-dxhat-dx",
        document="002",
        step="the first part: ∂x̂/∂x",
        line=r"\frac{\partial \mathbf{\hat x}}{\partial \mathbf{x}} = (\sigma^2 + "
        r"\epsilon)^{-\frac{1}{2}}",
        model=MODEL,
        quantity=q.XHAT_DIRECT,
        formula=lambda st: st.diagonal() * st.at_columns(st.s),
        reading="Read as the direct part of ∂x̂/∂x, μ and σ² held: (σ² + ε)^(−1/2) on the "
        "diagonal, 0 elsewhere. The paths through μ and σ² are the other two terms of the "
        "chain rule (3).",
    ),
    Entry(
        id="002-dmu-chain",
        document="002",
        step="(4) ∂L/∂μ by the chain rule",
        line=r"\frac{\partial \mathcal{L}}{\partial \mu} = \frac{\partial \mathcal{L}}{\partial "
        r"\mathbf{\hat{x}}} \frac{\partial{\mathbf{\hat{x}}}}{\partial \mu} + \frac{\partial "
        r"\mathcal{L}}{\partial \sigma^2}\frac{\partial \sigma^2}{\partial \mu} \tag{4}",
        model=MODEL,
        quantity=q.DMU,
        formula=lambda st: (
            -st.s * st.group_sum(st.grads.dnormalized_x)
            + st.grads.dsample_var * (-2.0 / st.n) * st.group_sum(st.x_sm)
        ),
        reading="∂L/∂x̂ ∂x̂/∂μ is a row times a column, a sum over the H features. " + _TRUE_PARTS,
    ),
    Entry(
        id="002-dxhat-dmu",
        document="002",
        step="(5) ∂x̂/∂μ",
        line=r"\frac{\partial \mathbf{\hat{x}}}{\partial \mu} = -(\sigma^2 + \epsilon)^"
        r"{-\frac{1}{2}} \tag{5}",
        model=MODEL,
        quantity=q.XHAT_DMU,
        formula=lambda st: np.broadcast_to(-st.s, st.x.shape),
    ),
    Entry(
        id="002-dvar-dmu",
        document="002",
        step="(6) ∂σ²/∂μ",
        line=r"\frac{\partial \sigma^2}{\partial \mu} = \frac{-2}{H} \sum_{i=1}^{H}(x_i - \mu) "
        r"= \frac{-2}{H}(\sum_{i=1}^{H}x_i - \sum_{i=1}^{H} \mu) = 0 \tag{6}",
        model=MODEL,
        quantity=q.VAR_DMU,
        formula=lambda st: -2.0 / st.n * st.group_sum(st.x_sm),
    ),
    Entry(
        id="002-dmu",
        document="002",
        step="(7) ∂L/∂μ",
        line=r"\frac{\partial \mathcal{L}}{\partial \mu_i} = \frac{\partial \mathcal{L}}"
        r"{\partial \mathbf{\hat{x}}} \frac{\partial{\mathbf{\hat{x}}}}{\partial \mu_i } = "
        r"-(\sigma_i^2 + \epsilon)^{-\frac{1}{2}} \sum_{j=1}^{H}\frac{\partial \mathcal{L}}"
        r"{\partial {\mathbf{\hat{x_j}}}} \tag{7}",
        model=MODEL,
        quantity=q.DMU,
        formula=dmu_eq7,
        reading="μ_i is the mean of vector i; the sum runs over its H features.",
    ),
    Entry(
        id="002-dmu-dx",
        document="002",
        step="(8) ∂μ/∂x",
        line=r"\frac{\partial \mu}{\partial \mathbf{x}} = \mathbf{\frac{1}{H}} \tag{8}",
        model=MODEL,
        quantity=q.DMU_DX,
        formula=lambda st: np.full(st.vector_shape(len(st.rows)), 1.0 / st.n),
    ),
    Entry(
        id="002-dvar",
        document="002",
        step="(9) ∂L/∂σ²",
        line=r"\frac{\partial \mathcal{L}}{\partial \sigma_i^2} = \frac{\partial \mathcal{L}}"
        r"{\partial \mathbf{\hat{x}}}\frac{\partial \mathbf{\hat{x}}}{\partial \sigma_i^2} = "
        r"-\frac{1}{2}(\sigma_i^2+\epsilon)^{-\frac{3}{2}} \sum_{j=1}^{H}\frac{\partial "
        r"\mathcal L}{\partial \hat{x_j}}(x_j - \mu) \tag{9}",
        model=MODEL,
        quantity=q.DVAR,
        formula=lambda st: -0.5 * st.s**3 * st.group_sum(st.dy * st.gamma * st.x_sm),
    ),
    Entry(
        id="002-dvar-dx",
        document="002",
        step="(10) ∂σ²/∂x",
        line=r"\frac{\partial \sigma^2}{\partial \mathbf{x}} = \frac{2}{H}(x_j - \mu), j = i "
        r"... H \tag{10}",
        model=MODEL,
        quantity=q.DVAR_DX,
        formula=lambda st: 2.0 / st.n * st.x_sm[..., st.rows],
        reading="'j = i … H' is read as j = 1 … H: one entry per feature of the vector, as "
        "the matrix after it shows.",
    ),
    Entry(
        id="002-dx-expanded",
        document="002",
        step="the three parts added, first line",
        line=r"\frac{\partial \mathcal{L}}{\partial \mathbf{x}} = \frac{\partial \mathcal{L}}"
        r"{\partial \hat{\mathbf{x}}} (\sigma^2 + \epsilon)^{-\frac{1}{2}} - \frac{\partial "
        r"\mathcal{L}}{\partial \hat{\mathbf{x}}}(\sigma^2 + \epsilon)^{-\frac{1}{2}}"
        r"\frac{1}{H}\sum_{j=1}^{H}\frac{\partial \mathcal{L}}{\partial \hat{x_j}} - "
        r"\frac{1}{2}(\sigma^2 + \epsilon)^{-\frac{3}{2}}(\mathbf{x}\ - \mu)\sum_{j=1}^{H}"
        r"\frac{\mathcal{\partial L}}{\hat{\partial x_j}}(x_j - \mu)",
        model=MODEL,
        quantity=q.DX,
        formula=lambda st: _expanded(st, st.dy * st.gamma, 0.5),
        reading="The last fraction, ∂L over ∂x̂_j with the hat on the ∂, is read as ∂L/∂x̂_j.",
        correction=Correction(
            latex=r"\frac{\partial \mathcal{L}}{\partial \mathbf{x}} = \frac{\partial "
            r"\mathcal{L}}{\partial \hat{\mathbf{x}}} (\sigma^2 + \epsilon)^{-\frac{1}{2}} - "
            r"(\sigma^2 + \epsilon)^{-\frac{1}{2}}\frac{1}{H}\sum_{j=1}^{H}\frac{\partial "
            r"\mathcal{L}}{\partial \hat{x}_j} - \frac{1}{H}(\sigma^2 + \epsilon)^{-\frac{3}"
            r"{2}}(\mathbf{x} - \mu)\sum_{j=1}^{H}\frac{\partial \mathcal{L}}{\partial "
            r"\hat{x}_j}(x_j - \mu)",
            formula=lambda st: _expanded(st, 1.0, 1.0 / st.n),
            mistake="Two slips when the three parts of the chain rule are added. The mean term is "
            "∂L/∂μ · ∂μ/∂x = −(σ² + ε)^(−1/2) (1/H) Σ_j ∂L/∂x̂_j: it has no further factor "
            "∂L/∂x̂. The variance term ∂L/∂σ² · ∂σ²/∂x must carry ∂σ²/∂x = (2/H)(x − μ): "
            "the 2/H is missing, which leaves 1/2 where 1/H belongs.",
            agrees_when="both slipped terms vanish: the mean term when ∂L/∂x̂ is 1 on every "
            "entry or sums to 0, the variance term when H = 2 (then 1/2 = 1/H) or "
            "Σ_j ∂L/∂x̂_j (x_j − μ) = 0",
            exposed_by="A random upstream gradient with D ≥ 3 shows both slips.",
        ),
    ),
    Entry(
        id="002-dx-bracket",
        document="002",
        step="the three parts added, bracketed line",
        line=r"\frac{\partial \mathcal{L}}{\partial \mathbf{x}} = \frac{(\sigma^2 + \epsilon)"
        r"^{-\frac{1}{2}}}{H}\left[H\frac{\mathcal{\partial L}}{\partial \mathbf{\hat{x}}} - "
        r"\sum_{j=1}^{H}\frac{\partial \mathcal{L}}{\partial \hat{x_j}}- \hat{\mathbf{x}} "
        r"\sum_{j=1}^{H}\frac{\partial \mathcal{L}}{\partial \hat{x_j}}x_j  \right]",
        model=MODEL,
        quantity=q.DX,
        formula=lambda st: _bracket(st, st.x),
        correction=Correction(
            latex=r"\frac{\partial \mathcal{L}}{\partial \mathbf{x}} = \frac{(\sigma^2 + "
            r"\epsilon)^{-\frac{1}{2}}}{H}\left[H\frac{\partial \mathcal{L}}{\partial "
            r"\hat{\mathbf{x}}} - \sum_{j=1}^{H}\frac{\partial \mathcal{L}}{\partial "
            r"\hat{x}_j} - \hat{\mathbf{x}} \sum_{j=1}^{H}\frac{\partial \mathcal{L}}"
            r"{\partial \hat{x}_j}\hat{x}_j\right]",
            formula=lambda st: _bracket(st, st.xhat),
            mistake="Taking (σ² + ε)^(−1/2) out of the variance term turns (x − μ)(x_j − μ)"
            "(σ² + ε)^(−1) into x̂ x̂_j, so the last sum must weight by x̂_j, not x_j. "
            "Σ_j ∂L/∂x̂_j x_j differs from it by the scale (σ² + ε)^(1/2) and by "
            "μ Σ_j ∂L/∂x̂_j.",
            agrees_when="x_j = x̂_j on every vector, that is rows already standardized "
            "(mean 0, σ² + ε = 1)",
            exposed_by="Rows whose mean is away from 0 or whose spread is not 1 show it.",
        ),
    ),
)
