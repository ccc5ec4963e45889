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


def node_reference(x, gamma, beta, dout, eps: float) -> dict[str, np.ndarray]:
    """The gradient of every staged node of ln_core.forward (and of x), by the chain rule in
    np.longdouble from the same inputs, keyed by node name (as check_node names them): each is
    the total derivative of sum(dout * out) through everything after that node."""
    x, gamma, dout = (np.asarray(a, np.longdouble) for a in (x, gamma, dout))
    d = x.shape[-1]
    xc = x - np.mean(x, axis=-1, keepdims=True)
    root = np.sqrt(np.mean(xc * xc, axis=-1, keepdims=True) + np.longdouble(eps))
    g = dout * gamma
    dinv = np.sum(g * xc, axis=-1, keepdims=True)
    dvar = -dinv / (2 * root**3)
    dxc = g / root + 2 * xc * dvar / d
    dmean = -np.sum(dxc, axis=-1, keepdims=True)
    return {
        "out": dout,
        "gx": dout,
        "normalized_x": g,
        "inv_sqrt_sve": dinv,
        "sqrt_sve": -dinv / root**2,
        "sve": dvar,
        "sample_var": dvar,
        "sq_xsm": np.broadcast_to(dvar / d, x.shape),
        "x_sm": dxc,
        "sample_mean": dmean,
        "x": dxc + dmean / d,
    }
