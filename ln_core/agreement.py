"""Two computations of the same gradients in another order, judged against their rounding.

The staged backward and the closed form (or BatchNorm's graph and LayerNorm on the transpose)
do the same arithmetic in another order: exact arithmetic gives the same numbers, so they may
differ only by rounding. How much rounding, per entry, in the working dtype:

- dx: each term of s * (g - mean(g) - xhat * mean(g * xhat)) is at most s * sum|g| * (1 + X)
  per group (X: the group's largest |xhat|), and a chain of about 2 + log2 D roundings (the
  means sum D terms) acts on it;
- dgamma, dbeta: sums over the rows of dout * xhat and dout, log2(rows) + 2 roundings each;
  dgamma's xhat carries the offset's error too (below), so its bound counts |dout| * s * M.

A large common offset counts even when both read the same forward pass: the computed x - mean
does not sum to exactly 0 (its sum is D times the mean's rounding, up to a few ulp of the
group's largest |x|, M), and the staged backward leans on that sum where the closed form does
not. Every xhat is off from the exact one by s times that rounding of the mean, which
dgamma = sum(dout * xhat) sums as it is. The mean's rounding is measured (`mean_rounding`:
against the mean in a wider dtype) and carried through (SHIFTED), which also makes the bounds
bounds on the distance to the exact gradients: a pass certifies no digits xhat does not have,
and a vector whose mean does not round (a constant one) gets no offset term. When each ran its
own forward pass (BatchNorm two ways), their means may round differently: every bound is then
widened by the worst case, 1 + s * M, and the outputs are compared too.

These bounds are relative to the values: where a rounding of the backward underflows (a float32
dout near 1e-38), none of them holds, and every verdict on it is "cannot resolve"
(`backward_underflows`).
"""

from __future__ import annotations

import numpy as np

from ln_core.backward import Grads, backward, param_axes, times_gamma
from ln_core.closed_form import closed_form_backward
from ln_core.forward import Cache
from ln_core.validation import underflowed
from ln_core.verdict import Judgement, judge

# Safety factor on the rounding chains above (bench.verdict_sweep: none of its correct pairs
# comes within a tenth of the bound).
ROUNDINGS = 8.0
# The mean's measured rounding shifts every xhat of a group by the same e (`mean_shift`): dx
# moves by at most about 3 s e sum|g| (1 + X) / D through the mean(g * xhat) term and the
# staged backward's sum of x - mean, dgamma by e sum|dout|; this many times that, without the
# 1 / D, is counted.
SHIFTED = 4.0


def group_abs(a: np.ndarray, cache: Cache, reduce=np.sum) -> np.ndarray:
    """reduce(|a|) over each group, kept as size 1 on the normalized axes, float64."""
    return reduce(np.abs(np.asarray(a, dtype=np.float64)), axis=cache.axis, keepdims=True)


def mean_rounding(cache: Cache) -> np.ndarray:
    """Per group (kept as size 1, float64), how far the computed sample_mean sits from x's
    exact mean: measured against the mean in a wider dtype (float64 for float32, np.longdouble
    for float64), plus a careful bound on that mean's own rounding (where np.longdouble is no
    wider than float64, that is the worst case of a few ulp of the group's largest |x|).
    A constant vector's mean is exact, and so is any mean that happens not to round: no
    offset's error enters a bound there."""
    wider = np.float64 if cache.dtype == np.float32 else np.longdouble
    exact = np.mean(cache.x.astype(wider), axis=cache.axis, keepdims=True)
    measured = np.abs(cache.sample_mean.astype(wider) - exact).astype(np.float64)
    own = 2.0 * (2.0 + np.log2(cache.n)) * float(np.finfo(wider).eps)
    return measured + own * group_abs(cache.x, cache, np.max)


def offset_factor(cache: Cache) -> np.ndarray:
    """1 + s * M per group: how much a rounding of the mean, up to a few ulp of the group's
    largest |x| (M), is worth in normalized units, in units of the rounding chain. The worst
    case, for a pass that computes its own mean (a perturbed copy, another forward pass)."""
    return 1.0 + cache.inv_sqrt_sve.astype(np.float64) * group_abs(cache.x, cache, np.max)


def mean_shift(cache: Cache) -> np.ndarray:
    """s * `mean_rounding` per group (kept as size 1, float64): how far the mean's rounding
    shifts every normalized_x of the group, all by the same amount."""
    return cache.inv_sqrt_sve.astype(np.float64) * mean_rounding(cache)


