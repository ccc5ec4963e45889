"""What the audited formulas claim to be, each with its autograd-free reference and natural size.

References come from ln_core only: the staged backward's node gradients, the closed form the
Jacobian is built from (its three paths), or central differences through the staged forward.
The natural size (`scale`) bounds the terms a quantity is made of on these inputs, so an
agreement or a reference of "about 0" is measured against the numbers that went into it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ln_core.audit.model import Quantity
from ln_core.audit.setting import Setting, sublayer_gain
from ln_core.closed_form import dx_path_terms

# -- natural sizes ---------------------------------------------------------------------------

_ROWS = "all of them up to D = 8, else 8 evenly spaced"


Scale = Callable[[Setting], np.ndarray]


def size_dx(st: Setting) -> np.ndarray:
    """s Σ|dx̂| per group: bounds every term of dx (direct, through μ, through σ²)."""
    return st.largest(st.s * st.group_sum(np.abs(st.dxhat)))


def size_dxhat(st: Setting) -> np.ndarray:
    return st.largest(np.abs(st.dxhat))


def normalized_moment(st: Setting) -> np.ndarray:
    """Σ|x̂ dx̂| per group, which is s Σ|(x - μ) dx̂|: the sums behind dσ² and dsqrt_sve are
    sized in x̂ so that no power of s is formed. At eps = 0 a variance of 1e-300 makes s³
    overflow while s³ Σ|(x - μ) dx̂| is finite."""
    return st.group_sum(np.abs(st.xhat * st.dxhat))


def size_dvar(st: Setting) -> np.ndarray:
    """s³ Σ|(x - μ) dx̂| / 2, written as s² Σ|x̂ dx̂| / 2 (see normalized_moment)."""
    return st.largest(0.5 * st.s * (st.s * normalized_moment(st)))


def _spread(st: Setting) -> np.ndarray:
    """max(1, max|x̂|): a normalized entry's size, at least 1."""
    return np.maximum(1.0, st.largest(np.abs(st.xhat)))


def size_dy(st: Setting) -> np.ndarray:
    return st.largest(np.abs(st.dy))


def size_dgamma(st: Setting) -> np.ndarray:
    return st.largest(st.batch_sum(np.abs(st.dy))) * _spread(st)


def size_dbeta(st: Setting) -> np.ndarray:
    return st.largest(st.batch_sum(np.abs(st.dy)))


def size_xhat_jacobian(st: Setting) -> np.ndarray:
    """Entries of ∂x̂/∂x are s times (1, 1/n or x̂_k x̂_l / n)."""
    return st.largest(st.s) * _spread(st) ** 2


def _derivative_of_x(st: Setting) -> float:
    return 1.0 / st.n


# -- loss gradients from the staged backward ---------------------------------------------------


def node_gradient(attribute: str, text: str, scale: Scale) -> Quantity:
    """The staged backward's gradient `attribute` (e.g. dsample_var, dx_sm_via_sq_xsm)."""
    return Quantity(
        text=text,
        how=f"the staged backward's {attribute}",
        compute=lambda st: getattr(st.grads, attribute),
        scale=scale,
    )


DX = node_gradient("dx", "∂L/∂x, the gradient reaching LayerNorm's input", size_dx)
DXHAT = node_gradient("dnormalized_x", "∂L/∂x̂, the gradient at the normalized x", size_dxhat)
DMU = node_gradient("dsample_mean", "∂L/∂μ, the gradient at the mean (all its paths)", size_dx)
DVAR = node_gradient("dsample_var", "∂L/∂σ², the gradient at the variance", size_dvar)

