"""What the instructor can ask the class: the lab's own questions, on the class's numbers.

The questions are teaching/quiz.py's: the current step's, "what happens next?" (the next
step's, asked before the class sees it) and the page questions. Each is worked out by ln_core
on the instructor's inputs, which following students share, so its prompt quotes numbers on
their screens and its explanation redoes the step with them. Like the stepper's own quiz, a
question is about one vector: the first row (or token) of the layer.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from teaching.quiz import PAGE_QUESTIONS, STEP_QUESTIONS, Question, Vector
from teaching.steps import N_STEPS, step
from ui.entry.literal import as_typed
from ui.live.rules import Refused
from ui.live.store import Asked
from ui.server import compute
from ui.session import state

PAGE_TITLES = {"gamma_doubling": "If every gamma doubled"}


def choices() -> dict[str, Callable[[Vector], Question]]:
    """Title -> question maker, for the instructor's current step."""
    number = st.session_state["step"]
    made = {f"Step {step(number).label}": STEP_QUESTIONS[number]}
    if number < N_STEPS:
        made[f"What happens next? Step {step(number + 1).label}"] = STEP_QUESTIONS[number + 1]
    for name, maker in PAGE_QUESTIONS.items():
        made[PAGE_TITLES[name]] = maker
    return made


def asked(title: str, maker: Callable[[Vector], Question]) -> Asked:
    layer = state.inputs()
    first = layer.vector((0,) * (layer.x.ndim - 1))
    question = maker(Vector(*compute.forward_backward(first)))
    if question.undecided:
        # A poll has one right option; where round-off cannot tell several apart, asking would
        # mark students wrong for an answer the numbers allow.
        raise Refused(
            f"These inputs cannot decide this question between {', '.join(question.fits)}: "
            f"{question.undecided} Change the inputs or ask another question."
        )
    return Asked(
        title,
        question.prompt,
        question.options,
        question.options.index(question.answer),
        question.explanation,
    )


def shown(asked: Asked, text: str) -> str:
    """A question's text for Markdown: the lab's own as written (its Markdown is the lab's), the
    instructor's own exactly as typed."""
    return as_typed(text) if asked.own else text


def own(title: str, prompt: str, options: list[str], right: int | None) -> Asked:
    """The instructor's own question from the form: the choices filled in, in order; `right`
    the index in `options` of the one marked right (None: no right answer). The store checks
    the text (rules.check_own)."""
    if right is not None and not options[right].strip():
        raise Refused(f"Choice {right + 1} is marked right but is empty.")
    given = tuple(option for option in options if option.strip())
    answer = None if right is None else given.index(options[right])
    return Asked(title, prompt, given, answer, "", own=True)
