"""The Jacobian J[i, j] = d out_i / d x_j of LayerNorm for one vector, and its three parts.

A block normalized over several axes (torch.nn.LayerNorm((L, D)) on one (L, D) input) is one
vector of L * D entries to LayerNorm, so its Jacobian is drawn over the flattened block.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ln_core.closed_form import PathTerms, dx_path_terms, normalize
from ln_core.validation import (
    check_axis,
    check_eps,
    check_input_x,
    check_params,
    numeric_guard,
    resolve_axis,
)


def one_vector(x: np.ndarray, axis: int | tuple[int, ...] = -1) -> np.ndarray:
    """x validated as the one group it normalizes over `axis`, flattened to (P,).

    P = D for a vector (D,); P = L * D for a block (L, D) with axis=(-2, -1). A batch of groups
    raises ValueError asking for one.
    """
    x = check_input_x(x)
    axes = check_axis(axis, x.ndim)
    if len(axes) != x.ndim:
        what, pick = ("vector x of shape (D,)", "row") if len(axes) == 1 else ("block", "block")
        raise ValueError(
            f"The Jacobian is drawn for one {what}, but x has shape {x.shape}; "
            f"pick one {pick} first."
        )
    return x.reshape(-1)


def flat_gamma(x: np.ndarray, gamma: np.ndarray | None, axis: int | tuple[int, ...]):
    """gamma checked against the group x (before flattening) and flattened like it, or None."""
    x = check_input_x(x)
    gamma, _ = check_params(x, gamma, None, check_axis(axis, x.ndim))
    return None if gamma is None else gamma.reshape(-1)


def _path_terms(
    x: np.ndarray, gamma: np.ndarray | None, eps: float, axis: int | tuple[int, ...]
) -> PathTerms:
    """Row i of each term is that part of dx when dout is the one-hot vector e_i.

    direct and through_variance come out (P, P); through_mean does not depend on j and stays
    (P, 1), which broadcasting adds correctly.
    """
    axis = resolve_axis(axis, check_input_x(x), gamma)
    flat_x, flat_g = one_vector(x, axis), flat_gamma(x, gamma, axis)
    # The rescaling closed form, so the Jacobian exists wherever the closed form does.
    n = normalize(flat_x, check_eps(eps), (-1,))
    one_hot_rows = np.eye(flat_x.size, dtype=flat_x.dtype)  # e_i * gamma, each i
    if flat_g is not None:
        one_hot_rows = one_hot_rows * flat_g
    with numeric_guard("The Jacobian"):
        return dx_path_terms(one_hot_rows, n.normalized_x, n.inv_sqrt_sve, (-1,))


def jacobian_parts(
    x: np.ndarray,
    gamma: np.ndarray | None = None,
    eps: float = 1e-5,
    axis: int | tuple[int, ...] | None = None,
) -> PathTerms:
    """J split by path: direct, through the mean, through the variance; each (P, P), sum = J.

    The parts come from the same closed-form terms as the backward pass (dx = dout @ J).
    With s = 1/sqrt(var + eps): direct = diag(gamma * s); through_mean[i, j] = -gamma_i s / P;
    through_variance[i, j] = -gamma_i s xhat_i xhat_j / P. gamma None counts as all ones.
    """
    terms = _path_terms(x, gamma, eps, axis)
    shape = terms.direct.shape
    return replace(terms, through_mean=np.broadcast_to(terms.through_mean, shape).copy())


def jacobian(
    x: np.ndarray,
    gamma: np.ndarray | None = None,
    eps: float = 1e-5,
    axis: int | tuple[int, ...] | None = None,
) -> np.ndarray:
    """J = d out / d x for one group x ((D,), or a block over `axis` flattened to P entries).

    From the closed form; shape (P, P), x's dtype.
    """
    return _path_terms(x, gamma, eps, axis).total
