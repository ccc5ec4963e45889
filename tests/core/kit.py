"""Helpers shared by the ln_core tests: an independent LayerNorm, tolerances, random cases.

Nothing here uses ln_core's own backward code, so it can serve as a reference:
- `direct_layernorm` is the textbook formula (mean, biased variance), in float64;
- `complex_step_dx` differentiates that formula by the complex-step method, which has no
  subtractive cancellation, so its derivative is accurate to about machine precision.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

DTYPES = (np.dtype(np.float64), np.dtype(np.float32))

# Relative to the natural scale of the compared tensor (see `assert_close`).
ANALYTIC_RTOL = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 1e-4}
NUMERIC_RTOL = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1e-2}

# LN_CORE_EXAMPLES=2000 runs a long soak of every property test; 50 keeps CI fast.
FAST = settings(
    max_examples=int(os.environ.get("LN_CORE_EXAMPLES", "50")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def assert_close(actual, expected, rtol: float, scale: float | None = None, what: str = "") -> None:
    """max |actual - expected| <= rtol * scale, scale defaulting to max|expected|.

    A scale-relative bound, so entries whose true value is near 0 (by cancellation) are held
    to the precision of the tensor as a whole rather than to their own tiny size.
    """
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite values {actual}"
    ref = float(np.max(np.abs(expected))) if scale is None else float(scale)
    ref = max(ref, float(np.max(np.abs(expected))), 1e-300)
    err = float(np.max(np.abs(actual - expected)))
    assert err <= rtol * ref, f"{what}: max abs error {err:.3e} > {rtol:g} * scale {ref:.3e}"


def direct_layernorm(x, gamma, beta, eps: float, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """(normalized_x, out) by the textbook formula, in float64 (complex allowed)."""
    dtype = np.complex128 if np.iscomplexobj(x) else np.float64
    x = np.asarray(x, dtype=dtype)
    mean = x.mean(axis=axis, keepdims=True)
    # mean of squares (not np.var, which takes |.|^2 and would break the complex step)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    xhat = (x - mean) / np.sqrt(var + eps)
    return xhat, np.asarray(gamma, np.float64) * xhat + np.asarray(beta, np.float64)


def complex_step_dx(x, gamma, beta, dout, eps: float, axis: int = -1, h: float = 1e-30):
    """d sum(dout * LN(x)) / dx by the complex step: Im(L(x + i h e_j)) / h for every j."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    stack = np.broadcast_to(x, (n, *x.shape)).astype(np.complex128)
    stack.reshape(n, n)[np.arange(n), np.arange(n)] += 1j * h
    ax = axis if axis < 0 else axis - x.ndim
    _, out = direct_layernorm(stack, gamma, beta, eps, ax)
    loss = np.sum(np.asarray(dout, np.float64) * out, axis=tuple(range(1, out.ndim)))
    return (loss.imag / h).reshape(x.shape)


