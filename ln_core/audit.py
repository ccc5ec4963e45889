"""Auditing the five seed derivations: every closed form of dx, dgamma and dbeta they contain,
implemented as written, evaluated next to the staged backward.

Each formula reads its inputs from a `_Case` under the document's own names (dy, x̂, σ, ...).
A document that defines σ without ε is compared with the staged backward at eps = 0; the others
use the given eps. All sums "over the features" run over the normalized (last) axis; documents
written for one vector are applied to every vector of a batch, and a parameter shared by the
batch has its gradient summed over it. Document 004 writes N for the size of the normalized
axis (it comes from BatchNorm); here that axis is LayerNorm's, so its N is D.

A formula's verdict is numerical: 'correct' when its rel_error against the staged backward is
within the dtype's gradient-check tolerance. A known mistake only shows on inputs that exercise
it (000's γ placement needs a non-uniform γ, 004's batch sums need N >= 2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ln_core.backward import Grads, StagedGrads, backward, param_axes
from ln_core.forward import Cache, forward
from ln_core.gradcheck import rel_error, tolerance
from ln_core.residual import ResidualCache, make_sublayer, residual_backward, residual_forward
from ln_core.validation import check_eps, numeric_guard

DOC_000 = "000_f12dc394c06ca42b.txt"
DOC_001 = "001_5e18562598e91183.txt"
DOC_002 = "002_b52ccaac72c4e1df.txt"
DOC_003 = "003_55c14f31970e9e07.txt"
DOC_004 = "004_ac2d62840c5107ce.txt"


@dataclass(frozen=True)
class AuditResult:
    """One formula of one document, judged on the given inputs.

    verdict: 'correct' or 'wrong' (error within the dtype's tolerance or not); error: rel_error
    of the formula as written against `compared_with`. mistake, correction and
    correction_error are None for a formula with no known mistake; otherwise correction_error
    is the rel_error of the corrected form against the same reference.
    """

    id: str
    document: str
    quantity: str
    formula_as_written: str
    verdict: str
    error: float
    mistake: str | None
    correction: str | None
    correction_error: float | None
    compared_with: str


@dataclass(frozen=True)
class _Case:
    """The forward pass at the document's eps and the staged backward on it (the reference)."""

    cache: Cache
    grads: StagedGrads

    @property
    def dy(self) -> np.ndarray:
        return self.grads.dout

    @property
    def dxhat(self) -> np.ndarray:
        """dL/dx̂ = dy ⊙ γ, which every document derives first."""
        return self.grads.dout * self.cache.gamma

    @property
    def xhat(self) -> np.ndarray:
        return self.cache.normalized_x

    @property
    def n(self) -> int:
        return self.cache.n


Formula = Callable[[_Case], np.ndarray]


def _feature_sum(a: np.ndarray) -> np.ndarray:
    """Σ_j over the normalized axis, kept as size 1 so it broadcasts back over x."""
    return np.sum(a, axis=-1, keepdims=True)


def _batch_sum(a: np.ndarray) -> np.ndarray:
    """Σ over every axis but the features: what gamma and beta are shared across."""
    return np.sum(a, axis=param_axes(a.ndim))


# --- 000 -----------------------------------------------------------------------------------


def doc000_dgamma(case: _Case) -> np.ndarray:
    """000, "the expressions will come out cleanly": ∂C/∂γ = (1/N) Σ_k ∂C/∂y_k w_k.

    γ is one scalar there, so every vector of the batch adds its sum: a scalar.
    """
    return np.sum(case.dy * case.xhat) / case.n


def doc000_dbeta(case: _Case) -> np.ndarray:
    """000, "the expressions will come out cleanly": ∂C/∂β = (1/N) Σ_k ∂C/∂y_k (a scalar)."""
    return np.sum(case.dy) / case.n


def _doc000_times_jacobian(case: _Case, row: np.ndarray) -> np.ndarray:
    """(row · J) / (Nσ) with 000's J = N I_N - 1_N - w ⊗ w, one J per vector (..., N, N)."""
    n, w = case.n, case.xhat
    jac = n * np.eye(n, dtype=w.dtype) - 1 - w[..., :, None] * w[..., None, :]
    return np.einsum("...k,...kl->...l", row, jac) / (n * case.cache.sqrt_sve)


def doc000_dz(case: _Case) -> np.ndarray:
    """000, final formula: ∂C/∂z = γ/(Nσ) (∂C/∂y · J), with the per-feature γ multiplying
    the result, as the formula places it."""
    return case.cache.gamma * _doc000_times_jacobian(case, case.dy)


def _doc000_dz_corrected(case: _Case) -> np.ndarray:
    return _doc000_times_jacobian(case, case.dxhat)


def _residual_block(case: _Case) -> ResidualCache:
    """A seeded sublayer around the same x, γ, β (and 000's eps = 0)."""
    x = case.cache.x
    sublayer = make_sublayer(x.shape[-1], seed=0, dtype=x.dtype)
    return residual_forward(x, sublayer, case.cache.gamma, case.cache.beta, case.cache.eps)


def doc000_residual_dx(case: _Case) -> np.ndarray:
    """000, last paragraph: ∂C/∂x = ∂C/∂z + ∂C/∂z · ∂y/∂x for z = x + y(x).

    ∂y/∂x is the sublayer's Jacobian, built as a matrix per vector: for y = tanh(x W + c),
    ∂y_j/∂x_i = (1 - y_j^2) W_ij.
    """
    block = _residual_block(case)
    dz = backward(case.dy, block.ln).dx
    jac = (1.0 - block.f**2)[..., :, None] * block.sublayer.W.T
    return dz + np.einsum("...j,...ji->...i", dz, jac)


def _residual_reference(case: _Case) -> np.ndarray:
    block = _residual_block(case)
    return residual_backward(case.dy, block).dx


# --- 001 and 003 ---------------------------------------------------------------------------


def three_term_dx(case: _Case) -> np.ndarray:
    """001, "In vector notation" (with ∇X̂ = ∇Y ⊙ γ substituted, as 001 does next), and 003's
    fully expanded dx_i — the same three terms:

    dx = (1/σ) [dx̂ - (1/n) Σ_j dx̂_j - x̂ (1/n) Σ_j dx̂_j x̂_j], σ including ε in 003.
    """
    g, xhat, n = case.dxhat, case.xhat, case.n
    return case.cache.inv_sqrt_sve * (g - _feature_sum(g) / n - xhat * _feature_sum(g * xhat) / n)


def doc001_compact_dx(case: _Case) -> np.ndarray:
    """001, "more compactly": ∇X = (1/σ)(∇Y⊙γ - ((1/n) X̂·(∇Y⊙γ)) ⊙ X̂ - (1/n) ∇Y·γ).

    Both "·" are dot products over the features: scalars per vector.
    """
    g = case.dxhat
    return (
        g
        - (_feature_sum(case.xhat * g) / case.n) * case.xhat
        - _feature_sum(case.dy * case.cache.gamma) / case.n
    ) / case.cache.sqrt_sve


# --- 002 and 003: the parameter gradients --------------------------------------------


def dgamma_summed(case: _Case) -> np.ndarray:
    """002 eq. (1) and 003's summary table: ∂L/∂γ = Σ over the batch of dy ⊙ x̂. (D,)."""
    return _batch_sum(case.dy * case.xhat)


def dbeta_summed(case: _Case) -> np.ndarray:
    """002 eq. (2) and 003's summary table: ∂L/∂β = Σ over the batch of dy. (D,)."""
    return _batch_sum(case.dy)


# --- 002: the two lines of "Add all these 3 parts together" --------------------------------


def _doc002_expanded(
    case: _Case, mean_weight: np.ndarray | float, variance_factor: float
) -> np.ndarray:
    """dx̂ s - mean_weight · s (1/H) Σ_j dx̂_j - variance_factor · s^3 (x - μ) Σ_j dx̂_j (x_j - μ),
    with s = (σ^2 + ε)^(-1/2)."""
    g, s, x_mu = case.dxhat, case.cache.inv_sqrt_sve, case.cache.x_sm
    mean_term = mean_weight * s * _feature_sum(g) / case.n
    return g * s - mean_term - variance_factor * s**3 * x_mu * _feature_sum(g * x_mu)


def doc002_dx_expanded(case: _Case) -> np.ndarray:
    """002, first line of "Add all these 3 parts together": the mean term carries an extra
    ∂L/∂x̂ and the variance term is -1/2 (σ²+ε)^(-3/2) (x - μ) Σ_j ∂L/∂x̂_j (x_j - μ)."""
    return _doc002_expanded(case, case.dxhat, 0.5)


def _doc002_bracket(case: _Case, weights: np.ndarray) -> np.ndarray:
    """(σ²+ε)^(-1/2)/H [H dx̂ - Σ_j dx̂_j - x̂ Σ_j dx̂_j weights_j]."""
    g = case.dxhat
    return (case.cache.inv_sqrt_sve / case.n) * (
        case.n * g - _feature_sum(g) - case.xhat * _feature_sum(g * weights)
    )


def doc002_dx_bracket(case: _Case) -> np.ndarray:
    """002, second line of "Add all these 3 parts together", whose last sum is Σ_j dx̂_j x_j."""
    return _doc002_bracket(case, case.cache.x)


# --- 004: the staged backward --------------------------------------------------------------


def _doc004_backward(case: _Case, with_sums: bool) -> Grads:
    """004's ten backward lines; with_sums=False reads them as written (no reductions).

    with_sums=True adds the sum over the normalized axis at ⑧ and ② and over the batch for
    dgamma, dbeta: the only changes needed to match the staged backward.
    """
    c = case.cache

    def over_axis(a: np.ndarray) -> np.ndarray:
        return _feature_sum(a) if with_sums else a

    def over_batch(a: np.ndarray) -> np.ndarray:
        return _batch_sum(a) if with_sums else a

    # ⑩ out = gx + beta
    dgx = 1 * case.dy
    dbeta = over_batch(1 * case.dy)
    # ⑨ gx = gamma * normalized_x
    dgamma = over_batch(c.normalized_x * dgx)
    dnormalized_x = c.gamma * dgx
    # ⑧ normalized_x = x_sm * inversed_sqrt_sve
    dx_sm1 = c.inv_sqrt_sve * dnormalized_x
    dinversed_sqrt_sve = over_axis(c.x_sm * dnormalized_x)
    # ⑦ inversed_sqrt_sve = 1 / sqrt_sve       (the leading "-" read as a bullet)
    dsqrt_sve = -1.0 / c.sqrt_sve**2 * dinversed_sqrt_sve
    # ⑥ sqrt_sve = sqrt(sve)
    dsve = 0.5 * 1.0 / np.sqrt(c.sve) * dsqrt_sve
    # ⑤ sve = sample_var + eps
    dsample_var = 1 * dsve
    # ④ sample_var = (1/N) Σ sq_xsm
    dsq_xsm = 1.0 / case.n * np.ones_like(c.x) * dsample_var
    # ③ sq_xsm = x_sm ** 2
    dx_sm2 = 2 * c.x_sm * dsq_xsm
    dx_sm = dx_sm1 + dx_sm2
    # ② x_sm = x - sample_mean
    dx1 = 1 * dx_sm
    dsample_mean = -1 * over_axis(dx_sm)
    # ① sample_mean = (1/N) Σ x
    dx2 = 1.0 / case.n * np.ones_like(c.x) * dsample_mean
    return Grads(dx=dx1 + dx2, dgamma=dgamma, dbeta=dbeta)


def doc004_dx(case: _Case) -> np.ndarray:
    """004, backward ⑩ to ①, as written: dx = dx_1 + dx_2."""
    return _doc004_backward(case, with_sums=False).dx


def doc004_dgamma(case: _Case) -> np.ndarray:
    """004, backward ⑨: dγ = normalized_x * dγx (one row per sample)."""
    return _doc004_backward(case, with_sums=False).dgamma


def doc004_dbeta(case: _Case) -> np.ndarray:
    """004, backward ⑩: dβ = 1 * dout (one row per sample)."""
    return _doc004_backward(case, with_sums=False).dbeta


# --- the registry --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    id: str
    document: str
    quantity: str
    uses_eps: bool
    formula: str
    written: Formula
    mistake: str | None = None
    correction: str | None = None
    corrected: Formula | None = None
    reference: Formula | None = None
    reference_note: str = ""


_SCALAR_PARAM_NOTE = (
    "; summed over features and batch, because the document's parameter is one scalar "
    "shared by every feature"
)

ENTRIES: tuple[_Entry, ...] = (
    _Entry(
        id="000-dgamma",
        document=DOC_000,
        quantity="dgamma",
        uses_eps=False,
        formula=r"\frac{\partial C}{\partial \gamma} = \frac{1}{N}\sum_k "
        r"\frac{\partial C}{\partial y_k}\, w_k",
        written=doc000_dgamma,
        mistake="The product of the row ∂C/∂y with the column w already is the sum "
        "Σ_k ∂C/∂y_k w_k. Nothing is averaged, so the 1/N that appears when it is written "
        "as a sum has no source: the result is N times too small.",
        correction=r"\frac{\partial C}{\partial \gamma} = \sum_k "
        r"\frac{\partial C}{\partial y_k}\, w_k",
        corrected=lambda case: np.sum(case.dy * case.xhat),
        reference=lambda case: np.sum(case.grads.dgamma),
        reference_note=_SCALAR_PARAM_NOTE,
    ),
    _Entry(
        id="000-dbeta",
        document=DOC_000,
        quantity="dbeta",
        uses_eps=False,
        formula=r"\frac{\partial C}{\partial \beta} = \frac{1}{N}\sum_k "
        r"\frac{\partial C}{\partial y_k}",
        written=doc000_dbeta,
        mistake="∂y_k/∂β = 1 for every k, so the row ∂C/∂y times a column of ones is the "
        "plain sum Σ_k ∂C/∂y_k. The 1/N is not part of it: the result is N times too small.",
        correction=r"\frac{\partial C}{\partial \beta} = \sum_k \frac{\partial C}{\partial y_k}",
        corrected=lambda case: np.sum(case.dy),
        reference=lambda case: np.sum(case.grads.dbeta),
        reference_note=_SCALAR_PARAM_NOTE,
    ),
    _Entry(
        id="000-dz",
        document=DOC_000,
        quantity="dx",
        uses_eps=False,
        formula=r"\frac{\partial C}{\partial \mathbf{z}} = \frac{\gamma}{N\sigma}\left("
        r"\frac{\partial C}{\partial \mathbf{y}} \cdot \mathbf{J}\right),\quad "
        r"\mathbf{J} = N\mathbf{I}_N - \mathbf{1}_N - \mathbf{w}\otimes\mathbf{w}",
        written=doc000_dz,
        mistake="Right for one scalar γ. With one γ per feature, output y_k carries γ_k, so "
        "γ must weight ∂C/∂y_k before the product with J; multiplying the result instead "
        "scales entry l by γ_l, the input's index. It only agrees when all γ are equal.",
        correction=r"\frac{\partial C}{\partial \mathbf{z}} = \frac{1}{N\sigma}\left(\left("
        r"\frac{\partial C}{\partial \mathbf{y}} \odot \boldsymbol{\gamma}\right) \cdot "
        r"\mathbf{J}\right)",
        corrected=_doc000_dz_corrected,
        reference_note="; the per-feature γ multiplies the result, where the formula puts it",
    ),
    _Entry(
        id="000-residual",
        document=DOC_000,
        quantity="dx",
        uses_eps=False,
        formula=r"\frac{\partial C}{\partial \mathbf{x}} = \frac{\partial C}{\partial "
        r"\mathbf{z}} + \frac{\partial C}{\partial \mathbf{z}}\frac{\partial \mathbf{y}}"
        r"{\partial \mathbf{x}}",
        written=doc000_residual_dx,
        reference=_residual_reference,
        reference_note="; this is the residual block z = x + y(x) of ln_core.residual, with the "
        "seeded sublayer y(x) = tanh(x W + c) of make_sublayer(D, seed=0), not LayerNorm alone",
    ),
    _Entry(
        id="001-vector",
        document=DOC_001,
        quantity="dx",
        uses_eps=False,
        formula=r"\nabla_X = \frac{1}{\sigma}\nabla_{\hat X} - \frac{1}{n\sigma}\mathbf{1}"
        r"\sum_{i} \nabla_{\hat X_i} - \frac{1}{n\sigma}\hat X \odot \Big(\sum_{i} "
        r"\nabla_{\hat X_i}\hat X_i\Big),\quad \nabla_{\hat X} = \nabla_Y \odot \gamma",
        written=three_term_dx,
    ),
    _Entry(
        id="001-compact",
        document=DOC_001,
        quantity="dx",
        uses_eps=False,
        formula=r"\nabla_X = \frac{1}{\sigma}\left(\nabla_Y \odot \gamma - \left(\frac{1}{n}"
        r"\hat X \cdot (\nabla_Y \odot \gamma)\right) \odot \hat X - \frac{1}{n}\nabla_Y "
        r"\cdot \gamma\right)",
        written=doc001_compact_dx,
    ),
    _Entry(
        id="002-dgamma",
        document=DOC_002,
        quantity="dgamma",
        uses_eps=True,
        formula=r"\frac{\partial \mathcal{L}}{\partial \gamma} = \sum_{i=1}^{m} "
        r"\frac{\partial \mathcal{L}}{\partial y_i} \odot \hat{x}_i \quad (1)",
        written=dgamma_summed,
    ),
    _Entry(
        id="002-dbeta",
        document=DOC_002,
        quantity="dbeta",
        uses_eps=True,
        formula=r"\frac{\partial \mathcal{L}}{\partial \beta} = \sum_{i=1}^{m} "
        r"\frac{\partial \mathcal{L}}{\partial y_i} \quad (2)",
        written=dbeta_summed,
    ),
    _Entry(
        id="002-dx-expanded",
        document=DOC_002,
        quantity="dx",
        uses_eps=True,
        formula=r"\frac{\partial \mathcal{L}}{\partial \mathbf{x}} = \frac{\partial "
        r"\mathcal{L}}{\partial \hat{\mathbf{x}}} (\sigma^2 + \epsilon)^{-\frac{1}{2}} - "
        r"\frac{\partial \mathcal{L}}{\partial \hat{\mathbf{x}}}(\sigma^2 + \epsilon)^{-"
        r"\frac{1}{2}}\frac{1}{H}\sum_{j}\frac{\partial \mathcal{L}}{\partial \hat{x}_j} - "
        r"\frac{1}{2}(\sigma^2 + \epsilon)^{-\frac{3}{2}}(\mathbf{x} - \mu)\sum_{j}"
        r"\frac{\partial \mathcal{L}}{\partial \hat{x}_j}(x_j - \mu)",
        written=doc002_dx_expanded,
        mistake="Two slips when (7)-(10) are put together. The mean term is ∂L/∂μ · ∂μ/∂x = "
        "-(σ²+ε)^(-1/2) (1/H) Σ_j ∂L/∂x̂_j, with no further factor ∂L/∂x̂. The variance term "
        "must also be multiplied by ∂σ²/∂x = (2/H)(x - μ) from (10); the 2/H is missing, "
        "leaving 1/2 where 1/H belongs.",
        correction=r"\frac{\partial \mathcal{L}}{\partial \mathbf{x}} = \frac{\partial "
        r"\mathcal{L}}{\partial \hat{\mathbf{x}}} (\sigma^2 + \epsilon)^{-\frac{1}{2}} - "
        r"(\sigma^2 + \epsilon)^{-\frac{1}{2}}\frac{1}{H}\sum_{j}\frac{\partial \mathcal{L}}"
        r"{\partial \hat{x}_j} - \frac{1}{H}(\sigma^2 + \epsilon)^{-\frac{3}{2}}(\mathbf{x} - "
        r"\mu)\sum_{j}\frac{\partial \mathcal{L}}{\partial \hat{x}_j}(x_j - \mu)",
        corrected=lambda case: _doc002_expanded(case, 1.0, 1.0 / case.n),
    ),
    _Entry(
        id="002-dx-bracket",
        document=DOC_002,
        quantity="dx",
        uses_eps=True,
        formula=r"\frac{\partial \mathcal{L}}{\partial \mathbf{x}} = \frac{(\sigma^2 + "
        r"\epsilon)^{-\frac{1}{2}}}{H}\left[H\frac{\partial \mathcal{L}}{\partial "
        r"\hat{\mathbf{x}}} - \sum_{j}\frac{\partial \mathcal{L}}{\partial \hat{x}_j} - "
        r"\hat{\mathbf{x}} \sum_{j}\frac{\partial \mathcal{L}}{\partial \hat{x}_j}x_j\right]",
        written=doc002_dx_bracket,
        mistake="Pulling (σ²+ε)^(-1/2) out of the variance term turns (x - μ)(x_j - μ)(σ²+ε)^-1 "
        "into x̂ x̂_j, so the last sum must weight by x̂_j. Σ_j ∂L/∂x̂_j x_j differs from it by "
        "a scale and by μ Σ_j ∂L/∂x̂_j, which is not 0.",
        correction=r"\frac{\partial \mathcal{L}}{\partial \mathbf{x}} = \frac{(\sigma^2 + "
        r"\epsilon)^{-\frac{1}{2}}}{H}\left[H\frac{\partial \mathcal{L}}{\partial "
        r"\hat{\mathbf{x}}} - \sum_{j}\frac{\partial \mathcal{L}}{\partial \hat{x}_j} - "
        r"\hat{\mathbf{x}} \sum_{j}\frac{\partial \mathcal{L}}{\partial \hat{x}_j}\hat{x}_j"
        r"\right]",
        corrected=lambda case: _doc002_bracket(case, case.xhat),
    ),
    _Entry(
        id="003-dbeta",
        document=DOC_003,
        quantity="dbeta",
        uses_eps=True,
        formula=r"\frac{\partial L}{\partial \beta_i} = \sum_{b,s} dy_{b,s,i}",
        written=dbeta_summed,
    ),
    _Entry(
        id="003-dgamma",
        document=DOC_003,
        quantity="dgamma",
        uses_eps=True,
        formula=r"\frac{\partial L}{\partial \gamma_i} = \sum_{b,s} dy_{b,s,i}\cdot"
        r"\hat{x}_{b,s,i}",
        written=dgamma_summed,
    ),
    _Entry(
        id="003-dx",
        document=DOC_003,
        quantity="dx",
        uses_eps=True,
        formula=r"dx_i = \frac{1}{\sqrt{\sigma^2+\varepsilon}} \left[ dy_i\,\gamma_i - "
        r"\frac{1}{D}\sum_{j} dy_j\,\gamma_j - \frac{\hat{x}_i}{D}\sum_{j} dy_j\,\gamma_j\,"
        r"\hat{x}_j \right]",
        written=three_term_dx,
    ),
    _Entry(
        id="004-dgamma",
        document=DOC_004,
        quantity="dgamma",
        uses_eps=True,
        formula=r"\text{⑨}\ d\gamma = normalized\_x * d\gamma x",
        written=doc004_dgamma,
        mistake="γ is shared by every row of the batch, so its gradient is the sum over the "
        "batch of normalized_x * dout; as written it keeps one row per sample.",
        correction=r"\text{⑨}\ d\gamma = \sum_{\text{batch}} normalized\_x * d\gamma x",
        corrected=lambda case: _doc004_backward(case, with_sums=True).dgamma,
    ),
    _Entry(
        id="004-dbeta",
        document=DOC_004,
        quantity="dbeta",
        uses_eps=True,
        formula=r"\text{⑩}\ d\beta = 1 * dout",
        written=doc004_dbeta,
        mistake="β is shared by every row of the batch, so its gradient is the sum of dout "
        "over the batch; as written it keeps one row per sample.",
        correction=r"\text{⑩}\ d\beta = \sum_{\text{batch}} dout",
        corrected=lambda case: _doc004_backward(case, with_sums=True).dbeta,
    ),
    _Entry(
        id="004-dx",
        document=DOC_004,
        quantity="dx",
        uses_eps=True,
        formula=r"\text{⑧}\ dinversed\_sqrt\_sve = x_{sm} * dnormalized\_x,\quad \text{②}\ "
        r"dsample\_mean = -1 * dx_{sm},\quad dx = dx_1 + dx_2",
        written=doc004_dx,
        mistake="inversed_sqrt_sve and sample_mean are one number per normalized group, "
        "broadcast to every entry in the forward pass, so their gradients must sum over the N "
        "entries they reached (at ⑧ and ②); as written every entry keeps its own. The "
        "leading '-' at ⑥ and ⑦ reads as a bullet: read as signs they would flip dsqrt_sve "
        "and dsve, but the two flips cancel and dx would not change.",
        correction=r"\text{⑧}\ dinversed\_sqrt\_sve = \sum_{j=1}^{N} x_{sm,j} * dnormalized\_x_j,"
        r"\quad \text{②}\ dsample\_mean = -\sum_{j=1}^{N} dx_{sm,j}",
        corrected=lambda case: _doc004_backward(case, with_sums=True).dx,
        reference_note="; 004 normalizes over its N entries like BatchNorm, evaluated here on "
        "the normalized axis of this view (N = D)",
    ),
)


def _case(x, gamma, beta, dout, eps: float) -> _Case:
    cache = forward(x, gamma, beta, eps)
    return _Case(cache=cache, grads=backward(dout, cache))


def _evaluate(entry: _Entry, case: _Case) -> AuditResult:
    eps_note = "" if entry.uses_eps else " (the document defines σ without ε)"
    with numeric_guard(f"Formula {entry.id}"):
        reference = (
            getattr(case.grads, entry.quantity)
            if entry.reference is None
            else entry.reference(case)
        )
        error = rel_error(entry.written(case), reference)
        correction_error = (
            None if entry.corrected is None else rel_error(entry.corrected(case), reference)
        )
    return AuditResult(
        id=entry.id,
        document=entry.document,
        quantity=entry.quantity,
        formula_as_written=entry.formula,
        verdict="correct" if error <= tolerance(case.cache.dtype) else "wrong",
        error=error,
        mistake=entry.mistake,
        correction=entry.correction,
        correction_error=correction_error,
        compared_with=f"the staged backward at eps = {case.cache.eps:g}{eps_note}"
        f"{entry.reference_note}",
    )


def audit(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float = 1e-5
) -> list[AuditResult]:
    """Every seed formula for dx, dgamma, dbeta, evaluated on these inputs (LayerNorm view).

    x: (D,), (N, D) or (B, L, D); gamma, beta: (D,); dout: x's shape. Documents with ε use
    `eps`; documents without it are compared at eps = 0. Returns one AuditResult per entry of
    ENTRIES, in order.
    """
    eps = check_eps(eps)
    with_eps = _case(x, gamma, beta, dout, eps)
    try:
        without_eps = _case(x, gamma, beta, dout, 0.0)
    except ValueError as err:
        raise ValueError(
            f"Documents 000 and 001 define σ without ε, so they are checked at eps = 0: {err}"
        ) from None
    return [_evaluate(e, with_eps if e.uses_eps else without_eps) for e in ENTRIES]
