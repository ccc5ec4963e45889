"""The (32, 128, 768) float32 problem, made identically in every process that needs it."""

from __future__ import annotations

import numpy as np

LARGE_SHAPE = (32, 128, 768)
EPS = 1e-5


def large_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """x, gamma, beta, dout: x and dout ~ N(0, 1) of LARGE_SHAPE, gamma ~ N(1, 0.1),
    beta ~ N(0, 0.1); all float32."""
    rng = np.random.default_rng(0)
    d = LARGE_SHAPE[-1]
    return (
        rng.standard_normal(LARGE_SHAPE, dtype=np.float32),
        rng.normal(1.0, 0.1, d).astype(np.float32),
        rng.normal(0.0, 0.1, d).astype(np.float32),
        rng.standard_normal(LARGE_SHAPE, dtype=np.float32),
    )