def backward_underflows(cache: Cache, dout: np.ndarray) -> bool:
    """Whether a rounding of the staged backward or the closed form underflows on these inputs
    (ln_core.validation.underflowed; dout: x's shape, already in x's dtype). They are run again
    only to watch: a caller holds their results already."""
    _, underflow = underflowed(lambda: (backward(dout, cache), closed_form_backward(dout, cache)))
    return underflow


def rounding_bounds(cache: Cache, dout: np.ndarray) -> dict[str, np.ndarray]:
    """Per entry, how far two orderings of the backward's arithmetic may sit apart: "dx" (x's
    shape), "dgamma" and "dbeta" (the parameters' shape; all of them even when skipped)."""
    machine_eps = float(np.finfo(cache.dtype).eps)
    s = cache.inv_sqrt_sve.astype(np.float64)
    weight = group_abs(times_gamma(dout, cache), cache)
    spread = group_abs(cache.normalized_x, cache, np.max)
    chain = 2.0 + np.log2(cache.n)
    shift = mean_shift(cache)
    dx = s * weight * (1.0 + spread) * (ROUNDINGS * machine_eps * chain + SHIFTED * shift)
    axes = param_axes(cache.x.ndim, cache.param_ndim)
    rows = float(np.prod([cache.x.shape[a] for a in axes]))
    upstream = np.abs(np.asarray(dout, dtype=np.float64))
    per_row = ROUNDINGS * machine_eps * (2.0 + np.log2(rows + 1))
    return {
        "dx": np.broadcast_to(dx, cache.x.shape),
        "dgamma": per_row * np.sum(upstream * (1.0 + np.abs(cache.normalized_x)), axis=axes)
        + SHIFTED * np.sum(upstream * shift, axis=axes),
        "dbeta": per_row * np.sum(upstream, axis=axes),
    }


def agreement(
    cache: Cache, dout: np.ndarray, first: Grads, second: Grads, own_forward: bool = False
) -> dict[str, Judgement]:
    """first against second, tensor by tensor (tensors that are None are left out), each
    judged by ln_core.verdict's rule against `rounding_bounds`; own_forward: each ran its own
    forward pass (see the module docstring)."""
    bounds = rounding_bounds(cache, dout)
    underflow = cache.dtype if backward_underflows(cache, dout) else None
    if own_forward:
        widen = float(np.max(offset_factor(cache)))
        bounds = {name: bound * (1.0 if name == "dx" else widen) for name, bound in bounds.items()}
    return {
        name: judge(getattr(first, name), getattr(second, name), bounds[name], underflow=underflow)
        for name in ("dx", "dgamma", "dbeta")
        if getattr(first, name) is not None
    }


def forward_bounds(cache: Cache) -> dict[str, np.ndarray]:
    """Per entry (x's shape), how far the computed normalized_x, gx and out may sit from their
    exact values: a chain of 2 + log2 D roundings of each, the mean's rounding (1 + s * M in
    normalized units, times |gamma| after gamma) and, for out, one rounding of |beta|; and per
    group (kept as size 1) the same chain, widened by 1 + s * M, relative to sqrt_sve and
    inv_sqrt_sve (x - mean carries the mean's rounding into the variance)."""
    machine_eps = float(np.finfo(cache.dtype).eps)
    gamma = np.abs(times_gamma(np.ones_like(cache.x), cache).astype(np.float64))
    chain = 2.0 + np.log2(cache.n)
    offset = offset_factor(cache)
    gx = np.abs(cache.gx.astype(np.float64))
    gx_bound = ROUNDINGS * machine_eps * (chain * gx + gamma * offset)
    beta = np.abs(cache.out.astype(np.float64) - cache.gx.astype(np.float64))
    relative = ROUNDINGS * machine_eps * chain * offset
    return {
        "normalized_x": ROUNDINGS
        * machine_eps
        * (chain * np.abs(cache.normalized_x.astype(np.float64)) + offset),
        "gx": gx_bound,
        "out": gx_bound + ROUNDINGS * machine_eps * beta,
        "sqrt_sve": relative * cache.sqrt_sve.astype(np.float64),
        "inv_sqrt_sve": relative * cache.inv_sqrt_sve.astype(np.float64),
    }


def output_agreement(cache: Cache, first: np.ndarray, second: np.ndarray) -> Judgement:
    """Two forward passes' outputs (x's shape) against their rounding: `forward_bounds`' bound
    on out (each pass may be off by it in the same way, so it bounds their gap too)."""
    return judge(first, second, forward_bounds(cache)["out"])
