"""Seeded inputs shaped like the app's teaching defaults, and the hypothesis settings."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, settings

FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Case:
    """x, dout: `shape`; gamma (non-uniform, around 1), beta (non-zero): (D,)."""

    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dout: np.ndarray

    @property
    def args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.x, self.gamma, self.beta, self.dout


def teaching_case(seed: int = 0, shape: tuple[int, ...] = (4, 8)) -> Case:
    """Random normal x and dout, gamma ~ N(1, 0.3^2), beta ~ N(0, 1), all float64."""
    rng = np.random.default_rng(seed)
    d = shape[-1]
    return Case(
        x=rng.normal(size=shape),
        gamma=rng.normal(1.0, 0.3, size=d),
        beta=rng.normal(size=d),
        dout=rng.normal(size=shape),
    )
