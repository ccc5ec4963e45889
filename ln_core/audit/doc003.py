"""Document 003, the per-token transformer derivation: one token's vector of D features, one γ
per feature, ε inside the root; a table sums dγ and dβ over batch and sequence.
Symbols by the lab's names: D = st.n, x - μ = st.x_sm, 1/sqrt(σ² + ε) = st.s, dx̂ = dy ⊙ γ.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.doc001 import three_terms
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


_EXPANDED = (
    r"dx_i = \frac{1}{\sqrt{\sigma^2+\varepsilon}} \left[ dy_i\,\gamma_i - \frac{1}{D}"
    r"\sum_{j=1}^{D} dy_j\,\gamma_j - \frac{\hat{x}_i}{D}\sum_{j=1}^{D} dy_j\,\gamma_j\,"
    r"\hat{x}_j \right]"
)
_TABLE = (
    "A row of the closing table: the sum over b, s runs over every token of the batch, "
    "one sum per feature i."
)

ENTRIES: tuple[Entry, ...] = (
    Entry(
        id="003-dbeta-i",
        document="003",
        step="∂L/∂β_i for one token",
        line=r"\frac{\partial L}{\partial \beta_i} = \frac{\partial L}{\partial y_i} \cdot "
        r"\underbrace{\frac{\partial y_i}{\partial \beta_i}}_{=\,1} = dy_i",
        model=MODEL,
        quantity=q.DBETA_VECTOR,
        formula=lambda st: st.dy,
    ),
    Entry(
        id="003-dgamma-i",
        document="003",
        step="∂L/∂γ_i for one token",
        line=r"\frac{\partial L}{\partial \gamma_i} = \frac{\partial L}{\partial y_i} \cdot "
        r"\underbrace{\frac{\partial y_i}{\partial \gamma_i}}_{=\,\hat{x}_i} = dy_i \cdot "
        r"\hat{x}_i",
        model=MODEL,
        quantity=q.DGAMMA_VECTOR,
        formula=lambda st: st.dy * st.xhat,
    ),
    Entry(
        id="003-dxhat",
        document="003",
        step="step A: dx̂",
        line=r"d\hat{x}_j = dy_j\,\gamma_j",
        model=MODEL,
        quantity=q.DXHAT,
        formula=dxhat,
    ),
    Entry(
        id="003-dvar",
        document="003",
        step="dσ², summed over every x̂_j",
        line=r"d\sigma^2 = \sum_{j=1}^{D} d\hat{x}_j \cdot \frac{\partial \hat{x}_j}{\partial "
        r"\sigma^2} = \sum_{j=1}^{D} d\hat{x}_j \cdot (x_j - \mu) \cdot \left(-\tfrac{1}{2}"
        r"(\sigma^2+\varepsilon)^{-3/2}\right)",
        model=MODEL,
        quantity=q.DVAR,
        formula=dvar,
    ),
    Entry(
        id="003-path1",
        document="003",
        step="dμ, path 1: straight from each x̂_j",
        line=r"\sum_{j=1}^{D} d\hat{x}_j \cdot \frac{\partial \hat{x}_j}{\partial \mu} = "
        r"\sum_{j=1}^{D} d\hat{x}_j \cdot \frac{-1}{\sqrt{\sigma^2+\varepsilon}}",
        model=MODEL,
        quantity=q.DMU_VIA_XHAT,
        formula=dmu,
    ),
    Entry(
        id="003-path2",
        document="003",
        step="dμ, path 2: through σ²",
        line=r"d\sigma^2 \cdot \frac{\partial \sigma^2}{\partial \mu} = d\sigma^2 \cdot "
        r"\frac{-2}{D}\sum_{j=1}^{D}(x_j - \mu) = 0",
        model=MODEL,
        quantity=q.DMU_VIA_VAR,
        formula=lambda st: dvar(st) * (-2.0 / st.n) * st.group_sum(st.x_sm),
    ),
    Entry(
        id="003-dmu",
        document="003",
        step="dμ, both paths combined",
        line=r"d\mu = \frac{-1}{\sqrt{\sigma^2+\varepsilon}} \sum_{j=1}^{D} d\hat{x}_j",
        model=MODEL,
        quantity=q.DMU,
        formula=dmu,
    ),
    Entry(
        id="003-combine",
        document="003",
        step="the combining step the text refers to but never writes",
        line=r"\text{Applying the chain rule through } \hat{x}_i,\ \sigma^2, \text{ and } \mu"
        r"\text{, and substituting Steps A–C:}",
        model=MODEL,
        quantity=q.DX,
        formula=combined,
        reading="The document announces this step and goes straight to the expanded form. "
        "The audit writes it out, dx_i = dx̂_i/√(σ²+ε) + dσ² · 2(x_i − μ)/D + dμ/D, and "
        "evaluates it with the document's own dσ² and dμ.",
    ),
    Entry(
        id="003-dx",
        document="003",
        step="dx, fully expanded",
        line=_EXPANDED,
        model=MODEL,
        quantity=q.DX,
        formula=_expanded,
    ),
    Entry(
        id="003-table-dbeta",
        document="003",
        step="the table: dβ",
        line=r"\sum_{b,s} dy_{b,s,i}",
        model=MODEL,
        quantity=q.DBETA,
        formula=lambda st: st.batch_sum(st.dy),
        reading=_TABLE,
    ),
    Entry(
        id="003-table-dgamma",
        document="003",
        step="the table: dγ",
        line=r"\sum_{b,s} dy_{b,s,i}\cdot\hat{x}_{b,s,i}",
        model=MODEL,
        quantity=q.DGAMMA,
        formula=lambda st: st.batch_sum(st.dy * st.xhat),
        reading=_TABLE,
    ),
    Entry(
        id="003-table-dx",
        document="003",
        step="the table: dx",
        line=r"\tfrac{1}{\sqrt{\sigma^2+\varepsilon}}\!\left[d\hat{x}_i - \tfrac{1}{D}\!\sum_j "
        r"d\hat{x}_j - \tfrac{\hat{x}_i}{D}\!\sum_j d\hat{x}_j\hat{x}_j\right]",
        model=MODEL,
        quantity=q.DX,
        formula=_expanded,
        reading="The sums run over the D features, as the text under the table says.",
    ),
)
