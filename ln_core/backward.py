"""The staged backward pass: undo the ten forward lines in reverse, one local derivative each."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from ln_core.forward import Cache
from ln_core.staged import StagedCache
from ln_core.validation import check_dout, check_representable


@dataclass(frozen=True)
class Grads:
    """Gradients of the scalar loss sum(dout * out).

    dx: x's shape; dgamma, dbeta: gamma's and beta's shape ((D,) unless several trailing axes
    are normalized), summed over the axes they are broadcast over; None for a skipped parameter.
    """

    dx: np.ndarray
    dgamma: np.ndarray | None
    dbeta: np.ndarray | None


@dataclass(frozen=True)
class StagedGrads(Grads):
    """Grads plus the gradient of every node (`d<node>`), each with its node's shape.

    The two merge points keep both contributions as well as their sum:
    x_sm feeds normalized_x and sq_xsm, so dx_sm = dx_sm_via_normalized_x + dx_sm_via_sq_xsm;
    x feeds x_sm and sample_mean, so dx = dx_via_x_sm + dx_via_sample_mean.
    """

    dout: np.ndarray = field(repr=False)
    dgx: np.ndarray = field(repr=False)
    dnormalized_x: np.ndarray = field(repr=False)
    dinv_sqrt_sve: np.ndarray = field(repr=False)
    dsqrt_sve: np.ndarray = field(repr=False)
    dsve: np.ndarray = field(repr=False)
    dsample_var: np.ndarray = field(repr=False)
    dsq_xsm: np.ndarray = field(repr=False)
    dx_sm_via_normalized_x: np.ndarray = field(repr=False)
    dx_sm_via_sq_xsm: np.ndarray = field(repr=False)
    dx_sm: np.ndarray = field(repr=False)
    dsample_mean: np.ndarray = field(repr=False)
    dx_via_x_sm: np.ndarray = field(repr=False)
    dx_via_sample_mean: np.ndarray = field(repr=False)

    def of(self, node: str) -> np.ndarray:
        """The gradient of a node (or of "x") by its forward name: of("x_sm") is dx_sm."""
        return getattr(self, f"d{node}")


def param_axes(ndim: int, param_ndim: int = 1) -> tuple[int, ...]:
    """Axes that gamma and beta are broadcast over (all but their trailing `param_ndim`).

    Their gradients sum over these axes.
    """
    return tuple(range(ndim - param_ndim))


def param_grads(
    dout: np.ndarray,
    normalized_x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    param_ndim: int = 1,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """dgamma = sum of dout * normalized_x and dbeta = sum of dout over the broadcast axes.

    None for a parameter the forward pass skipped.
    """
    axes = param_axes(dout.ndim, param_ndim)
    dgamma = None if gamma is None else np.sum(dout * normalized_x, axis=axes)
    dbeta = None if beta is None else np.sum(dout, axis=axes)
    return dgamma, dbeta


def cache_param_grads(
    dout: np.ndarray, cache: StagedCache
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """`param_grads` for a staged forward pass."""
    return param_grads(dout, cache.normalized_x, cache.gamma, cache.beta, cache.param_ndim)


def times_gamma(a: np.ndarray, cache: StagedCache) -> np.ndarray:
    """a * gamma, or a itself when gamma was skipped (gx = normalized_x)."""
    return a if cache.gamma is None else cache.gamma * a


def backward(dout: np.ndarray, cache: Cache) -> StagedGrads:
    """Staged backward pass for the loss sum(dout * out).

    dout: the upstream gradient dL/dout, same shape as x (cast to x's dtype).
    Returns StagedGrads: dx (x's shape), dgamma and dbeta (gamma's shape, or None when
    skipped), and every node's gradient.
    """
    dout = check_dout(dout, cache.x.shape, cache.dtype)
    axis, n = cache.axis, cache.n

    def reduce(a: np.ndarray) -> np.ndarray:
        # A node reduced over `axis` was broadcast back in later lines, so its gradient sums.
        return np.sum(a, axis=axis, keepdims=True)

    # Overflow is let through and looked for below, so the refusal names the gradient node;
    # underflow is left as the caller set it (ln_core.validation.underflowed).
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # 10  out = gx + beta          (dbeta below, with dgamma)
        dgx = dout

        # 9   gx = gamma * normalized_x
        dnormalized_x = times_gamma(dgx, cache)
        dgamma, dbeta = cache_param_grads(dout, cache)

        # 8   normalized_x = x_sm * inv_sqrt_sve
        dx_sm_via_normalized_x = cache.inv_sqrt_sve * dnormalized_x
        dinv_sqrt_sve = reduce(cache.x_sm * dnormalized_x)

        # 7   inv_sqrt_sve = 1 / sqrt_sve
        dsqrt_sve = -1 / cache.sqrt_sve**2 * dinv_sqrt_sve

        # 6   sqrt_sve = sqrt(sve)
        dsve = 1 / (2 * cache.sqrt_sve) * dsqrt_sve

        # 5   sve = sample_var + eps          (eps is a hyperparameter: no gradient)
        dsample_var = dsve

        # 4   sample_var = mean(sq_xsm)
        dsq_xsm = np.ones_like(cache.sq_xsm) / n * dsample_var

        # 3   sq_xsm = x_sm ** 2
        dx_sm_via_sq_xsm = 2 * cache.x_sm * dsq_xsm
        dx_sm = dx_sm_via_normalized_x + dx_sm_via_sq_xsm

        # 2   x_sm = x - sample_mean
        dx_via_x_sm = dx_sm
        dsample_mean = -reduce(dx_sm)

        # 1   sample_mean = mean(x)
        dx_via_sample_mean = np.ones_like(cache.x) / n * dsample_mean
        dx = dx_via_x_sm + dx_via_sample_mean

    grads = StagedGrads(
        dx=dx,
        dgamma=dgamma,
        dbeta=dbeta,
        dout=dout,
        dgx=dgx,
        dnormalized_x=dnormalized_x,
        dinv_sqrt_sve=dinv_sqrt_sve,
        dsqrt_sve=dsqrt_sve,
        dsve=dsve,
        dsample_var=dsample_var,
        dsq_xsm=dsq_xsm,
        dx_sm_via_normalized_x=dx_sm_via_normalized_x,
        dx_sm_via_sq_xsm=dx_sm_via_sq_xsm,
        dx_sm=dx_sm,
        dsample_mean=dsample_mean,
        dx_via_x_sm=dx_via_x_sm,
        dx_via_sample_mean=dx_via_sample_mean,
    )
    # The node gradients (StagedGrads' own fields, in the order computed), then the results.
    order = [f.name for f in fields(StagedGrads)[3:]] + ["dx", "dgamma", "dbeta"]
    check_representable(
        "The staged backward pass",
        ((name, getattr(grads, name)) for name in order),
        "The closed form never forms the node gradients "
        "(ln_core.layernorm_closed_form); or scale dout down.",
    )
    return grads
