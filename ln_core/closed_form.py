"""The compact closed form of LayerNorm's backward pass, split into its three paths.

With xhat = normalized_x, s = inv_sqrt_sve = 1/sqrt(var + eps), g = dout * gamma and means taken
over the normalized axis:

    dx = s * (g - mean(g) - xhat * mean(g * xhat))
             direct  through the mean  through the variance

The three terms are kept apart because the Jacobian's parts and the "break the backward" bugs
are both built from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.backward import Grads, cache_param_grads, times_gamma
from ln_core.forward import Cache
from ln_core.validation import check_dout, numeric_guard


@dataclass(frozen=True)
class PathTerms:
    """dx split by the path x takes to the output; each term has x's shape."""

    direct: np.ndarray
    through_mean: np.ndarray
    through_variance: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return self.direct + self.through_mean + self.through_variance


def dx_path_terms(
    dnormalized_x: np.ndarray,
    normalized_x: np.ndarray,
    inv_sqrt_sve: np.ndarray,
    axis: tuple[int, ...],
) -> PathTerms:
    """The three terms of dx from dnormalized_x (= dout * gamma).

    dnormalized_x, normalized_x: shape S (or broadcastable to it); inv_sqrt_sve: S with
    S[a] = 1 for a in axis. The axes must be negative so that leading stack axes broadcast.
    """
    with numeric_guard("The closed-form backward"):
        mean_g = np.mean(dnormalized_x, axis=axis, keepdims=True)
        mean_gx = np.mean(dnormalized_x * normalized_x, axis=axis, keepdims=True)
        return PathTerms(
            direct=inv_sqrt_sve * dnormalized_x,
            through_mean=-inv_sqrt_sve * mean_g,
            through_variance=-inv_sqrt_sve * normalized_x * mean_gx,
        )


def closed_form_backward(dout: np.ndarray, cache: Cache) -> Grads:
    """dx, dgamma, dbeta from the compact formula; equals `backward` to rounding.

    dout: x's shape. Returns Grads with dx (x's shape), dgamma and dbeta (gamma's shape, or
    None when skipped).
    """
    dout = check_dout(dout, cache.x.shape, cache.dtype)
    g = times_gamma(dout, cache)
    terms = dx_path_terms(g, cache.normalized_x, cache.inv_sqrt_sve, cache.axis)
    dgamma, dbeta = cache_param_grads(dout, cache)
    return Grads(dx=terms.total, dgamma=dgamma, dbeta=dbeta)
