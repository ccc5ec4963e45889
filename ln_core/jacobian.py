"""The Jacobian J[i, j] = d out_i / d x_j of LayerNorm for one vector, and its three parts."""

from __future__ import annotations

from dataclasses import replace

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


def _path_terms(x: np.ndarray, gamma: np.ndarray, eps: float) -> PathTerms:
    """Row i of each term is that part of dx when dout is the one-hot vector e_i.

    direct and through_variance come out (D, D); through_mean does not depend on j and stays
    (D, 1), which broadcasting adds correctly.
    """
    x = one_vector(x)
    cache = forward(x, gamma, np.zeros_like(gamma, dtype=float), eps)
    one_hot_rows = np.diag(cache.gamma)  # dnormalized_x = e_i * gamma for each output i
    return dx_path_terms(one_hot_rows, cache.normalized_x, cache.inv_sqrt_sve, cache.axis)


def jacobian_parts(x: np.ndarray, gamma: np.ndarray, eps: float = 1e-5) -> PathTerms:
    """J split by path: direct, through the mean, through the variance; each (D, D), sum = J.

    The parts come from the same closed-form terms as the backward pass (dx = dout @ J).
    With s = 1/sqrt(var + eps): direct = diag(gamma * s); through_mean[i, j] = -gamma_i s / D;
    through_variance[i, j] = -gamma_i s xhat_i xhat_j / D.
    """
    terms = _path_terms(x, gamma, eps)
    shape = terms.direct.shape
    return replace(terms, through_mean=np.broadcast_to(terms.through_mean, shape).copy())


def jacobian(x: np.ndarray, gamma: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """J = d out / d x for one vector x (D,), from the closed form; shape (D, D), x's dtype."""
    return _path_terms(x, gamma, eps).total
