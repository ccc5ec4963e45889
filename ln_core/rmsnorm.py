"""RMSNorm as a staged graph: LayerNorm without the mean node.

Its eight nodes are the eight NumPy statements of `rms_forward` below, and `RMS_LINES` how the
pages print them. Nothing is
subtracted, so RMSNorm forgets the scale of x (for eps = 0) but not its offset: its Jacobian
sends x to 0 but not the ones vector. RMSNorm as published has a gamma and no beta, so beta
defaults to None here (gamma may be None too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ln_core.backward import Grads, cache_param_grads, times_gamma
from ln_core.forward import eps_said, group_at
from ln_core.jacobian import flat_gamma, one_vector
from ln_core.staged import Line, StagedCache
from ln_core.validation import (
    check_dout,
    check_eps,
    check_input_x,
    check_params,
    check_representable,
    numeric_guard,
    resolve_axis,
)

# Each node's line as the pages print it and the values it reads; rms_forward computes them.
RMS_LINES = (
    Line("sq_x", "x ** 2", ("x",)),
    Line("mean_sq", "mean(sq_x)", ("sq_x",)),
    Line("mse", "mean_sq + eps", ("mean_sq", "eps")),
    Line("sqrt_mse", "sqrt(mse)", ("mse",)),
    Line("inv_sqrt_mse", "1 / sqrt_mse", ("sqrt_mse",)),
    Line("normalized_x", "x * inv_sqrt_mse", ("x", "inv_sqrt_mse")),
    Line("gx", "gamma * normalized_x", ("gamma", "normalized_x")),
    Line("out", "gx + beta", ("gx", "beta")),
)
RMS_NODE_NAMES = tuple(line.name for line in RMS_LINES)


@dataclass(frozen=True)
class RMSCache(StagedCache):
    """Inputs and the eight nodes of one RMSNorm forward pass.

    Shapes, for x of shape S normalized over `axis`: gamma, beta as in `forward` (beta is None
    unless given: RMSNorm has none). mean_sq, mse, sqrt_mse, inv_sqrt_mse have shape S with
    S[a] = 1 for a in axis; the other nodes have S.
    """

    LINES: ClassVar[tuple[Line, ...]] = RMS_LINES

    x: np.ndarray
    gamma: np.ndarray | None
    beta: np.ndarray | None
    eps: float
    axis: tuple[int, ...]
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


def _check_nodes(cache: RMSCache) -> None:
    """Refuse, naming the node, where a node is not what its line says (as `forward` does).

    A zero mean square with eps = 0 is 0 / 0; a mean square the squares have underflowed
    (below the smallest normal number though x is not all zeros) has lost digits.
    """
    advice = "Rescale x (at eps = 0 RMSNorm gives the same output for any scale of x)."
    nodes = cache.nodes

    def shown(lines: tuple[Line, ...]) -> list[tuple[str, np.ndarray]]:
        return [(line.text(), nodes[line.name]) for line in lines]

    upto_mse = RMS_NODE_NAMES.index("mse") + 1
    check_representable("The staged RMSNorm pass", shown(RMS_LINES[:upto_mse]), advice)
    mse = nodes["mse"]
    nonzero = np.max(np.abs(cache.x), axis=cache.axis, keepdims=True) > 0
    # Squares that underflowed first: a tiny non-zero vector leaves mse = 0 at eps = 0 too,
    # and its reason is the underflow, not zeros.
    lost = nonzero & (mse < np.finfo(mse.dtype).smallest_normal)
    if lost.any():
        index = np.argwhere(lost)[0]
        group = group_at(cache.axis, mse.ndim, index)
        raise ValueError(
            f"The staged RMSNorm pass cannot show sq_x = x ** 2 for {group}: its squares "
            f"underflow (mse = {float(mse[tuple(index)]):.1e}, below {mse.dtype.name}'s "
            "smallest normal number), losing digits. " + advice
        )
    if (mse == 0).any():
        where = group_at(cache.axis, mse.ndim, np.argwhere(mse == 0)[0]).capitalize()
        raise ValueError(
            f"{where} is all zeros and {eps_said(cache.eps, mse.dtype)}, so "
            "x / sqrt(mean(x^2) + eps) is 0 / 0. Set eps > 0 or use a non-zero vector."
        )
    check_representable("The staged RMSNorm pass", shown(RMS_LINES[upto_mse:]), advice)


def rms_forward(
    x: np.ndarray,
    gamma: np.ndarray | None = None,
    beta: np.ndarray | None = None,
    eps: float = 1e-5,
    axis: int | tuple[int, ...] | None = None,
) -> RMSCache:
    """Staged RMSNorm forward: out = gamma * x / sqrt(mean(x^2) + eps) + beta.

    x: (D,), (N, D) or (B, L, D); gamma, beta: as in `forward`, each optional (RMSNorm as
    published has a gamma and no beta). Returns an RMSCache whose `out` has x's shape and
    dtype. Raises ValueError on any input where the result is undefined.
    """
    x = check_input_x(x)
    eps = check_eps(eps)
    axis = resolve_axis(axis, x, gamma, beta)
    gamma, beta = check_params(x, gamma, beta, axis)
    # Overflow and underflow are let through, then looked for node by node (_check_nodes).
    with np.errstate(all="ignore"):
        sq_x = x**2
        mean_sq = np.mean(sq_x, axis=axis, keepdims=True)
        mse = mean_sq + eps
        sqrt_mse = np.sqrt(mse)
        inv_sqrt_mse = 1 / sqrt_mse
        normalized_x = x * inv_sqrt_mse
        gx = normalized_x if gamma is None else gamma * normalized_x
        out = gx if beta is None else gx + beta
    cache = RMSCache(
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
    _check_nodes(cache)
    return cache


def rms_backward(dout: np.ndarray, cache: RMSCache) -> RMSGrads:
    """Staged RMSNorm backward for the loss sum(dout * out).

    dout: x's shape (cast to x's dtype). Returns RMSGrads: dx (x's shape), dgamma and dbeta
    (their parameter's shape, or None when skipped), and every node's gradient.
    """
    dout = check_dout(dout, cache.x.shape, cache.dtype)
    axis = cache.axis

    def reduce(a: np.ndarray) -> np.ndarray:
        # A node reduced over `axis` was broadcast back in later lines, so its gradient sums.
        return np.sum(a, axis=axis, keepdims=True)

    with numeric_guard("The RMSNorm backward pass"):
        # 8  out = gx + beta          (dbeta below, with dgamma)
        dgx = dout

        # 7  gx = gamma * normalized_x
        dnormalized_x = times_gamma(dgx, cache)
        dgamma, dbeta = cache_param_grads(dout, cache)

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


def rms_jacobian(
    x: np.ndarray,
    gamma: np.ndarray | None = None,
    eps: float = 1e-5,
    axis: int | tuple[int, ...] | None = None,
) -> np.ndarray:
    """J[i, j] = d out_i / d x_j for one group x ((D,), or a block flattened to P entries).

    With s = 1/sqrt(mean(x^2) + eps) and xhat = x * s: J[i, j] = gamma_i s (delta_ij -
    xhat_i xhat_j / P). Written from the formula, not from rms_backward, so each checks the other.
    Shape (P, P), x's dtype.
    """
    axis = resolve_axis(axis, check_input_x(x), gamma)
    cache = rms_forward(one_vector(x, axis), flat_gamma(x, gamma, axis), None, eps)
    xhat, s = cache.normalized_x, cache.inv_sqrt_mse
    scale = s if cache.gamma is None else cache.gamma[:, None] * s
    with numeric_guard("The RMSNorm Jacobian"):
        projection = np.eye(cache.n, dtype=cache.dtype) - np.outer(xhat, xhat) / cache.n
        return scale * projection
