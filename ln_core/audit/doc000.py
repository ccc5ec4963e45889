"""Document 000, the residual-connection derivation: one vector z of N features, one scalar γ
and β, σ without ε, a loss C. Its lines are judged with γ = the mean of the student's γ.

Symbols by the lab's names: N = st.n, z - μ = st.x_sm, σ = st.sigma, w = st.xhat.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.model import Correction, Entry, Model
from ln_core.audit.setting import Case, Setting

MODEL = Model(gamma="scalar", eps=False, axis="features")
PER_FEATURE = Model(gamma="per-feature", eps=False, axis="features")

_DGAMMA_LINE = (
    r"\frac{\partial C}{\partial \gamma} = \frac{\partial C}{\partial \mathbf{y}^{(n+1)}} "
    r"\frac{\partial \mathbf{y}^{(n+1)}}{\partial \gamma} = \frac{\partial C}{\partial "
    r"\mathbf{y}^{(n+1)}} \frac{\mathbf{z}^{(n)} - \mu}{\sigma} = \frac{1}{N} \sum "
    r"\frac{\partial C}{\partial y_k^{(n+1)}} \frac{z_k^{(n)} - \mu}{\sigma}"
)
_DBETA_LINE = (
    r"\frac{\partial C}{\partial \beta} = \frac{\partial C}{\partial \mathbf{y}^{(n+1)}} "
    r"\frac{\partial \mathbf{y}^{(n+1)}}{\partial \beta} = \frac{\partial C}{\partial "
    r"\mathbf{y}^{(n+1)}} = \frac{1}{N} \sum \frac{\partial C}{\partial y_k^{(n+1)}}"
)
_ONE_GAMMA = (
    " The document has one vector; for a batch, each vector's sum is added, because the one γ "
    "(or β) is shared by all of them."
)


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


_N_TIMES_TOO_SMALL = (
    "The product of the row ∂C/∂y with a column already is the sum over k; nothing is "
    "averaged, so the 1/N that appears when it is written out as a sum has no source: the "
    "result is N times too small."
)

ENTRIES: tuple[Entry, ...] = (
    Entry(
        id="000-dgamma-product",
        document="000",
        step="∂C/∂γ as a product (the first two equalities)",
        line=_DGAMMA_LINE,
        model=MODEL,
        quantity=q.DGAMMA_SCALAR,
        formula=dgamma_product,
        reading="The row ∂C/∂y times the column (z − μ)/σ is read as a dot product, "
        "Σ_k ∂C/∂y_k (z_k − μ)/σ." + _ONE_GAMMA,
    ),
    Entry(
        id="000-dgamma-sum",
        document="000",
        step="∂C/∂γ written as a sum (the last equality)",
        line=_DGAMMA_LINE,
        model=MODEL,
        quantity=q.DGAMMA_SCALAR,
        formula=dgamma_averaged,
        reading="The sum without limits is read as over k = 1 … N." + _ONE_GAMMA,
        correction=Correction(
            latex=r"\frac{\partial C}{\partial \gamma} = \sum_k \frac{\partial C}{\partial "
            r"y_k^{(n+1)}} \frac{z_k^{(n)} - \mu}{\sigma}",
            formula=dgamma_product,
            mistake=_N_TIMES_TOO_SMALL,
            agrees_when="N = 1, or the sum itself is 0",
            exposed_by="Any D ≥ 2 with a random upstream gradient shows the factor N.",
        ),
    ),
    Entry(
        id="000-dbeta-product",
        document="000",
        step="∂C/∂β as a product (the first three expressions)",
        line=_DBETA_LINE,
        model=MODEL,
        quantity=q.DBETA_SCALAR,
        formula=dbeta_product,
        reading="∂y/∂β is a column of ones, so the bare ∂C/∂y after the second '=' is read as "
        "that product, Σ_k ∂C/∂y_k; read literally it is the whole row, N numbers where "
        "∂C/∂β is one." + _ONE_GAMMA,
    ),
    Entry(
        id="000-dbeta-sum",
        document="000",
        step="∂C/∂β written as a sum (the last equality)",
        line=_DBETA_LINE,
        model=MODEL,
        quantity=q.DBETA_SCALAR,
        formula=dbeta_averaged,
        reading="The sum without limits is read as over k = 1 … N." + _ONE_GAMMA,
        correction=Correction(
            latex=r"\frac{\partial C}{\partial \beta} = \sum_k \frac{\partial C}{\partial "
            r"y_k^{(n+1)}}",
            formula=dbeta_product,
            mistake=_N_TIMES_TOO_SMALL,
            agrees_when="N = 1, or the upstream gradient sums to 0",
            exposed_by="Any D ≥ 2 with the all-ones upstream gradient shows the factor N.",
        ),
    ),
    Entry(
        id="000-dz-chain",
        document="000",
        step="the chain rule for ∂C/∂z",
        line=r"\frac{\partial C}{\partial \mathbf{z}^{(n)}} = \frac{\partial C}{\partial "
        r"\mathbf{y}^{(n+1)}} \frac{\partial \mathbf{y}^{(n+1)}}{\partial \mathbf{z}^{(n)}}",
        model=MODEL,
        quantity=q.DX,
        formula=lambda st: st.gamma_scalar * q.applied_jacobian(st, st.dy),
        reading="The row ∂C/∂y times the Jacobian ∂y/∂z (row k: output y_k), evaluated with "
        "ln_core's Jacobian of x̂ times the one γ.",
    ),
    Entry(
        id="000-dmu",
        document="000",
        step="∂μ/∂z_k",
        line=r"\mu = \frac{\sum z_k^{(n)}}{N} \Rightarrow \frac{\partial \mu}{\partial "
        r"z_k^{(n)}} = \frac{1}{N}",
        model=MODEL,
        quantity=q.DMU_DX,
        formula=lambda st: np.full(st.vector_shape(len(st.rows)), 1.0 / st.n),
    ),
    Entry(
        id="000-dV",
        document="000",
        step="∂V/∂z_k",
        line=r"V = \text{Var}(\mathbf{z}^{(n)}) = \frac{\sum (z_k^{(n)})^2}{N} - \mu^2 "
        r"\Rightarrow \frac{\partial V}{\partial z_k^{(n)}} = \frac{2z_k^{(n)}}{N} - "
        r"\frac{2\mu}{N} = \frac{2}{N} (z_k^{(n)} - \mu)",
        model=MODEL,
        quantity=q.DVAR_DX,
        formula=lambda st: 2.0 / st.n * st.x_sm[..., st.rows],
    ),
    Entry(
        id="000-dsigma",
        document="000",
        step="∂σ/∂z_k from V = σ²",
        line=r"V = \sigma^2 \Rightarrow \frac{\partial V}{\partial z_k^{(n)}} = 2\sigma "
        r"\frac{\partial \sigma}{\partial z_k^{(n)}} \Leftrightarrow \frac{\partial \sigma}"
        r"{\partial z_k^{(n)}} = \frac{(z_k^{(n)} - \mu)}{N\sigma}",
        model=MODEL,
        quantity=q.DSIGMA_DX,
        formula=lambda st: st.x_sm[..., st.rows] / (st.n * st.sigma),
    ),
    Entry(
        id="000-case1",
        document="000",
        step="the Jacobian, case 1: k ≠ l",
        line=r"\frac{\partial y_k^{(n+1)}}{\partial z_l^{(n)}} = \gamma \frac{-\frac{1}{N}"
        r"\sigma - \frac{(z_l^{(n)} - \mu)}{N\sigma}(z_k^{(n)} - \mu)}{\sigma^2} = "
        r"\frac{-\gamma}{N\sigma} \left( 1 + \frac{(z_l^{(n)} - \mu)(z_k^{(n)} - \mu)}"
        r"{\sigma^2} \right)",
        model=MODEL,
        quantity=q.Y_JACOBIAN,
        formula=lambda st: (
            -st.at_columns(st.gamma_scalar)
            / (st.n * st.at_columns(st.sigma))
            * (1.0 + st.at_columns(st.x_sm) * st.at_rows(st.x_sm) / st.at_columns(st.sigma) ** 2)
        ),
        where=Setting.off_diagonal,
    ),
    Entry(
        id="000-case2",
        document="000",
        step="the Jacobian, case 2: k = l",
        line=r"\frac{\partial y_k^{(n+1)}}{\partial z_k^{(n)}} = \gamma \frac{\left(1 - "
        r"\frac{1}{N}\right)\sigma - \frac{(z_k^{(n)} - \mu)^2}{N\sigma}}{\sigma^2} = "
        r"\frac{\gamma}{N\sigma} \left( N - 1 - \frac{(z_k^{(n)} - \mu)^2}{\sigma^2} \right)",
        model=MODEL,
        quantity=q.Y_JACOBIAN,
        formula=lambda st: (
            st.at_columns(st.gamma_scalar)
            / (st.n * st.at_columns(st.sigma))
            * (st.n - 1 - st.at_rows(st.x_sm) ** 2 / st.at_columns(st.sigma) ** 2)
        ),
        where=Setting.diagonal,
    ),
    Entry(
        id="000-J-cases",
        document="000",
        step="J entry by entry",
        line=r"\mathbf{J}_{i,j} = \begin{cases} -1 - \frac{(z_i^{(n)} - \mu)(z_j^{(n)} - \mu)}"
        r"{\sigma^2} & \text{if } i \neq j \\ N - 1 - \frac{(z_i^{(n)} - \mu)^2}{\sigma^2} & "
        r"\text{if } i = j \end{cases}",
        model=MODEL,
        quantity=q.J_000,
        formula=lambda st: np.where(
            st.diagonal(),
            st.n - 1 - st.at_rows(st.x_sm) ** 2 / st.at_columns(st.sigma) ** 2,
            -1 - st.at_rows(st.x_sm) * st.at_columns(st.x_sm) / st.at_columns(st.sigma) ** 2,
        ),
    ),
    Entry(
        id="000-dz",
        document="000",
        step="∂C/∂z with J",
        line=r"\frac{\partial \mathcal{C}}{\partial \mathbf{z}^{(n)}} = \frac{\gamma}{N\sigma} "
        r"\left( \frac{\partial \mathcal{C}}{\partial \mathbf{y}^{(n+1)}} \cdot \mathbf{J} "
        r"\right)",
        model=MODEL,
        quantity=q.DX,
        formula=dz,
        reading="'·' is the product of the row ∂C/∂y with the matrix J, as the document says "
        '("the dot product"); J is symmetric, so row or column order does not matter.',
        note=per_feature_note,
    ),
    Entry(
        id="000-dgamma-w",
        document="000",
        step="∂C/∂γ with the stored w",
        line=r"\frac{\partial \mathcal{C}}{\partial \gamma} = \frac{1}{N} \sum \frac{\partial "
        r"\mathcal{C}}{\partial y_k^{(n+1)}} w_i^{(n)}",
        model=MODEL,
        quantity=q.DGAMMA_SCALAR,
        formula=lambda st: st.total(st.dy * st.xhat) / st.n,
        reading="w_i inside a sum over k is read as w_k: the line restates the ∂C/∂γ above "
        "with w_k = (z_k − μ)/σ, which pairs each ∂C/∂y_k with its own w_k. Read literally, "
        "w_i is one fixed entry and the sum would be w_i Σ_k ∂C/∂y_k, which depends on "
        "which i is meant." + _ONE_GAMMA,
        correction=Correction(
            latex=r"\frac{\partial \mathcal{C}}{\partial \gamma} = \sum_k \frac{\partial "
            r"\mathcal{C}}{\partial y_k^{(n+1)}} w_k^{(n)}",
            formula=lambda st: st.total(st.dy * st.xhat),
            mistake=_N_TIMES_TOO_SMALL,
            agrees_when="N = 1, or the sum itself is 0",
            exposed_by="Any D ≥ 2 with a random upstream gradient shows the factor N.",
        ),
    ),
    Entry(
        id="000-dbeta-w",
        document="000",
        step="∂C/∂β, restated",
        line=r"\frac{\partial \mathcal{C}}{\partial \beta} = \frac{1}{N} \sum \frac{\partial "
        r"\mathcal{C}}{\partial y_k^{(n+1)}}",
        model=MODEL,
        quantity=q.DBETA_SCALAR,
        formula=dbeta_averaged,
        reading="The sum without limits is read as over k = 1 … N." + _ONE_GAMMA,
        correction=Correction(
            latex=r"\frac{\partial \mathcal{C}}{\partial \beta} = \sum_k \frac{\partial "
            r"\mathcal{C}}{\partial y_k^{(n+1)}}",
            formula=dbeta_product,
            mistake=_N_TIMES_TOO_SMALL,
            agrees_when="N = 1, or the upstream gradient sums to 0",
            exposed_by="Any D ≥ 2 with the all-ones upstream gradient shows the factor N.",
        ),
    ),
    Entry(
        id="000-J-outer",
        document="000",
        step="J as a matrix expression",
        line=r"\mathbf{J} = (N\mathbf{I}_N - \mathbf{1}_N - \mathbf{w}^{(n)} \otimes "
        r"\mathbf{w}^{(n)})",
        model=MODEL,
        quantity=q.J_000,
        formula=lambda st: (
            st.n * st.diagonal() - 1.0 - st.at_rows(st.xhat) * st.at_columns(st.xhat)
        ),
        reading="1_N is the N × N matrix of ones and ⊗ the outer product, as the document "
        "defines them.",
    ),
    Entry(
        id="000-dz-w",
        document="000",
        step="∂C/∂z, restated with the matrix J",
        line=r"\frac{\partial \mathcal{C}}{\partial \mathbf{z}^{(n)}} = \frac{\gamma}{N\sigma} "
        r"\left( \frac{\partial \mathcal{C}}{\partial \mathbf{y}^{(n+1)}} \cdot \mathbf{J} "
        r"\right),\quad \mathbf{J} = N\mathbf{I}_N - \mathbf{1}_N - \mathbf{w}^{(n)} \otimes "
        r"\mathbf{w}^{(n)}",
        model=MODEL,
        quantity=q.DX,
        formula=dz,
        note=per_feature_note,
    ),
    Entry(
        id="000-dy-residual",
        document="000",
        step="the gradient reaching the sublayer's output",
        line=r"\frac{\partial C}{\partial \mathbf{y}^{(n)}} = \frac{\partial C}{\partial "
        r"\mathbf{z}^{(n)}} \frac{\partial \mathbf{z}^{(n)}}{\partial \mathbf{y}^{(n)}} = "
        r"\frac{\partial C}{\partial \mathbf{z}^{(n)}} \left( \frac{\partial \mathbf{x}}"
        r"{\partial \mathbf{y}^{(n)}} + I_N \right) = \frac{\partial C}{\partial "
        r"\mathbf{z}^{(n)}}",
        model=MODEL,
        quantity=q.RESIDUAL_DY,
        formula=_block_dz,
        reading="∂x/∂y⁽ⁿ⁾ = 0: x is an input of the block, which y⁽ⁿ⁾ does not change.",
    ),
    Entry(
        id="000-dx-residual",
        document="000",
        step="the gradient reaching the block's input x",
        line=r"\frac{\partial C}{\partial \mathbf{x}} = \frac{\partial C}{\partial "
        r"\mathbf{z}^{(n)}} \frac{\partial \mathbf{z}^{(n)}}{\partial \mathbf{x}} = "
        r"\frac{\partial C}{\partial \mathbf{z}^{(n)}} \left( I_N + \frac{\partial "
        r"\mathbf{y}^{(n)}}{\partial \mathbf{x}} \right) = \frac{\partial C}{\partial "
        r"\mathbf{z}^{(n)}} + \frac{\partial C}{\partial \mathbf{z}^{(n)}} \frac{\partial "
        r"\mathbf{y}^{(n)}}{\partial \mathbf{x}}",
        model=MODEL,
        quantity=q.RESIDUAL_DX,
        formula=lambda st: _block_dz(st) + _sublayer_jacobian_times(st, _block_dz(st)),
        reading="The sublayer is the lab's seeded y(x) = tanh(x W + c) (the Residual block "
        "page's); its Jacobian ∂y_j/∂x_i = (1 − y_j²) W_ij is applied to the row ∂C/∂z.",
    ),
)
