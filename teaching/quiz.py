"""Predict-before-reveal questions about a gradient, answered from the computed numbers."""

from __future__ import annotations

from dataclasses import dataclass

SIGNS = ("positive", "negative", "zero")


@dataclass(frozen=True)
class Question:
    """A multiple-choice question whose answer is one of `options`."""

    prompt: str
    options: tuple[str, ...]
    answer: str
    explanation: str


def _sign(value: float, scale: float) -> str:
    # Round-off leaves tiny non-zero values where the exact answer is 0.
    if abs(value) <= 1e-9 * max(scale, 1e-300):
        return "zero"
    return "positive" if value > 0 else "negative"


def sign_question(name: str, value: float, scale: float) -> Question:
    """Ask for the sign of one gradient entry; `scale` is the size of that gradient's entries."""
    answer = _sign(value, scale)
    return Question(
        prompt=f"Before you look: is the first entry of {name} positive, negative or zero?",
        options=SIGNS,
        answer=answer,
        explanation=f"{name} there is {value:.4g}.",
    )


def dominance_question(name: str, first: tuple[str, float], second: tuple[str, float]) -> Question:
    """Ask which of two contributions to a merged gradient entry is larger in size."""
    (label_a, a), (label_b, b) = first, second
    answer = label_a if abs(a) >= abs(b) else label_b
    return Question(
        prompt=f"Before you look: which path contributes more (in size) to the first entry of "
        f"{name}?",
        options=(label_a, label_b),
        answer=answer,
        explanation=f"{label_a}: {a:.4g}; {label_b}: {b:.4g}; their sum: {a + b:.4g}.",
    )
