"""The audit's vocabulary: the quantity a formula claims to be, one audited formula (an entry),
and the judged result.

Formulas and references are functions of a `Setting` (ln_core.audit.setting, which also holds
the Model a document assumes): the forward pass and staged backward in the document's own
model, on the student's inputs in float64. This module reads setting, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ln_core.audit.setting import Case, Model, Setting

Formula = Callable[[Setting], np.ndarray]


def with_underflow(compute: Callable[[], np.ndarray]) -> tuple[np.ndarray, bool]:
    """compute() as float64 with float64's errors ignored, and whether a step of it underflowed
    (fell below the smallest normal number, where a value keeps fewer digits or none)."""
    steps_underflowed = []
    with np.errstate(all="ignore", under="call", call=lambda *_: steps_underflowed.append(1)):
        value = np.asarray(compute(), dtype=np.float64)
    return value, bool(steps_underflowed)


@runtime_checkable
class KeepsValues(Protocol):
    """A formula that computes its value once per Setting (a student's, judged against the
    reference and every known mistake): it remembers whether that computation underflowed."""

    def __call__(self, st: Setting) -> np.ndarray: ...

    def underflowed(self, st: Setting) -> bool: ...


@runtime_checkable
class BoundsRoundOff(Protocol):
    """A formula that knows how far its own round-off can move it (a student's, evaluated by
    ln_core.formula.evaluate_bounded): the judge adds that to what round-off explains, so a
    right formula that loses digits as written is never called wrong for it."""

    def __call__(self, st: Setting) -> np.ndarray: ...

    def round_off(self, st: Setting) -> np.ndarray:
        """|computed − exact| at most, entry by entry (broadcasts to the value's shape)."""
        ...


@dataclass(frozen=True)
class Quantity:
    """What a formula claims to compute, and the autograd-free value it is judged against.

    compute: the reference, from ln_core's staged backward, Jacobian or central differences.
    scale: the natural size of the quantity's terms on these inputs; a reference far below it
    is round-off, and agreement is measured against it. always_zero: the quantity is 0 on
    every input (a claim "= 0" is then decided by the formula's size alone).
    moved, read: for a central-difference reference, what is moved ("x" or a node, the others
    held) and which node is read; empty for a reference computed in closed form. The verdict's
    bound then includes the difference's own round-off and truncation. at_rows: the reference
    holds only the entries k of Setting.rows on the last axis, where formulas are compared.
    """

    text: str
    how: str
    compute: Formula
    scale: Callable[[Setting], float]
    always_zero: bool = False
    moved: str = ""
    read: str = ""
    at_rows: bool = False


@dataclass(frozen=True)
class Correction:
    """The smallest change that makes a wrong formula right, and when the two agree anyway.

    agrees_when: the inputs on which the wrong formula gives the right number (so they cannot
    decide); exposed_by: inputs that show the difference.
    """

    latex: str
    formula: Formula
    mistake: str
    agrees_when: str
    exposed_by: str


@dataclass(frozen=True)
class Entry:
    """One stated formula of one document.

    line: the document's own line, in LaTeX as the document writes it. formula: that line as
    code. where: which entries of the quantity the line speaks about (a case of a piecewise
    formula), None for all. reading: how a typo or an ambiguity was read, and why.
    note: teaching notes computed on the inputs, one per stacked case (for a model difference
    that is not a mistake). written_by_lab: the document announces the step but never writes
    it, so `line` is the lab's own completion, not the document's.
    """

    id: str
    document: str
    step: str
    line: str
    model: Model
    quantity: Quantity
    formula: Formula
    correction: Correction | None = None
    where: Callable[[Setting], np.ndarray] | None = None
    reading: str = ""
    note: Callable[[Case], list[str]] | None = None
    written_by_lab: bool = False

    @property
    def expected(self) -> str:
        """The verdict on inputs that can decide: a formula with a correction is wrong."""
        return "correct" if self.correction is None else "wrong"


# What a relative error measures (AuditResult.error_measures).
FORMULA, ROUND_OFF, UNDERFLOW = "formula", "round-off", "underflow"


@dataclass(frozen=True)
class AuditResult:
    """An entry judged on the student's inputs; plain data, so the app can cache it.

    verdict: 'correct', 'wrong' or 'cannot decide'. error: rel_error of the formula against
    the reference (None when the document's model is undefined on these inputs). reason: why
    this verdict, in words. values / reference_values: the first few numbers of each.
    mistake, correction, correction_error: None for a formula with no mistake. written_by_lab:
    the line is the lab's own completion of a step the document never writes.
    error_measures, correction_error_measures: what the formula's (or the correction's)
    relative error measures: "formula"; "round-off" where its gap is within what round-off
    explains on a true value that is 0 up to round-off (the ratio of two round-offs, anything up
    to 1); "underflow" where it misses after a step of it fell below float64's smallest normal
    number (ln_core.audit.verdict).
    """

    id: str
    document: str
    step: str
    line: str
    model: str
    claim: str
    reference: str
    reading: str
    verdict: str
    error: float | None
    reason: str
    values: tuple[float, ...]
    reference_values: tuple[float, ...]
    mistake: str | None
    correction: str | None
    correction_error: float | None
    note: str
    written_by_lab: bool = False
    error_measures: str = FORMULA
    correction_error_measures: str = FORMULA
