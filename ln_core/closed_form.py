"""The compact closed form of LayerNorm's backward pass, split into its three paths.

With xhat = normalized_x, s = inv_sqrt_sve = 1/sqrt(var + eps), g = dout * gamma and means taken
over the normalized axis:

    dx = s * (g - mean(g) - xhat * mean(g * xhat))
             direct  through the mean  through the variance

The three terms are kept apart because the Jacobian's parts and the "break the backward" bugs
are both built from them.

`layernorm_closed_form` is the path to call as a library: it takes x itself, not a staged
cache, and rescales each group before squaring (`normalize`), so it answers for any finite x
whose normalization is defined, from float64's largest numbers down to subnormal spreads,
where the staged pass (which shows its nodes as they are) has to refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TypeVar

import numpy as np

from ln_core.backward import Grads, cache_param_grads, param_grads, times_gamma
from ln_core.forward import Cache, check_variance
from ln_core.validation import (
    check_dout,
    check_eps,
    check_input_x,
    check_params,
    numeric_guard,
    param_shape,
    resolve_axis,
)

Result = TypeVar("Result")


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


@dataclass(frozen=True)
class Normalized:
    """Each group's xhat and s = 1/sqrt(var + eps), found without squaring x itself.

    normalized_x: x's shape. s is kept as s_mantissa * 2**s_exponent (both of the reduced
    shape: S with S[a] = 1 for a in axis), because for a spread below about 1/max (1e-308 in
    float64) s itself is out of range while xhat, out and usually dx are not.
    """

    normalized_x: np.ndarray
    s_mantissa: np.ndarray
    s_exponent: np.ndarray

    @property
    def inv_sqrt_sve(self) -> np.ndarray:
        """s itself (raises inside numeric_guard where it exceeds the dtype's range)."""
        return np.ldexp(self.s_mantissa, self.s_exponent)

    def times_s(self, a: np.ndarray) -> np.ndarray:
        """a * s, rounded once, and in range whenever the product is."""
        return np.ldexp(a * self.s_mantissa, self.s_exponent)


def _exponent(a: np.ndarray) -> np.ndarray:
    """e with a = f * 2**e, 0.5 <= f < 1 (0 for a = 0): dividing by 2**e is exact."""
    return np.frexp(a)[1]


def normalize(x: np.ndarray, eps: float, axis: tuple[int, ...]) -> Normalized:
    """xhat and s of every group of a finite float x, at any scale the dtype holds.

    LayerNorm does not see x's scale, so each group is first divided by a power of two that
    brings its largest |x| to [0.5, 1) (exact), centred, and the centred values divided again
    so their largest is in [0.5, 1): squares then neither overflow nor underflow, and
    var = a * 4**E with a = mean(xn**2) in [1/(4P), 1). eps joins in the same units,
    eps / 4**E; where that overflows, eps outweighs var by more than 2**1000 and s = 1/sqrt(eps).
    Raises ValueError for a group whose entries are all equal when eps = 0 (0 / 0).
    """

    def mean(a: np.ndarray) -> np.ndarray:
        return np.mean(a, axis=axis, keepdims=True)

    def largest(a: np.ndarray) -> np.ndarray:
        return np.max(np.abs(a), axis=axis, keepdims=True)

    # Scaling down may flush entries below 2**-1074 of the group's largest: they cannot move
    # the mean or the variance, which are rounded at the largest entry's scale anyway.
    with np.errstate(under="ignore"):
        e_x = _exponent(largest(x))
        scaled = np.ldexp(x, -e_x)
        centred = scaled - mean(scaled)
        e_c = _exponent(largest(centred))
        xn = np.ldexp(centred, -e_c)
    a = mean(xn * xn)
    check_variance(a + eps, axis, eps)
    e = e_x + e_c  # x - mean(x) = xn * 2**e
    with np.errstate(over="ignore", under="ignore"):
        eps_scaled = np.ldexp(np.asarray(eps, x.dtype), -2 * e)
    # eps alone where it outweighs var beyond rounding, or where var is exactly 0.
    eps_only = ~np.isfinite(eps_scaled) | (a == 0)
    with np.errstate(divide="ignore"):
        r = np.where(eps_only, 1 / np.sqrt(x.dtype.type(eps)), 1 / np.sqrt(a + eps_scaled))
    # r is far below 1 where eps outweighs var: its exponent joins s's, so that a product
    # with its mantissa (in [0.5, 1)) never underflows before the one final rounding.
    s_mantissa, r_exponent = np.frexp(r)
    s_exponent = np.where(eps_only, 0, -e) + r_exponent
    with numeric_guard("Normalizing"):
        normalized_x = np.ldexp(xn * s_mantissa, e + s_exponent)
    return Normalized(normalized_x=normalized_x, s_mantissa=s_mantissa, s_exponent=s_exponent)


@dataclass(frozen=True)
class ClosedForm(Grads):
    """LayerNorm's output and the gradients of sum(dout * out), from the closed form.

    out, dx: x's shape; dgamma, dbeta: gamma's shape, or None when skipped; all in x's dtype.
    """

    out: np.ndarray


def layernorm_closed_form(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    dout: np.ndarray,
    eps: float = 1e-5,
    axis: int | tuple[int, ...] | None = None,
) -> ClosedForm:
    """LayerNorm and its gradients for any finite x where they are defined, at any scale.

    x, dout: (D,), (N, D) or (B, L, D); gamma, beta: of `validation.param_shape`, or None.
    axis=None follows gamma's shape (PyTorch's normalized_shape), else the last axis.
    float16 is computed in float32 and returned in float16, as PyTorch does. Raises
    ValueError where the result is undefined (all entries equal with eps = 0) or a result
    entry is out of the dtype's range.
    """
    half = np.asarray(x).dtype == np.float16
    x = check_input_x(x)
    eps = check_eps(eps)
    axis = resolve_axis(axis, x, gamma, beta)
    gamma, beta = check_params(x, gamma, beta, axis)
    dout = check_dout(dout, x.shape, x.dtype)
    result = closed_form_checked(x, gamma, beta, dout, eps, axis)
    return as_half(result) if half else result


def closed_form_checked(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    dout: np.ndarray,
    eps: float,
    axis: tuple[int, ...],
) -> ClosedForm:
    """`layernorm_closed_form` on inputs already checked (as fast.py's rows out of its range).

    x, dout: finite, of one float dtype; gamma, beta: `validation.param_shape` or None; axis:
    from `validation.check_axis`.
    """
    n = normalize(x, eps, axis)
    with numeric_guard("The closed-form LayerNorm"):
        xhat = n.normalized_x
        gx = xhat if gamma is None else gamma * xhat
        out = gx if beta is None else gx + beta
        g = dout if gamma is None else dout * gamma
        inner = g - np.mean(g, axis=axis, keepdims=True)
        inner -= xhat * np.mean(g * xhat, axis=axis, keepdims=True)
        dgamma, dbeta = param_grads(dout, xhat, gamma, beta, len(param_shape(x.shape, axis)))
        return ClosedForm(out=out, dx=n.times_s(inner), dgamma=dgamma, dbeta=dbeta)


def as_half(result: Result) -> Result:
    """The result's arrays in float16, PyTorch's output dtype for float16 input.

    Raises ValueError (never inf) where an entry is beyond float16's range (65504).
    """
    with numeric_guard("The float16 result"):
        return replace(
            result,
            **{
                f.name: value.astype(np.float16)
                for f in fields(result)
                if (value := getattr(result, f.name)) is not None
            },
        )
