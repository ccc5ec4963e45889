"""Predict-then-reveal questions a student can reason out from what the lab has already shown.

Every question is about one vector (x: (D,)) and, where it names an entry, its first entry.
Its prompt quotes only numbers the student has seen on earlier steps, and its reasoning redoes
the step with the student's own numbers. Each number quoted is a Fact: the value computed by
ln_core, and as `source` the expression over that vector's nodes and gradients that gives it
(tests evaluate every source against a fresh ln_core run and compare).

The questions live one file per subject: forward_steps (steps 1-10), backward_steps (steps
11-20), page_questions (asked on a page); kit holds what they are made of.
"""

from __future__ import annotations

from collections.abc import Callable

from teaching.quiz import backward_steps, forward_steps, page_questions
from teaching.quiz.kit import Fact, Question, Vector, vector

__all__ = ["PAGE_QUESTIONS", "STEP_QUESTIONS", "Fact", "Question", "Vector", "vector"]

# Step n's question: steps 1-10 forward through the nodes, 11-20 backward from out to x.
STEP_QUESTIONS: dict[int, Callable[[Vector], Question]] = dict(
    enumerate((*forward_steps.QUESTIONS, *backward_steps.QUESTIONS), start=1)
)
PAGE_QUESTIONS: dict[str, Callable[[Vector], Question]] = page_questions.QUESTIONS
