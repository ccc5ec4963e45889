"""LayerNorm's gradients by the textbook formulas in np.longdouble: an exact reference.

np.longdouble has a 64-bit mantissa on x86-64, 11 more bits than float64, and nothing here
shares code with ln_core, so it is an independent witness for both of ln_core's dtypes.
"""

from __future__ import annotations

import numpy as np


def reference(x, gamma, beta, dout, eps: float) -> dict[str, np.ndarray]:
    """out, dx, dgamma, dbeta of LayerNorm over the last axis (x, dout: (..., D); gamma, beta:
    (D,)), by the textbook formulas in np.longdouble. eps is used as given: pass the working
    dtype's rounding of it (float32 adds float32(eps) to the variance)."""
    x, gamma, beta, dout = (np.asarray(a, np.longdouble) for a in (x, gamma, beta, dout))
    xc = x - np.mean(x, axis=-1, keepdims=True)
    s = 1 / np.sqrt(np.mean(xc * xc, axis=-1, keepdims=True) + np.longdouble(eps))
    xhat = xc * s
    g = dout * gamma
    dx = s * (
        g - np.mean(g, axis=-1, keepdims=True) - xhat * np.mean(g * xhat, axis=-1, keepdims=True)
    )
    rows = tuple(range(x.ndim - 1))
    return {
        "out": xhat * gamma + beta,
        "dx": dx,
        "dgamma": np.sum(dout * xhat, axis=rows),
        "dbeta": np.sum(dout, axis=rows),
    }
