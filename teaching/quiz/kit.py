"""What a question is made of: the Facts it quotes, the Question itself, the Vector it is asked
about, and the small rules that turn numbers into an answer (a sign, the nearest factor)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ln_core.backward import StagedGrads, backward
from ln_core.forward import Cache, forward

SIGNS = ("positive", "negative", "zero")
SUMS = ("a positive number", "a negative number", "zero")


@dataclass(frozen=True)
class Fact:
    """A number a question quotes: `value` as ln_core computed it, `source` how to recompute it.

    `source` is a Python expression over the vector's nodes and gradients by their ln_core
    names (x, x_sm, dx_sm, dgamma...), D, np, and rerun(x=..., gamma=..., beta=...), which
    returns the nodes and gradients of a second run with some inputs changed.
    """

    source: str
    value: float
    # Significant digits shown: more where a claim rests on a small difference (just under 1).
    digits: int = 4

    @property
    def text(self) -> str:
        return f"{self.value:.{self.digits}g}"


def digits_to_show(gap: float) -> int:
    """Significant digits that keep a number `gap` away from a round one visibly apart from it."""
    if gap == 0 or not np.isfinite(gap):
        return 4
    return int(min(17, max(4, np.ceil(-np.log10(abs(gap))) + 2)))


@dataclass(frozen=True)
class Question:
    """A multiple-choice question whose answer is one of `options`; `explanation` says why."""

    prompt: str
    options: tuple[str, ...]
    answer: str
    explanation: str
    facts: tuple[Fact, ...]


@dataclass(frozen=True)
class Vector:
    """One vector's forward and backward pass: ln_core's cache and grads for x, dout: (D,)."""

    cache: Cache
    grads: StagedGrads
    # How a Fact's source reaches this run: "" for the student's own, "rerun(...)." for another.
    source: str = ""

    @property
    def d(self) -> int:
        return int(self.cache.x.shape[-1])

    def value(self, name: str) -> np.ndarray:
        """A node, an input or a gradient by its ln_core name."""
        return getattr(self.cache, name) if hasattr(self.cache, name) else getattr(self.grads, name)

    def entry(self, name: str, index: int = 0) -> Fact:
        value = float(self.value(name).reshape(-1)[index])
        return Fact(f"{self.source}{name}[{index}]", value)

    def rerun(self, change: str, **changed: np.ndarray) -> Vector:
        """The same vector with some of x, gamma, beta replaced, run forward and backward.

        `change` says how in the sources' terms, e.g. "x=2 * x" for changed={"x": 2 * x}.
        """
        c = self.cache
        inputs = {"x": c.x, "gamma": c.gamma, "beta": c.beta, **changed}
        cache = forward(inputs["x"], inputs["gamma"], inputs["beta"], c.eps)
        return Vector(cache, backward(self.grads.dout, cache), f"rerun({change}).")

    def doubled(self, name: str) -> Vector:
        """The same vector with every entry of `name` (x, gamma or beta) doubled."""
        return self.rerun(f"{name}=2 * {name}", **{name: 2 * getattr(self.cache, name)})


def vector(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float
) -> Vector:
    """The Vector that questions are asked about. x, dout: (D,); gamma, beta: (D,)."""
    cache = forward(x, gamma, beta, eps)
    return Vector(cache, backward(dout, cache))


def question(
    prompt: str, options: tuple[str, ...], answer: str, reasoning: str, **facts: Fact
) -> Question:
    """Fill the numbers into prompt and reasoning ({name} placeholders) and keep them."""
    texts = {name: fact.text for name, fact in facts.items()}
    return Question(
        prompt.format(**texts), options, answer, reasoning.format(**texts), tuple(facts.values())
    )


def sign(value: float, scale: float) -> str:
    """The sign of `value` in words, for a result whose inputs are of size `scale`."""
    # Round-off leaves tiny non-zero values where the exact answer is 0.
    if abs(value) <= 1e-9 * max(abs(scale), 1e-300):
        return "zero"
    return "positive" if value > 0 else "negative"


def d_fact(v: Vector) -> Fact:
    """D, the number of entries of the vector, as a Fact."""
    return Fact("D", float(v.d))


def nearest_factor(before: float, after: float, factors: Mapping[str, float]) -> str:
    """The label of the factor closest to after / before (on a log scale)."""
    # Equal numbers (0 and 0 included) did not change: a factor of 1.
    ratio = 1.0 if after == before else abs(after) / max(abs(before), 1e-300)
    return min(factors, key=lambda k: abs(np.log(max(ratio, 1e-300) / factors[k])))


def product_sign(a: Fact, b: Fact, product: Fact) -> str:
    """The sign of `product` = a × b as computed, zero judged against the factors' size."""
    return sign(product.value, abs(a.value) * abs(b.value))