DMU_VIA_XHAT = Quantity(
    text="the part of ∂L/∂μ that reaches μ straight from x̂ (path 1)",
    how="minus the sum of the staged backward's dx_sm_via_normalized_x",
    compute=lambda st: -st.group_sum(st.grads.dx_sm_via_normalized_x),
    scale=size_dx,
)
DMU_VIA_VAR = Quantity(
    text="the part of ∂L/∂μ that reaches μ through σ² (path 2)",
    how="minus the sum of the staged backward's dx_sm_via_sq_xsm",
    compute=lambda st: -st.group_sum(st.grads.dx_sm_via_sq_xsm),
    # s³ Σ|(x - μ) dx̂| Σ|x - μ| / n, in x̂ (see normalized_moment).
    scale=lambda st: st.largest(
        st.s * normalized_moment(st) * st.group_sum(np.abs(st.xhat)) / st.n
    ),
    always_zero=True,
)
# The staged backward's dgx is dout, and its dgamma, dbeta are dgx ⊙ normalized_x and dgx
# summed over the vectors: the references below take those terms per vector or summed.
DGAMMA = Quantity(
    text="∂L/∂γ, one per feature, summed over the vectors",
    how="the staged backward's dgamma (dgx ⊙ normalized_x summed over the vectors)",
    compute=lambda st: st.batch_sum(st.dy * st.xhat),
    scale=size_dgamma,
)
DBETA = Quantity(
    text="∂L/∂β, one per feature, summed over the vectors",
    how="the staged backward's dbeta (dgx summed over the vectors)",
    compute=lambda st: st.batch_sum(st.dy),
    scale=size_dbeta,
)
DGX = Quantity(
    text="dgx, the gradient at gx = γ · normalized_x",
    how="the staged backward's dgx",
    compute=lambda st: st.dy,
    scale=size_dy,
)
DGAMMA_VECTOR = Quantity(
    text="∂L/∂γ_i from one vector alone (its term before the sum over vectors)",
    how="the staged backward's dgx times normalized_x, per vector",
    compute=lambda st: st.dy * st.xhat,
    scale=lambda st: size_dy(st) * _spread(st),
)
# One vector's term of dβ is that vector's dgx: the same values, judged at the same size.
DBETA_VECTOR = replace(
    DGX,
    text="∂L/∂β_i from one vector alone (its term before the sum over vectors)",
    how="the staged backward's dgx, per vector",
)
DGAMMA_SCALAR = Quantity(
    text="∂C/∂γ for one scalar γ shared by every feature (and every vector)",
    how="the staged backward's dgamma, summed over the features",
    compute=lambda st: st.total(st.dy * st.xhat),
    scale=lambda st: st.largest(st.total(np.abs(st.dy))) * _spread(st),
)
DBETA_SCALAR = Quantity(
    text="∂C/∂β for one scalar β shared by every feature (and every vector)",
    how="the staged backward's dbeta, summed over the features",
    compute=lambda st: st.total(st.dy),
    scale=lambda st: st.largest(st.total(np.abs(st.dy))),
)


def _residual_size(st: Setting) -> np.ndarray:
    """dz's size on the block's LayerNorm, times 1 + the sublayer's largest row sum |W|."""
    block, grads = st.residual
    ln_size = st.largest(
        block.ln.inv_sqrt_sve * np.sum(np.abs(grads.ln.dnormalized_x), -1, keepdims=True)
    )
    return ln_size * sublayer_gain(st.x.shape[-1])


RESIDUAL_DX = Quantity(
    text="∂C/∂x for the block z = x + y(x): the gradient reaching x by both paths",
    how="ln_core.residual's backward (dx = dx_skip + dx_sublayer), with the lab's seeded "
    "sublayer y(x) = tanh(x W + c) and this model's LayerNorm of z",
    compute=lambda st: st.residual[1].dx,
    scale=_residual_size,
)
RESIDUAL_DY = Quantity(
    text="∂C/∂y⁽ⁿ⁾, the gradient reaching the sublayer's output in z = x + y",
    how=f"central differences in the sublayer's output y⁽ⁿ⁾ with x held (z = x + y moves, "
    f"LayerNorm re-runs); entries: {_ROWS}",
    compute=lambda st: st.sublayer_output_derivative(),
    scale=_residual_size,
    moved="y",
    read="normalized_x",
    at_rows=True,
)

# -- Jacobian entries, rows k of Setting.rows: (V, R, D) --------------------------------------


def _xhat_path(path: str, text: str) -> Quantity:
    return Quantity(
        text=text,
        how=f"the {path.replace('_', ' ')} path of ln_core's Jacobian (its closed form with a "
        f"one-hot dx̂); rows k: {_ROWS}",
        compute=lambda st: getattr(st.xhat_jacobian, path),
        scale=size_xhat_jacobian,
    )


