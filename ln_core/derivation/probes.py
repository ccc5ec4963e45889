"""The inputs a formula is tried on after the student's own: each chosen to tell a common
mistake from the right formula, in order from the simplest.

Right and wrong formulas coincide on special inputs (γ = 1 hides a forgotten γ, ε = 0 hides ε
in the wrong place, one vector hides a missing sum over the batch, D = 2 without ε makes dx
vanish); between them these inputs break every such coincidence the lab knows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Probe:
    """label: the input in a few words; x, dout: (V, D); gamma, beta: (D,)."""

    label: str
    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dout: np.ndarray
    eps: float


def _rows(*rows: list[float]) -> np.ndarray:
    return np.array(rows, dtype=np.float64)


def _seeded(seed: int, vectors: int, d: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(0.0, 2.0, (vectors, d)), 2)
    gamma = np.round(rng.uniform(0.5, 2.0, d), 2)
    beta = np.round(rng.normal(0.0, 1.0, d), 2)
    dout = np.round(rng.normal(0.0, 1.0, (vectors, d)), 2)
    return x, gamma, beta, dout


PROBES: tuple[Probe, ...] = (
    Probe(
        "D = 3, γ = 1, one-hot upstream gradient, ε = 0",
        _rows([1.0, 2.0, 4.0]),
        np.ones(3),
        np.zeros(3),
        _rows([1.0, 0.0, 0.0]),
        0.0,
    ),
    Probe(
        "D = 2, uneven γ, ε = 0.5",
        _rows([1.0, 4.0]),
        np.array([2.0, 0.5]),
        np.zeros(2),
        _rows([1.0, -0.5]),
        0.5,
    ),
    Probe(
        "D = 3, uneven γ, ε = 0",
        _rows([1.0, 2.0, 4.0]),
        np.array([2.0, 0.5, 1.0]),
        np.zeros(3),
        _rows([1.0, -2.0, 0.5]),
        0.0,
    ),
    Probe(
        "D = 3, uneven γ, large ε = 4",
        _rows([1.0, 2.0, 4.0]),
        np.array([2.0, 0.5, 1.0]),
        np.zeros(3),
        _rows([1.0, -2.0, 0.5]),
        4.0,
    ),
    Probe(
        "D = 4, all-ones upstream gradient, uneven γ",
        _rows([0.5, -1.0, 2.0, 3.0]),
        np.array([1.5, 0.5, 1.0, 2.0]),
        np.zeros(4),
        np.ones((1, 4)),
        1e-3,
    ),
    Probe(
        "D = 4, every entry offset by 100",
        _rows([100.5, 99.0, 102.0, 103.0]),
        np.array([1.5, 0.5, 1.0, 2.0]),
        np.zeros(4),
        _rows([0.3, -1.0, 0.8, 0.1]),
        1e-3,
    ),
    Probe("3 vectors of D = 4, β ≠ 0, ε = 0.1", *_seeded(1, 3, 4), 0.1),
    Probe("2 vectors of D = 6, ε = 0", *_seeded(2, 2, 6), 0.0),
)
