"""What goes wrong with a typed formula, and where: one frozen record the page can show.

The problem is in the lab's words; the student's own text (`found`) is kept apart so a page
shows it literally, never as Markdown or LaTeX.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FormulaError:
    """One problem with a formula.

    kind: a short fixed word (too-long, character, number, unknown-name, bracket, syntax,
    too-deep, too-big, exponent, division-by-zero, overflow, undefined, time, shape).
    problem: the lab's sentence. position, end: the characters [position, end) of the typed
    formula it is about (0-based). found: the typed text there. known: the names the formula
    may use, for an unknown name.
    """

    kind: str
    problem: str
    position: int
    end: int
    found: str = ""
    known: tuple[str, ...] = ()

    def describe(self) -> str:
        """The problem and its place, in plain words (the found text is not included)."""
        return f"{self.problem} (at character {self.position + 1})"


class FormulaFailure(Exception):
    """Raised inside the parser and evaluator, carrying the FormulaError; the public
    functions catch it and hand the error back as a value."""

    def __init__(self, error: FormulaError) -> None:
        super().__init__(error.problem)
        self.error = error
