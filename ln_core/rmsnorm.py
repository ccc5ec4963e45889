"""RMSNorm as a staged graph: LayerNorm without the mean node.

    1  sq_x         = x ** 2
    2  mean_sq      = mean(sq_x)              reduced over `axis`, kept as size 1
    3  mse          = mean_sq + eps
    4  sqrt_mse     = sqrt(mse)
    5  inv_sqrt_mse = 1 / sqrt_mse
    6  normalized_x = x * inv_sqrt_mse
    7  gx           = gamma * normalized_x
    8  out          = gx + beta

Nothing is subtracted, so RMSNorm forgets the scale of x (for eps = 0) but not its offset:
its Jacobian sends x to 0 but not the ones vector.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ln_core.backward import Grads, param_axes
from ln_core.forward import StagedCache
from ln_core.jacobian import one_vector
from ln_core.validation import (
    check_axis,
    check_dout,
    check_eps,
    check_input_x,
    check_params,
    numeric_guard,
)

RMS_NODE_NAMES = (
    "sq_x",
    "mean_sq",
    "mse",
    "sqrt_mse",
    "inv_sqrt_mse",
    "normalized_x",
    "gx",
    "out",
)


@dataclass(frozen=True)
class RMSCache(StagedCache):
    """Inputs and the eight nodes of one RMSNorm forward pass.

    Shapes, for x of shape S normalized over `axis`: gamma, beta: (D,) on the last axis.
    mean_sq, mse, sqrt_mse, inv_sqrt_mse have shape S with S[axis] = 1; the other nodes have S.
    """

    NODES: ClassVar[tuple[str, ...]] = RMS_NODE_NAMES
    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    eps: float
    axis: int
    sq_x: np.ndarray = field(repr=False)
    mean_sq: np.ndarray = field(repr=False)
    mse: np.ndarray = field(repr=False)
    sqrt_mse: np.ndarray = field(repr=False)
    inv_sqrt_mse: np.ndarray = field(repr=False)
    normalized_x: np.ndarray = field(repr=False)
    gx: np.ndarray = field(repr=False)
    out: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class RMSGrads(Grads):
    """Grads of sum(dout * out) plus every node's gradient (`d<node>`, the node's shape).

    x feeds both sq_x and normalized_x, so dx = dx_via_normalized_x + dx_via_sq_x.
    """

    dout: np.ndarray = field(repr=False)
    dgx: np.ndarray = field(repr=False)
    dnormalized_x: np.ndarray = field(repr=False)
    dinv_sqrt_mse: np.ndarray = field(repr=False)
    dsqrt_mse: np.ndarray = field(repr=False)
    dmse: np.ndarray = field(repr=False)
    dmean_sq: np.ndarray = field(repr=False)
    dsq_x: np.ndarray = field(repr=False)
    dx_via_normalized_x: np.ndarray = field(repr=False)
    dx_via_sq_x: np.ndarray = field(repr=False)


def _check_mse(mse: np.ndarray) -> None:
    """mse >= eps, so it is 0 only for eps = 0 and a vector whose squares are all (rounded to) 0."""
    zero = mse == 0
    if zero.any():
        which = tuple(int(i) for i in np.argwhere(zero)[0])
        raise ValueError(
            f"The vector at index {which} is all zeros (or so small that its squares round to 0) "
            "and eps = 0, so x / sqrt(mean(x^2) + eps) is 0 / 0. Set eps > 0 or use a non-zero "
            "vector."
        )


def rms_forward(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    eps: float = 1e-5,
    axis: int = -1,
) -> RMSCache:
    """Staged RMSNorm forward: out = gamma * x / sqrt(mean(x^2) + eps) + beta.

    x: (D,), (N, D) or (B, L, D); gamma, beta: (D,). Returns an RMSCache whose `out` has x's
    shape and dtype. Raises ValueError on any input where the result is undefined.
    """
    x = check_input_x(x)
    gamma, beta = check_params(x, gamma, beta)
    eps = check_eps(eps)
    axis = check_axis(axis, x.ndim)
    with numeric_guard("The RMSNorm forward pass"):
        sq_x = x**2
        mean_sq = np.mean(sq_x, axis=axis, keepdims=True)
        mse = mean_sq + eps
        # Name a zero mean square before sqrt and 1/x turn it into a generic error.
        _check_mse(mse)
        sqrt_mse = np.sqrt(mse)
        inv_sqrt_mse = 1.0 / sqrt_mse
        normalized_x = x * inv_sqrt_mse
        gx = gamma * normalized_x
        out = gx + beta
    return RMSCache(
        x=x,
        gamma=gamma,
        beta=beta,
        eps=eps,
        axis=axis,
        sq_x=sq_x,
        mean_sq=mean_sq,
        mse=mse,
        sqrt_mse=sqrt_mse,
        inv_sqrt_mse=inv_sqrt_mse,
        normalized_x=normalized_x,
        gx=gx,
        out=out,
    )


def rms_backward(dout: np.ndarray, cache: RMSCache) -> RMSGrads:
    """Staged RMSNorm backward for the loss sum(dout * out).

    dout: x's shape (cast to x's dtype). Returns RMSGrads: dx (x's shape), dgamma and dbeta
    (D,), and every node's gradient.
    """
    dout = check_dout(dout, cache.x.shape, cache.dtype)
    axis = cache.axis

    def reduce(a: np.ndarray) -> np.ndarray:
        # A node reduced over `axis` was broadcast back in later lines, so its gradient sums.
        return np.sum(a, axis=axis, keepdims=True)

    with numeric_guard("The RMSNorm backward pass"):
        # 8  out = gx + beta
        dgx = dout
        dbeta = np.sum(dout, axis=param_axes(dout.ndim))

        # 7  gx = gamma * normalized_x
        dgamma = np.sum(cache.normalized_x * dgx, axis=param_axes(dgx.ndim))
        dnormalized_x = cache.gamma * dgx

        # 6  normalized_x = x * inv_sqrt_mse
        dx_via_normalized_x = cache.inv_sqrt_mse * dnormalized_x
        dinv_sqrt_mse = reduce(cache.x * dnormalized_x)

        # 5  inv_sqrt_mse = 1 / sqrt_mse
        dsqrt_mse = -1.0 / cache.sqrt_mse**2 * dinv_sqrt_mse

        # 4  sqrt_mse = sqrt(mse)
        dmse = 0.5 / cache.sqrt_mse * dsqrt_mse

        # 3  mse = mean_sq + eps              (eps is a hyperparameter: no gradient)
        dmean_sq = dmse

        # 2  mean_sq = mean(sq_x)
        dsq_x = np.ones_like(cache.sq_x) / cache.n * dmean_sq

        # 1  sq_x = x ** 2
        dx_via_sq_x = 2.0 * cache.x * dsq_x
        dx = dx_via_normalized_x + dx_via_sq_x

    return RMSGrads(
        dx=dx,
        dgamma=dgamma,
        dbeta=dbeta,
        dout=dout,
        dgx=dgx,
        dnormalized_x=dnormalized_x,
        dinv_sqrt_mse=dinv_sqrt_mse,
        dsqrt_mse=dsqrt_mse,
        dmse=dmse,
        dmean_sq=dmean_sq,
        dsq_x=dsq_x,
        dx_via_normalized_x=dx_via_normalized_x,
        dx_via_sq_x=dx_via_sq_x,
    )


def rms_jacobian(x: np.ndarray, gamma: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """J[i, j] = d out_i / d x_j for one vector x (D,); shape (D, D), x's dtype.

    With s = 1/sqrt(mean(x^2) + eps) and xhat = x * s: J[i, j] = gamma_i s (delta_ij -
    xhat_i xhat_j / D). Written from the formula, not from rms_backward, so each checks the other.
    """
    x = one_vector(x)
    cache = rms_forward(x, gamma, np.zeros(x.shape[-1]), eps)
    xhat, s = cache.normalized_x, cache.inv_sqrt_mse
    with numeric_guard("The RMSNorm Jacobian"):
        projection = np.eye(cache.n, dtype=cache.dtype) - np.outer(xhat, xhat) / cache.n
        return cache.gamma[:, None] * s * projection
