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
- the analytic gradient's own rounding: machine_eps * (2 + log2 D) * (1 + s M) times its size.
Each term has the safety factor of ln_core.gradcheck.
"""

from __future__ import annotations

import numpy as np

from ln_core.agreement import ROUNDINGS, rounding_bounds
from ln_core.backward import times_gamma
from ln_core.gradcheck import ROUND_OFF, TRUNCATION
from ln_core.residual import ResidualCache, ResidualGrads
from ln_core.verdict import Judgement, judge


def residual_bounds(cache: ResidualCache, dout: np.ndarray, h: float) -> dict[str, float]:
    """How far a correct dx, dW and dc may sit from their central differences at step h (one
    absolute bound per tensor; see the module docstring). Moving an entry of x re-runs only its
    own vector's outputs differently, so its round-off is that vector's; moving W or c changes
    every vector's. Either way the loss's final sum rounds differently, by a few ulp of
    sum |dout * y|."""
    ln = cache.ln
    machine_eps = float(np.finfo(ln.dtype).eps)
    chain = 2.0 + np.log2(ln.n)
    dout = np.abs(np.asarray(dout, dtype=np.float64)).reshape(-1, ln.n)
    s = ln.inv_sqrt_sve.astype(np.float64).reshape(-1, 1)
    gain = 1.0 + float(np.max(np.sum(np.abs(cache.sublayer.W.astype(np.float64)), axis=1)))
    normalized = np.abs(ln.normalized_x.astype(np.float64)).reshape(-1, ln.n)
    spread = 1.0 + np.max(normalized, axis=1, keepdims=True)
    largest_z = np.max(np.abs(ln.x.astype(np.float64)).reshape(-1, ln.n), axis=1, keepdims=True)
    largest_x = np.max(np.abs(cache.x.astype(np.float64)).reshape(-1, ln.n), axis=1, keepdims=True)
    gamma = np.abs(times_gamma(np.ones_like(ln.x), ln).astype(np.float64)).reshape(-1, ln.n)
    gx = np.abs(ln.gx.astype(np.float64)).reshape(-1, ln.n)
    beta = np.abs(ln.out.astype(np.float64)).reshape(-1, ln.n) - gx
    per_output = chain * gx + np.abs(beta) + gamma * spread * s * (largest_z + gain * largest_x + 1)
    group = np.sum(dout * per_output, axis=1, keepdims=True)
    final_sum = np.log2(dout.size + 1) * float(np.sum(dout * (gx + np.abs(beta))))
    natural = s * np.sum(dout * gamma, axis=1, keepdims=True) * spread
    bend = np.maximum(s, 1.0)
    analytic = ROUNDINGS * machine_eps * chain * (1.0 + s * largest_z) * natural
    dx = (
        ROUND_OFF * machine_eps * (group + final_sum) / h
        + TRUNCATION * (h * gain * bend) ** 2 * gain * natural
        + gain * analytic
    )
    everywhere = ROUND_OFF * machine_eps * (float(np.sum(group)) + final_sum) / h
    dw = TRUNCATION * (h * largest_x * bend) ** 2 * largest_x * natural + largest_x * analytic
    dc = TRUNCATION * (h * bend) ** 2 * natural + analytic
    return {
        "dx": float(np.max(dx)),
        "dW": everywhere + float(np.sum(dw)),
        "dc": everywhere + float(np.sum(dc)),
    }


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


def residual_judgements(
    cache: ResidualCache,
    grads: ResidualGrads,
    numerical: dict[str, np.ndarray],
    dout: np.ndarray,
    h: float,
) -> dict[str, Judgement]:
    """dx, dW and dc of the block's backward against `numerical` (ln_core.residual's central
    differences at step h), each judged against `residual_bounds`."""
    bounds = residual_bounds(cache, dout, h)
    return {name: judge(getattr(grads, name), numerical[name], bounds[name]) for name in bounds}