def direct_param_grads(x, dout, eps: float, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """dgamma, dbeta from the direct formula: sums over every axis but the last."""
    xhat, _ = direct_layernorm(x, 1.0, 0.0, eps, axis)
    dout = np.asarray(dout, np.float64)
    axes = tuple(range(np.ndim(x) - 1))
    return np.sum(dout * xhat, axis=axes), np.sum(dout, axis=axes)


def dx_scale(cache, dout) -> float:
    """The natural size of dx: max over vectors of s * sum|dout * gamma|, s = 1/sqrt(var+eps).

    Every term of dx (direct, through the mean, through the variance) is bounded by it.
    """
    w = np.abs(np.asarray(dout, np.float64) * cache.gamma.astype(np.float64))
    s = cache.inv_sqrt_sve.astype(np.float64)
    return float(np.max(s * np.sum(w, axis=cache.axis, keepdims=True)))


def param_scale(cache, dout) -> float:
    """The natural size of dgamma and dbeta: max over features of sum|dout| * max(1, |xhat|)."""
    axes = tuple(range(cache.x.ndim - 1))
    dout = np.abs(np.asarray(dout, np.float64))
    big = max(1.0, float(np.max(np.abs(cache.normalized_x))))
    return float(np.max(np.sum(dout, axis=axes))) * big


@dataclass(frozen=True)
class Case:
    """One random LayerNorm problem: arrays already in `dtype`."""

    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dout: np.ndarray
    eps: float
    axis: int

    @property
    def dtype(self) -> np.dtype:
        return self.x.dtype

    @property
    def args(self):
        return self.x, self.gamma, self.beta


def make_case(
    seed: int,
    shape: tuple[int, ...],
    dtype=np.float64,
    eps: float = 1e-5,
    axis: int = -1,
    scale: float = 1.0,
    offset: float = 0.0,
    uniform_gamma: bool = False,
) -> Case:
    """x = scale * (offset + N(0, 1)); gamma: either sign, size 0.5..2; beta, dout: N(0, 1)."""
    rng = np.random.default_rng(seed)
    d = shape[-1]
    x = scale * (offset + rng.normal(size=shape))
    if uniform_gamma:
        gamma = np.full(d, rng.uniform(0.5, 2.0))
    else:
        gamma = rng.uniform(0.5, 2.0, size=d) * rng.choice([-1.0, 1.0], size=d)
    beta = rng.normal(size=d)
    dout = rng.normal(size=shape)
    dt = np.dtype(dtype)
    return Case(x.astype(dt), gamma.astype(dt), beta.astype(dt), dout.astype(dt), float(eps), axis)


def group_std(x: np.ndarray, axis: int) -> np.ndarray:
    return np.asarray(x, np.float64).std(axis=axis)


@st.composite
def cases(
    draw,
    min_d: int = 3,
    max_d: int = 6,
    ndims=(1, 2, 3),
    dtypes=DTYPES,
    eps_values=(0.0, 1e-5, 1e-3, 0.1, 1.0),
    axes=(-1,),
    min_group: int = 3,
    uniform_gamma: bool = False,
    max_offset: float = 3.0,
    log_scale: tuple[float, float] = (-2.0, 2.0),
) -> Case:
    """Random well-conditioned cases: shapes (D,), (N, D), (B, L, D); both dtypes; many eps.

    The normalized axis has at least `min_group` entries and every group's spread is at least
    0.2 * scale, so the gradient is never pure round-off (see the module docstring of the tests).
    """
    ndim = draw(st.sampled_from(ndims))
    axis = draw(st.sampled_from([a for a in axes if -ndim <= a < ndim]))
    d = draw(st.integers(min_d, max_d))
    lead = [draw(st.integers(1, 3)) for _ in range(ndim - 1)]
    shape = [*lead, d]
    if shape[axis] < min_group:
        shape[axis] = draw(st.integers(min_group, min_group + 2))
    scale = 10 ** draw(st.floats(*log_scale))
    case = make_case(
        seed=draw(st.integers(0, 2**32 - 1)),
        shape=tuple(shape),
        dtype=draw(st.sampled_from(dtypes)),
        eps=draw(st.sampled_from(eps_values)),
        axis=axis,
        scale=scale,
        offset=draw(st.floats(-max_offset, max_offset)),
        uniform_gamma=uniform_gamma,
    )
    assume(np.all(group_std(case.x, axis) >= 0.2 * scale))
    return case


@dataclass(frozen=True)
class TeachingCase:
    """Inputs shaped like the app's defaults.

    x, dout: `shape`; gamma (non-uniform, around 1), beta (non-zero): (D,).
    """

    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dout: np.ndarray

    @property
    def args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.x, self.gamma, self.beta, self.dout


def teaching_case(seed: int = 0, shape: tuple[int, ...] = (4, 8)) -> TeachingCase:
    """Random normal x and dout, gamma ~ N(1, 0.3^2), beta ~ N(0, 1), all float64."""
    rng = np.random.default_rng(seed)
    d = shape[-1]
    return TeachingCase(
        x=rng.normal(size=shape),
        gamma=rng.normal(1.0, 0.3, size=d),
        beta=rng.normal(size=d),
        dout=rng.normal(size=shape),
    )
