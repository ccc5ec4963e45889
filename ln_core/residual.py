"""The residual block of a post-LN transformer layer: y = LN(x + F(x)), F(x) = tanh(x W + c).

x reaches z = x + F(x) by two paths, the skip connection and the sublayer, so its gradient is
the sum of two parts: dx = dx_skip + dx_sublayer, with dx_skip = dz exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.backward import StagedGrads, backward, param_axes
from ln_core.forward import Cache, forward
from ln_core.numerical import central_difference
from ln_core.validation import (
    as_float_array,
    check_dout,
    check_shape,
    checked_product,
    numeric_guard,
)

# Each pass of the small blocks the lab draws costs about half a millisecond on a busy 2-core
# machine (per-call overhead, not arithmetic), so this many take a few seconds; the Residual
# page's largest input (1,024 entries at D = 32) needs 4,160.
MAX_PASSES = 1 << 13


@dataclass(frozen=True)
class Sublayer:
    """F(x) = tanh(x @ W + c). W: (D, D), c: (D,)."""

    W: np.ndarray
    c: np.ndarray


def make_sublayer(d: int, seed: int = 0, scale: float = 0.5, dtype=np.float64) -> Sublayer:
    """A small random sublayer: W ~ N(0, scale^2 / D) keeps tanh out of saturation."""
    if d < 1:
        raise ValueError(f"The sublayer needs D >= 1 features, got {d}.")
    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, scale / np.sqrt(d), size=(d, d)).astype(dtype)
    c = rng.normal(0.0, 0.1, size=d).astype(dtype)
    return Sublayer(W=w, c=c)


@dataclass(frozen=True)
class ResidualCache:
    """x: (..., D); f = F(x) and z = x + f: x's shape; ln: the LayerNorm cache of z."""

    x: np.ndarray
    sublayer: Sublayer
    f: np.ndarray
    z: np.ndarray
    ln: Cache

    @property
    def out(self) -> np.ndarray:
        return self.ln.out


@dataclass(frozen=True)
class ResidualGrads:
    """Gradients of sum(dout * y). dx = dx_skip + dx_sublayer (x's shape); dz: x's shape;
    dW: (D, D); dc, dgamma, dbeta: (D,); ln: the staged LayerNorm gradients of z."""

    dx: np.ndarray
    dx_skip: np.ndarray
    dx_sublayer: np.ndarray
    dz: np.ndarray
    dW: np.ndarray
    dc: np.ndarray
    dgamma: np.ndarray
    dbeta: np.ndarray
    ln: StagedGrads


def residual_forward(
    x: np.ndarray,
    sublayer: Sublayer,
    gamma: np.ndarray,
    beta: np.ndarray,
    eps: float = 1e-5,
) -> ResidualCache:
    """y = LN(x + tanh(x W + c)) over the last axis. x: (D,), (N, D) or (B, L, D)."""
    x = as_float_array("x", x)
    if x.ndim == 0:
        raise ValueError("x is a single number; it must be a vector (D,) or a batch of vectors.")
    d = x.shape[-1]
    w = as_float_array("W", sublayer.W, x.dtype)
    check_shape("W", w, (d, d), f"the sublayer maps D = {d} features to D features")
    c = as_float_array("c", sublayer.c, x.dtype)
    check_shape("c", c, (d,), f"one bias per feature, D = {d}")
    with numeric_guard("The sublayer"):
        f = np.tanh(checked_product(x, w, "The sublayer") + c)
        z = x + f
    return ResidualCache(
        x=x, sublayer=Sublayer(W=w, c=c), f=f, z=z, ln=forward(z, gamma, beta, eps)
    )


def residual_backward(dout: np.ndarray, cache: ResidualCache) -> ResidualGrads:
    """Backward through LN, then the two paths of z = x + F(x). dout: x's shape."""
    dout = check_dout(dout, cache.x.shape, cache.x.dtype)
    ln_grads = backward(dout, cache.ln)
    what = "The residual backward pass"
    with numeric_guard(what):
        # y = LN(z)
        dz = ln_grads.dx
        # z = x + f                 (both terms get dz unchanged)
        dx_skip = dz
        df = dz
        # f = tanh(pre),  pre = x W + c
        dpre = df * (1.0 - cache.f**2)
        dx_sublayer = checked_product(dpre, cache.sublayer.W.T, what)
        flat_x = cache.x.reshape(-1, cache.x.shape[-1])
        dW = checked_product(flat_x.T, dpre.reshape(-1, dpre.shape[-1]), what)
        dc = np.sum(dpre, axis=param_axes(dpre.ndim))
        dx = dx_skip + dx_sublayer
    return ResidualGrads(
        dx=dx,
        dx_skip=dx_skip,
        dx_sublayer=dx_sublayer,
        dz=dz,
        dW=dW,
        dc=dc,
        dgamma=ln_grads.dgamma,
        dbeta=ln_grads.dbeta,
        ln=ln_grads,
    )


def residual_numerical_grads(
    x: np.ndarray,
    sublayer: Sublayer,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float = 1e-5,
    h: float = 1e-6,
) -> dict[str, np.ndarray]:
    """Central differences of sum(dout * y) for x, W and c (keys dx, dW, dc); small sizes only."""
    cache = residual_forward(x, sublayer, gamma, beta, eps)
    dout = check_dout(dout, cache.x.shape, cache.x.dtype)
    w, c = cache.sublayer.W, cache.sublayer.c
    passes = 2 * (cache.x.size + w.size + c.size)
    if passes > MAX_PASSES:
        raise ValueError(
            f"The numerical gradient of the residual block runs the whole block twice for each "
            f"entry of x, W and c: {passes:,} passes for x of shape {cache.x.shape} and D = "
            f"{c.size}, more than the {MAX_PASSES:,} that finish in a few seconds. "
            "Use fewer vectors or a smaller D."
        )

    def loss(x_: np.ndarray, w_: np.ndarray, c_: np.ndarray) -> float:
        return float(np.sum(dout * residual_forward(x_, Sublayer(w_, c_), gamma, beta, eps).out))

    return {
        "dx": central_difference(lambda v: loss(v, w, c), cache.x, h),
        "dW": central_difference(lambda v: loss(cache.x, v, c), w, h),
        "dc": central_difference(lambda v: loss(cache.x, w, v), c, h),
    }
