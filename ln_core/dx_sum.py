"""Why dx adds up to 0 over each vector: its sum, and how small that sum is next to dx."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.agreement import ROUNDINGS, backward_underflows, rounding_bounds
from ln_core.backward import Grads
from ln_core.forward import Cache
from ln_core.verdict import Judgement, judge


@dataclass(frozen=True)
class DxSum:
    """sums: Σ dx over each normalized group, x's shape with the normalized axes kept as size 1.
    relative: max |sum| / max Σ |dx|, the sum next to the entries it adds (0 when dx is 0).
    judgement: the sums against 0 under ln_core.verdict's rule, with the rounding each entry of
    dx carries and the rounding of the sum itself as the bound, and Σ |dx| as the size
    ("cannot resolve" where the backward underflows)."""

    sums: np.ndarray
    relative: float
    judgement: Judgement


def dx_sum(grads: Grads, cache: Cache) -> DxSum:
    """Σ dx per vector. Exactly 0 in exact arithmetic: moving every x_j by the same amount
    moves sample_mean by it and leaves x_sm, hence the output, unchanged (J · 1 = 0)."""
    sums = np.sum(grads.dx, axis=cache.axis, keepdims=True)
    sizes = np.sum(np.abs(grads.dx.astype(np.float64)), axis=cache.axis, keepdims=True)
    largest = float(np.max(sizes))
    relative = float(np.max(np.abs(sums))) / largest if largest > 0 else 0.0
    # Each of the n entries may be off by its own rounding bound, and adding them rounds a
    # chain of about 1 + log2 n more times.
    machine_eps = float(np.finfo(cache.dtype).eps)
    entries = np.sum(rounding_bounds(cache, grads.dout)["dx"], axis=cache.axis, keepdims=True)
    adding = ROUNDINGS * machine_eps * (1.0 + np.log2(cache.n)) * sizes
    underflow = cache.dtype if backward_underflows(cache, grads.dout) else None
    judgement = judge(
        sums, np.zeros(sums.shape), entries + adding, size=largest, underflow=underflow
    )
    return DxSum(sums, relative, judgement)
