"""The Jacobian J[i, j] = d out_i / d x_j of LayerNorm for one vector, and its three parts."""

from __future__ import annotations

import numpy as np

from ln_core.closed_form import PathTerms, dx_path_terms
from ln_core.forward import forward
from ln_core.validation import check_input_x


def one_vector(x: np.ndarray) -> np.ndarray:
    """x validated as one vector (D,); a batch raises ValueError asking for one row."""
    x = check_input_x(x)
    if x.ndim != 1:
        raise ValueError(
            f"The Jacobian is drawn for one vector x of shape (D,), but x has shape {x.shape}; "
            "pick one row first."
        )
    return x


def jacobian_parts(x: np.ndarray, gamma: np.ndarray, eps: float = 1e-5) -> PathTerms:
    """J split by path: direct, through the mean, through the variance; each (D, D), sum = J.

    Row i of each part is that part of dx when dout is the one-hot vector e_i, so the parts come
    from the same closed-form terms as the backward pass (dx = dout @ J).
    With s = 1/sqrt(var + eps): direct = diag(gamma * s); through_mean[i, j] = -gamma_i s / D;
    through_variance[i, j] = -gamma_i s xhat_i xhat_j / D.
    """
    x = one_vector(x)
    cache = forward(x, gamma, np.zeros_like(gamma, dtype=float), eps)
    one_hot_rows = np.diag(cache.gamma)  # dnormalized_x = e_i * gamma for each output i
    terms = dx_path_terms(one_hot_rows, cache.normalized_x, cache.inv_sqrt_sve, cache.axis)
    # through_mean does not depend on j, so it comes out (D, 1): spell every part out as (D, D).
    full = one_hot_rows.shape
    return PathTerms(
        direct=np.broadcast_to(terms.direct, full).copy(),
        through_mean=np.broadcast_to(terms.through_mean, full).copy(),
        through_variance=np.broadcast_to(terms.through_variance, full).copy(),
    )


def jacobian(x: np.ndarray, gamma: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """J = d out / d x for one vector x (D,), from the closed form; shape (D, D), x's dtype."""
    return jacobian_parts(x, gamma, eps).total
