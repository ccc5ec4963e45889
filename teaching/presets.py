"""Teaching inputs: each preset is a seeded (x, gamma, beta) chosen to show one behaviour."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Example:
    """x: shape (D,), (N, D) or (B, L, D); gamma, beta: (D,). Stored in float64."""

    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray


@dataclass(frozen=True)
class Preset:
    """A named recipe for a requested shape.

    `shape` and `dtype` are what the preset suggests when chosen; `fixed` means its numbers
    are written out by hand and ignore the requested shape.
    """

    name: str
    description: str
    make: Callable[[tuple[int, ...], np.random.Generator], Example]
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    fixed: bool = False


def _affine(d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    # gamma != 1 and beta != 0 on purpose: a uniform gamma hides bugs that forget it.
    return 1.0 + 0.5 * rng.standard_normal(d), 0.5 * rng.standard_normal(d)


def _random(shape: tuple[int, ...], rng: np.random.Generator) -> Example:
    return Example(rng.standard_normal(shape), *_affine(shape[-1], rng))


def _classroom(shape: tuple[int, ...], rng: np.random.Generator) -> Example:
    # Row 1: mean 3, variance 9, sigma 3. Row 2: mean 3, variance 4, sigma 2.
    x = np.array([[0.0, 2.0, 2.0, 8.0], [1.0, 5.0, 1.0, 5.0]])
    return Example(x, np.array([1.0, 2.0, 0.5, -1.0]), np.array([0.0, 1.0, 0.0, -1.0]))


def _constant(shape: tuple[int, ...], rng: np.random.Generator) -> Example:
    return Example(np.full(shape, 3.0), *_affine(shape[-1], rng))


def _outlier(shape: tuple[int, ...], rng: np.random.Generator) -> Example:
    x = rng.standard_normal(shape)
    x.reshape(-1, shape[-1])[:, 0] = 50.0
    return Example(x, *_affine(shape[-1], rng))


def _offset(shape: tuple[int, ...], rng: np.random.Generator) -> Example:
    return Example(2000.0 + rng.standard_normal(shape), *_affine(shape[-1], rng))


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "Random normal",
            "Seeded standard-normal x with a non-uniform gamma and non-zero beta. Demonstrates "
            "the general case: no symmetry hides a bug that forgets gamma or beta.",
            _random,
        ),
        Preset(
            "Classroom (D = 4, integers)",
            "Two small integer rows whose mean and variance are easy by hand "
            "(row 1: mean 3, variance 9; row 2: mean 3, variance 4). Demonstrates every "
            "node with numbers a class can check on paper.",
            _classroom,
            shape=(2, 4),
            fixed=True,
        ),
        Preset(
            "Constant vector",
            "Every entry equal: the variance is 0, so eps alone decides the output. "
            "Demonstrates why eps exists: set eps = 0 and the output is no longer defined.",
            _constant,
        ),
        Preset(
            "One large outlier",
            "Random normal with the first feature of every vector set to 50: one entry "
            "dominates the mean and the variance. Demonstrates how one outlier squashes "
            "every other normalized entry towards the same value.",
            _outlier,
        ),
        Preset(
            "Large common offset (about 2000)",
            "Random normal plus 2000. Demonstrates round-off: in float32 only a few digits "
            "are left for the deviations, and the gradient check shows it.",
            _offset,
            dtype="float32",
        ),
        Preset(
            "Token batch (B x L x D)",
            "A batch of 2 sequences of 3 tokens with 8 features, as inside a transformer. "
            "Demonstrates that LayerNorm treats every token on its own: pick one to follow.",
            _random,
            shape=(2, 3, 8),
        ),
    )
}


def make_example(preset: str, shape: tuple[int, ...], seed: int) -> Example:
    """The preset's example for `shape` (a fixed preset keeps its own shape)."""
    if preset not in PRESETS:
        raise ValueError(f"Unknown preset {preset!r}; choose one of: {', '.join(PRESETS)}.")
    if not shape or min(shape) < 1:
        raise ValueError(f"Every dimension of the shape must be at least 1, got {shape}.")
    return PRESETS[preset].make(tuple(shape), np.random.default_rng(seed))
