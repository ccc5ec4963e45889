"""The upstream gradient dout = dL/dout that the backward pass starts from."""

from __future__ import annotations

import numpy as np

from ln_core.validation import as_float_array, check_shape


def one_hot(shape: tuple[int, ...], index: int) -> np.ndarray:
    """dout with a single 1 at output `index` (counted along the last axis) in every vector."""
    d = shape[-1]
    if not 0 <= index < d:
        raise ValueError(f"The one-hot output must be between 0 and {d - 1}, got {index}.")
    dout = np.zeros(shape)
    dout[..., index] = 1.0
    return dout


def squared_error_gradient(out: np.ndarray, target: np.ndarray) -> np.ndarray:
    """dL/dout for L = 1/2 * ||out - target||^2, which is out - target; out's shape."""
    target = as_float_array("target", target)
    check_shape("target", target, out.shape, "one target per output")
    return out - target.astype(out.dtype)


def constant_dout_warning(gamma: np.ndarray, dout: np.ndarray) -> str | None:
    """Why a constant dout (e.g. all ones) is a weak test, or None if dout is not constant."""
    if not np.all(dout == dout.reshape(-1)[0]):
        return None
    if np.all(gamma == gamma[0]):
        return (
            "dout is the same in every entry and gamma is uniform, so dout * gamma is parallel "
            "to the ones vector, which the Jacobian sends to 0: dx is exactly 0, and a wrong "
            "backward pass could match it. Pick another upstream gradient."
        )
    return (
        "A constant dout tests little: with a uniform gamma, dx would be exactly 0 (LayerNorm's "
        "Jacobian sends the ones vector to 0). Here gamma varies, so dx is not 0, but a random "
        "or one-hot dout is a stronger test."
    )