XHAT_DIRECT = _xhat_path("direct", "∂x̂_i/∂x_j through the direct path only (μ, σ held)")
XHAT_VIA_MEAN = _xhat_path("through_mean", "∂x̂_i/∂x_j through μ only")
XHAT_VIA_VAR = _xhat_path("through_variance", "∂x̂_i/∂x_j through σ only")

Y_JACOBIAN = Quantity(
    text="∂y_k/∂z_l, LayerNorm's Jacobian with one scalar γ",
    how=f"γ times the three paths of ln_core's Jacobian of x̂; rows k: {_ROWS}",
    compute=lambda st: st.gamma_scalar[..., None] * st.xhat_jacobian.total,
    scale=lambda st: st.largest(np.abs(st.gamma_scalar)) * size_xhat_jacobian(st),
)
J_000 = Quantity(
    text="J = (Nσ/γ) ∂y/∂z, LayerNorm's Jacobian without its factor γ/(Nσ)",
    how=f"N σ times the three paths of ln_core's Jacobian of x̂; rows k: {_ROWS}",
    compute=lambda st: st.n * st.at_columns(st.sigma) * st.xhat_jacobian.total,
    scale=lambda st: st.n * _spread(st) ** 2,
)


def applied_jacobian(st: Setting, upstream: np.ndarray) -> np.ndarray:
    """upstream (C, V, D) times ∂x̂/∂x, applied through ln_core's closed form (the matrix is
    symmetric, so row or column vector gives the same product). (C, V, D)."""
    return dx_path_terms(upstream, st.xhat, st.s, st.cache.axis).total


# -- central differences through the staged forward -------------------------------------------

_CENTRAL = "central differences through the staged forward (ln_core.forward_from)"


def _of_x(node: str, text: str, scale: Scale) -> Quantity:
    return Quantity(
        text=text,
        how=f"{_CENTRAL}: x_j moved, {node} read; j: {_ROWS}",
        compute=lambda st: st.x_derivative(node)[..., 0],
        scale=scale,
        moved="x",
        read=node,
    )


DMU_DX = _of_x("sample_mean", "∂μ/∂x_j", _derivative_of_x)
DVAR_DX = _of_x(
    "sample_var", "∂σ²/∂x_j", lambda st: 2.0 * st.largest(np.abs(st.x_sm) + st.sigma) / st.n
)
DSIGMA_DX = _of_x("sqrt_sve", "∂σ/∂x_j (σ without ε)", lambda st: _spread(st) / st.n)
DSQUARE_DX = Quantity(
    text="∂(x_i − μ)²/∂x_j, through x_i itself and through μ; entry [j, i]",
    how=f"{_CENTRAL}: x_j moved, sq_xsm read; j: {_ROWS}",
    compute=lambda st: st.x_derivative("sq_xsm"),
    scale=lambda st: 2.0 * st.largest(np.abs(st.x_sm) + st.sigma),
    moved="x",
    read="sq_xsm",
)


def _of_node(
    target: str,
    node: str,
    text: str,
    scale: Scale,
    always_zero: bool = False,
) -> Quantity:
    return Quantity(
        text=text,
        how=f"{_CENTRAL}: {node} moved with x held, {target} read",
        compute=lambda st: st.node_derivative(target, node),
        scale=scale,
        always_zero=always_zero,
        moved=node,
        read=target,
    )


XHAT_DMU = _of_node(
    "normalized_x", "sample_mean", "∂x̂_i/∂μ with x and σ held", lambda st: st.largest(st.s)
)
VAR_DMU = _of_node(
    "sample_var",
    "sample_mean",
    "∂σ²/∂μ with x held",
    lambda st: 2.0 * st.largest(st.group_sum(np.abs(st.x_sm))) / st.n,
    always_zero=True,
)
XHAT_DSIGMA = _of_node(
    "normalized_x",
    "sqrt_sve",
    "∂x̂_i/∂σ with x and μ held",
    # s² (|x - μ| + σ), in x̂ (see normalized_moment).
    lambda st: st.largest(st.s * (np.abs(st.xhat) + st.s * st.sigma)),
)
