"""Why dx adds up to 0 over each vector: its sum, and how small that sum is next to dx."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.backward import Grads
from ln_core.forward import Cache


@dataclass(frozen=True)
class DxSum:
    """sums: Σ dx over each normalized group, x's shape with the normalized axes kept as size 1.
    relative: max |sum| / max Σ |dx|, the sum next to the entries it adds (0 when dx is 0), so
    rounding can be told from a real imbalance."""

    sums: np.ndarray
    relative: float


def dx_sum(grads: Grads, cache: Cache) -> DxSum:
    """Σ dx per vector. Exactly 0 in exact arithmetic: moving every x_j by the same amount
    moves sample_mean by it and leaves x_sm, hence the output, unchanged (J · 1 = 0)."""
    sums = np.sum(grads.dx, axis=cache.axis, keepdims=True)
    sizes = np.sum(np.abs(grads.dx), axis=cache.axis, keepdims=True)
    largest = float(np.max(sizes))
    relative = float(np.max(np.abs(sums))) / largest if largest > 0 else 0.0
    return DxSum(sums, relative)
