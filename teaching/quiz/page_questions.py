"""Questions asked on a page rather than at a stepper step, by name."""

from __future__ import annotations

from teaching.quiz.kit import Question, Vector, nearest_factor, question


def gamma_doubling(v: Vector) -> Question:
    """What dx does when every gamma doubles (dx is linear in gamma)."""
    twice = v.doubled("gamma")
    dx, dx2 = v.entry("dx"), twice.entry("dx")
    options = {"double": 2.0, "halve": 0.5, "stay the same": 1.0}
    return question(
        "Before you look: if every gamma doubled, what would dx do?",
        tuple(options),
        nearest_factor((dx.value, v.bound("dx")), (dx2.value, twice.bound("dx")), options),
        "gamma enters the backward pass once, in `dnormalized_x` = gamma ⊙ `dgx`, and every "
        "later step is linear in `dnormalized_x`: dx_0 = {dx} becomes {dx2}. Each row of J "
        "doubles with its gamma, so dx = dout J doubles too; dgamma does not change.",
        dx=dx,
        dx2=dx2,
    )


QUESTIONS = {"gamma_doubling": gamma_doubling}
