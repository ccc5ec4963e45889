"""The residual block's gradient check: its backward against central differences of the whole
loss, judged by ln_core.verdict's rule.

The central difference moves one entry of x, W or c by the step h and re-runs the whole block,
so its round-off is the whole loss's, divided by the step. With s = 1/sqrt(var + eps) of z's
LayerNorm, M its largest |z|, X its largest |normalized_z|, G = 1 + the sublayer's largest row
sum of |W| (how much a change of x can grow on its way to z) and, per group, the LayerNorm
gradient's natural size n = s * sum|dout * gamma| * (1 + X):

- round-off of the loss: each output is off by up to machine_eps * (2 + log2 D) times
  |gamma * normalized_z| + |beta| + |gamma| (1 + X) s (M + G max|x| + 1) (x - mean cancels M's
  digits, and z = x + tanh(x W + c) carries the rounding of x, of the product and of tanh);
  weighted by |dout| and summed, then divided by the step;
- truncation: (h k)^2 times the gradient's natural size, where k is how fast the loss bends in
  the moved entry's units: G * max(s, 1) for x (LayerNorm bends on the scale of sigma, tanh on
  the scale of 1), max|x| * max(s, 1) for W (its change is multiplied by x), max(s, 1) for c;
- the analytic gradient's own rounding (`analytic_bounds`): LayerNorm's backward on the
  computed z, plus how far z's own rounding (an ulp of |z| per entry, `z_rounding`) moves it,
  carried back through the sublayer as the backward carries it (a saturated tanh carries
  nothing).
Each term has the safety factor of ln_core.gradcheck or ln_core.agreement.

As in ln_core.gradcheck, the differences run in float64 on the same inputs whatever their dtype
(PyTorch's gradcheck advice): in float32 the loss keeps too few digits for differences to tell
a right gradient from one off by 10 %, so only the analytic gradient's own rounding is float32's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.agreement import ROUNDINGS, SHIFTED, mean_rounding, rounding_bounds
from ln_core.backward import backward, times_gamma
from ln_core.forward import Cache
from ln_core.gradcheck import FAITHFUL, ROUND_OFF, TRUNCATION, default_h
from ln_core.residual import (
    ResidualCache,
    ResidualGrads,
    Sublayer,
    residual_backward,
    residual_forward,
    residual_numerical_grads,
)
from ln_core.validation import underflowed
from ln_core.verdict import Judgement, judge


@dataclass(frozen=True)
class _Sizes:
    """What both bounds read, per group of z's LayerNorm (groups, 1) unless said: |dout| and
    |gamma| (groups, D), s, 1 + X (spread), M (largest_z), max|x|, the gradient's natural size
    (what its truncation scales with: `_flatness`), and G (gain), the working dtype's machine
    eps and its rounding chain."""

    machine_eps: float
    chain: float
    gain: float
    dout: np.ndarray
    gamma: np.ndarray
    s: np.ndarray
    spread: np.ndarray
    largest_z: np.ndarray
    largest_x: np.ndarray
    natural: np.ndarray


def _sizes(cache: ResidualCache, dout: np.ndarray) -> _Sizes:
    ln = cache.ln

    def by_group(a: np.ndarray) -> np.ndarray:
        return np.abs(np.asarray(a, dtype=np.float64)).reshape(-1, ln.n)

    upstream = by_group(dout)
    gamma = by_group(times_gamma(np.ones_like(ln.x), ln))
    s = ln.inv_sqrt_sve.astype(np.float64).reshape(-1, 1)
    spread = 1.0 + np.max(by_group(ln.normalized_x), axis=1, keepdims=True)
    return _Sizes(
        machine_eps=float(np.finfo(ln.dtype).eps),
        chain=2.0 + np.log2(ln.n),
        gain=1.0 + float(np.max(np.sum(np.abs(cache.sublayer.W.astype(np.float64)), axis=1))),
        dout=upstream,
        gamma=gamma,
        s=s,
        spread=spread,
        largest_z=np.max(by_group(ln.x), axis=1, keepdims=True),
        largest_x=np.max(by_group(cache.x), axis=1, keepdims=True),
        natural=s * np.sum(upstream * gamma, axis=1, keepdims=True) * spread * _flatness(ln),
    )


def _flatness(ln: Cache) -> np.ndarray | float:
    """How much smaller than s * sum|dout * gamma| LayerNorm's derivatives of every order are,
    per group: at D = 2 its output depends on z only through z1 - z2 = d, as +-d / sqrt(d^2 +
    4 eps), whose k-th derivative is the first's times about s^(k - 1), and the first is eps s^2
    of s (normalized_z^2 = 1 - eps s^2, and d(normalized_z) = s (1 - normalized_z^2)); 1 at
    D >= 3, where nothing makes the terms cancel."""
    if ln.n != 2:
        return 1.0
    s = ln.inv_sqrt_sve.astype(np.float64).reshape(-1, 1)
    return np.minimum(1.0, float(ln.eps) * s**2)


def residual_bounds(cache: ResidualCache, dout: np.ndarray, h: float) -> dict[str, float]:
    """How far the central differences of dx, dW and dc at step h may sit from the exact
    gradients (one absolute bound per tensor; see the module docstring). Moving an entry of x
    re-runs only its own vector's outputs differently, so its round-off is that vector's;
    moving W or c changes every vector's. Either way the loss's final sum rounds differently,
    by a few ulp of sum |dout * y|."""
    ln, z = cache.ln, _sizes(cache, dout)
    gx = np.abs(ln.gx.astype(np.float64)).reshape(-1, ln.n)
    beta = np.abs(ln.out.astype(np.float64)).reshape(-1, ln.n) - gx
    offset = z.largest_z + z.gain * z.largest_x + 1
    per_output = z.chain * gx + np.abs(beta) + z.gamma * z.spread * z.s * offset
    group = np.sum(z.dout * per_output, axis=1, keepdims=True)
    final_sum = np.log2(z.dout.size + 1) * float(np.sum(z.dout * (gx + np.abs(beta))))
    bend = np.maximum(z.s, 1.0)
    dx = (
        ROUND_OFF * z.machine_eps * (group + final_sum) / h
        + TRUNCATION * (h * z.gain * bend) ** 2 * z.gain * z.natural
    )
    everywhere = ROUND_OFF * z.machine_eps * (float(np.sum(group)) + final_sum) / h
    dw = TRUNCATION * (h * z.largest_x * bend) ** 2 * z.largest_x * z.natural
    dc = TRUNCATION * (h * bend) ** 2 * z.natural
    return {
        "dx": float(np.max(dx)),
        "dW": everywhere + float(np.sum(dw)),
        "dc": everywhere + float(np.sum(dc)),
    }


def z_rounding(cache: ResidualCache) -> np.ndarray:
    """Per group (groups, 1), float64: how far the computed z may sit from x + tanh(x W + c) in
    exact arithmetic, in units of z's standard deviation (times s). z = x + f rounds each entry
    by an ulp of |z|; f by one of 1, plus its argument's rounding (x W sums D terms) damped by
    1 - f^2; and z's computed mean by what `ln_core.agreement.mean_rounding` measures. Only
    the offset that is there counts: a z far from 0 rounds by its own ulp, not by a chain of
    worst cases."""
    ln = cache.ln
    machine_eps = float(np.finfo(ln.dtype).eps)
    chain = 2.0 + np.log2(ln.n)
    f = cache.f.astype(np.float64)
    argument = np.abs(cache.x.astype(np.float64)) @ np.abs(cache.sublayer.W.astype(np.float64))
    argument = argument + np.abs(cache.sublayer.c.astype(np.float64))
    entry = machine_eps * (np.abs(ln.x.astype(np.float64)) + 1.0 + chain * (1.0 - f**2) * argument)
    largest = np.max(entry.reshape(-1, ln.n), axis=1, keepdims=True)
    mean = mean_rounding(ln).reshape(-1, 1)
    return ln.inv_sqrt_sve.astype(np.float64).reshape(-1, 1) * (largest + mean)


def analytic_bounds(cache: ResidualCache, dout: np.ndarray) -> dict[str, float]:
    """How far the computed dx, dW and dc may sit from their exact values (one absolute bound
    per tensor). Per entry of dz (LayerNorm's dx), with E = `z_rounding` of its group,
    g = dout * gamma, m = mean(g xhat) and X the group's largest |xhat|:

    - LayerNorm's backward on the computed z: its own rounding (ln_core.agreement's bound,
      which counts z's mean's measured rounding);
    - the computed z is off the exact one by E in normalized units: s moves by at most E
      relative, each xhat by (2 + X) E, so dz = s (g - mean(g) - xhat m) moves by at most
      E (|dz| + (2 + X) s (|m| + |xhat| mean|g|)), first order, with the safety factor SHIFTED
      of ln_core.agreement.

    Then through the sublayer as the backward goes, dpre = dz (1 - f^2) (f's rounding moves
    1 - f^2 by a few ulp), dx = dz + dpre W^T, dW = x^T dpre, dc = sum of dpre, each product
    adding its chain of roundings: a saturated tanh (1 - f^2 = 0) carries nothing."""
    ln = cache.ln
    machine_eps = float(np.finfo(ln.dtype).eps)
    chain = 2.0 + np.log2(ln.n)
    dz = np.abs(backward(dout, ln).dx.astype(np.float64))
    s = ln.inv_sqrt_sve.astype(np.float64)
    xhat = np.abs(ln.normalized_x.astype(np.float64))
    g = np.abs(times_gamma(np.asarray(dout, np.float64), ln))
    moment = np.abs(
        np.mean(times_gamma(np.asarray(dout, np.float64), ln) * xhat, axis=-1, keepdims=True)
    )
    spread = np.max(xhat, axis=-1, keepdims=True)
    shift = z_rounding(cache).reshape(s.shape)
    moved = (
        SHIFTED
        * shift
        * (dz + (2.0 + spread) * s * (moment + xhat * np.mean(g, axis=-1, keepdims=True)))
    )
    own = rounding_bounds(ln, dout)["dx"] + ROUNDINGS * machine_eps * chain * dz + moved
    damp = 1.0 - cache.f.astype(np.float64) ** 2
    dpre = own * damp + ROUNDINGS * machine_eps * chain * dz
    weights = np.abs(cache.sublayer.W.astype(np.float64)).T
    rows = cache.x.reshape(-1, ln.n)
    flat_pre = dpre.reshape(-1, ln.n)
    size_pre = (dz * damp).reshape(-1, ln.n)
    row_chain = ROUNDINGS * machine_eps * (2.0 + np.log2(rows.shape[0]))
    dx = own + dpre @ weights + ROUNDINGS * machine_eps * chain * ((dz * damp) @ weights)
    x_abs = np.abs(rows.astype(np.float64)).T
    dw = x_abs @ flat_pre + row_chain * (x_abs @ size_pre)
    dc = np.sum(flat_pre, axis=0) + row_chain * np.sum(size_pre, axis=0)
    return {"dx": float(np.max(dx)), "dW": float(np.max(dw)), "dc": float(np.max(dc))}


def path_rounding(
    cache: ResidualCache, grads: ResidualGrads, dout: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """How far the computed dx_skip and dx_sublayer may sit from their exact values, per entry
    (x's shape). dx_skip is LayerNorm's dx, off by its rounding bound (ln_core.agreement);
    dx_sublayer = (dx_skip * (1 - f^2)) W^T carries that bound through |W| (1 - f^2 is at most
    1), plus its own chain of roundings."""
    dz = np.abs(grads.dx_skip.astype(np.float64))
    skip = np.broadcast_to(rounding_bounds(cache.ln, dout)["dx"], dz.shape)
    machine_eps = float(np.finfo(cache.ln.dtype).eps)
    chain = 2.0 + np.log2(cache.ln.n)
    weights = np.abs(cache.sublayer.W.astype(np.float64)).T
    return skip, (skip + ROUNDINGS * machine_eps * chain * dz) @ weights


def reference_cache(cache: ResidualCache) -> ResidualCache:
    """The block's forward pass in float64 on the same inputs (eps as the working dtype rounds
    it), for the reference differences; a float64 pass is its own."""
    if cache.ln.dtype == np.float64:
        return cache
    wide = [None if a is None else a.astype(np.float64) for a in (cache.ln.gamma, cache.ln.beta)]
    sublayer = Sublayer(cache.sublayer.W.astype(np.float64), cache.sublayer.c.astype(np.float64))
    eps = float(cache.ln.dtype.type(cache.ln.eps))
    return residual_forward(cache.x.astype(np.float64), sublayer, *wide, eps)


def _unfaithful(cache: ResidualCache, wide: ResidualCache, dout: np.ndarray) -> dict[str, float]:
    """What to add to the bounds where the working dtype's z is no small perturbation of the
    exact one (wide: the float64 pass of the same inputs; as ln_core.gradcheck's FAITHFUL):
    per group whose normalized z is off by more than FAITHFUL, no rounding bound holds, so the
    bound is how far values of the analytic gradient's size may lie from the reference's
    (twice both sizes, carried through the sublayer as `analytic_bounds` carries its own): such
    a group is "cannot resolve", never failed. 0 where every group is faithful (wide is cache
    in float64)."""
    if wide is cache:
        return dict.fromkeys(("dx", "dW", "dc"), 0.0)
    z, exact = _sizes(cache, dout), _sizes(wide, dout)
    rows = (-1, cache.ln.n)
    off = (
        np.max(
            np.abs(
                cache.ln.normalized_x.astype(np.float64).reshape(rows)
                - wide.ln.normalized_x.reshape(rows)
            ),
            axis=1,
            keepdims=True,
        )
        > FAITHFUL
    )
    size = np.maximum(z.s, exact.s) * np.sum(z.dout * z.gamma, axis=1, keepdims=True)
    unknown = np.where(off, 4.0 * size * np.maximum(z.spread, exact.spread), 0.0)
    return {
        "dx": z.gain * float(np.max(unknown)),
        "dW": float(np.sum(z.largest_x * unknown)),
        "dc": float(np.sum(unknown)),
    }


@dataclass(frozen=True)
class ResidualCheck:
    """The block's backward against float64 central differences (`residual_check`).

    numerical: the differences, keys dx, dW, dc (float64); bounds: how far a correct analytic
    value may sit from them, one absolute bound per tensor; underflow: the working dtype where
    a rounding of its forward or backward pass underflowed (no bound holds), else None;
    judgements: dx, dW and dc of the backward that was checked.
    """

    numerical: dict[str, np.ndarray]
    bounds: dict[str, float]
    underflow: np.dtype | None
    judgements: dict[str, Judgement]

    def judgement(self, name: str, candidate: np.ndarray) -> Judgement:
        """Any candidate for dx, dW or dc (its shape; e.g. a wrong one) under the same rule."""
        return judge(candidate, self.numerical[name], self.bounds[name], underflow=self.underflow)


def residual_check(cache: ResidualCache, grads: ResidualGrads, dout: np.ndarray) -> ResidualCheck:
    """dx, dW and dc of the block's backward (grads, from `cache` and dout: x's shape) against
    central differences in float64 of the same inputs, whatever their dtype (as the gradient
    check does, ln_core.gradcheck): the bound is the float64 differences' own error
    (`residual_bounds`) plus the analytic values' rounding in the working dtype
    (`analytic_bounds`). Where a rounding of the working dtype's forward or backward pass
    underflowed, no bound holds: every judgement is "cannot resolve"."""
    wide = reference_cache(cache)
    wide_dout = np.asarray(dout, dtype=np.float64)
    h = default_h(wide.ln)
    numerical = residual_numerical_grads(
        wide.x, wide.sublayer, wide.ln.gamma, wide.ln.beta, wide_dout, wide.ln.eps, h
    )
    ln = cache.ln
    # Run again only to watch for underflow: the caller holds the results.
    _, underflow = underflowed(
        lambda: residual_backward(
            dout, residual_forward(cache.x, cache.sublayer, ln.gamma, ln.beta, ln.eps)
        )
    )
    differences = residual_bounds(wide, wide_dout, h)
    own = analytic_bounds(cache, dout)
    unknown = _unfaithful(cache, wide, wide_dout)
    bounds = {name: differences[name] + own[name] + unknown[name] for name in differences}
    dtype = ln.dtype if underflow else None
    return ResidualCheck(
        numerical=numerical,
        bounds=bounds,
        underflow=dtype,
        judgements={
            name: judge(getattr(grads, name), numerical[name], bound, underflow=dtype)
            for name, bound in bounds.items()
        },
    )
