"""Judging one entry on a case: correct, wrong, or "these inputs cannot decide".

Everything is judged in float64 against the quantity the formula claims to be, by the lab's one
rule (ln_core.verdict): the largest gap between formula and reference against a bound on what
round-off explains, with `scale` the natural size of the quantity's terms:

- the bound: ROUNDINGS chains of 2 + log2 n roundings of `scale` (the formula and a reference
  computed in closed form rearrange the same float64 values), times 1 + s M (the computed
  x - μ does not sum to exactly 0 but to a few ulp of M, the largest |x|, and two formulas may
  lean on that sum differently; see ln_core.agreement), plus, for a reference from central
  differences, that difference's own round-off and truncation (Setting.difference_bound: a
  large common offset, the step and the dtype limit what it resolves), plus, for a formula
  that bounds its own round-off (a student's, BoundsRoundOff), OWN_SLACK times that bound:
  the chain above assumes both sides rearrange the same values, while a formula written as
  mean(x²) − mean(x)² loses about 2 log10(offset / spread) digits to cancellation;
- gap above the bound -> wrong, with certainty;
- gap within it, but the bound not small against the true value's size (the largest
  |reference|; `scale` for a quantity that is 0 on every input) -> cannot decide: the true
  value is 0 up to round-off, and any formula that gives about 0 matches it; or, where the
  formula's own round-off is what makes the bound large (CANCELS), the formula as written
  cannot pin the value on these inputs;
- a wrong formula (one with a correction) that agrees on these inputs -> cannot decide, with
  the reason it agrees here and the inputs that would expose it;
- otherwise correct.

Two limits of float64 come first: a true value, size or bound that is not finite leaves
nothing to measure against (cannot decide, BEYOND_FLOAT64), and a gap from a formula a step
of which underflowed on the inputs may be float64's (wrong becomes cannot decide, UNDERFLOWED).

A Case may stack several cases; every number above is taken per case.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ln_core.audit.model import (
    FORMULA,
    ROUND_OFF,
    UNDERFLOW,
    AuditResult,
    BoundsRoundOff,
    Entry,
    Formula,
    KeepsValues,
    Model,
    with_underflow,
)
from ln_core.audit.setting import Case, Setting
from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS, decide

# Safety factor on the rounding chain of two float64 computations from the same values.
ROUNDINGS = 64.0
# On a formula's own round-off bound (ln_core.formula.evaluate_bounded): its rules are first
# order in places (a power's), and twice the bound covers the rest wherever it is small
# against the value; where it is not, the verdict is "cannot decide" anyway.
OWN_SLACK = 2.0
SHOWN = 6  # how many numbers of the formula and the reference a result carries
UNDERFLOWED = (
    "These inputs cannot decide: computed on them, a step of the formula falls below float64's "
    "smallest normal number (about 2.2e-308) and loses its digits, so its gap to the true "
    "value may be float64's, not the formula's. Entries whose spread lies between 1e-100 and "
    "1e100 can be judged."
)
BEYOND_FLOAT64 = (
    "These inputs cannot decide: on them the true value, the terms it is made of or the "
    "round-off those carry pass float64's largest number (about 1.8e308), so there is nothing "
    "to measure the formula against. Entries whose spread lies between 1e-100 and 1e100 can be "
    "judged."
)
CANCELS = (
    "These inputs cannot decide: your formula as written loses digits to cancellation on "
    "them (it subtracts nearly equal numbers, as mean(x²) − mean(x)² does when the entries "
    "share a large common offset): {reach}, against a true value of size {size:.1e}, so "
    "right and wrong coincide here. Inputs without a large common offset decide, or the same "
    "formula written with x − μ."
)


def _cancels(own: float, size: float) -> str:
    """CANCELS with the formula's own round-off bound `own` and the true value's size."""
    reach = (
        f"its own round-off can reach {own:.1e}"
        if np.isfinite(own)
        else "it divides by a value its own round-off may have made 0"
    )
    return CANCELS.format(reach=reach, size=size)


def _why_zero(case: Case, model: Model, c: int) -> str:
    """What makes the reference of case c vanish, and what to try instead."""
    batch = model.axis == "batch"
    group = "the batch" if batch else "each vector"
    size = case.x.shape[1] if batch else case.d
    try_ = "rows of N ≥ 3 vectors" if batch else "D ≥ 3"
    if size == 1:
        one = "one sample" if batch else "one feature"
        return f"{group} has {one}, so x − μ is 0 and x̂ does not depend on x. Try {try_}"
    reasons = []
    if size == 2 and case.eps_for(model) == 0:
        reasons.append(
            f"{group} has two entries and there is no ε, so x̂ = ±1 whatever x is and the "
            "output does not move with x"
        )
    dout = case.dout[c]
    same = dout == (dout[:1, :] if batch else dout[:, :1])
    if not np.any(dout):
        reasons.append("the upstream gradient is 0")
    elif np.all(same):
        where = "for each feature in every vector" if batch else "in every entry of a vector"
        then = "dx is 0 too" if batch else "with a uniform γ dx is 0 too"
        reasons.append(
            f"the upstream gradient is the same {where}: sums against x̂ vanish (Σ x̂ = 0), "
            f"and {then}"
        )
    if not reasons:
        return (
            "nothing in their shape forces it: another seed, or entries without a large "
            "common offset, may decide"
        )
    return f"{'; '.join(reasons)}. Try {try_} with a random upstream gradient"


@dataclass(frozen=True)
class _Compared:
    """A formula next to its reference and its own round-off bound, broadcast to one shape
    (C, ...), and the entries the formula speaks about (mask: that shape without C, or None
    for all)."""

    value: np.ndarray
    reference: np.ndarray
    mask: np.ndarray | None
    underflowed: bool  # a step of the formula fell below float64's smallest normal number
    round_off: np.ndarray  # the formula's own round-off bound per entry (0 when it has none)

    def largest(self, a: np.ndarray) -> np.ndarray:
        """max over the entries the formula speaks about, per case, (C,)."""
        if self.mask is not None:
            a = np.where(self.mask, a, 0.0)
        return np.max(a.reshape(a.shape[0], -1), axis=1)

    def finite(self, a: np.ndarray) -> np.ndarray:
        """Whether every entry of `a` the formula speaks about is finite, per case, (C,)."""
        return self.largest(np.where(np.isfinite(a), 0.0, 1.0)) == 0

    @cached_property
    def own(self) -> np.ndarray:
        """The formula's own round-off bound, its largest over the entries, per case, (C,):
        one allowance per case, as the rounding chain it is added to."""
        return self.largest(self.round_off)

    @cached_property
    def gap(self) -> np.ndarray:
        return self.largest(np.abs(self.value - self.reference))

    @property
    def error(self) -> np.ndarray:
        """ln_core.verdict.rel_error per case: max|a - n| / max(|a| + |n|), 0 when both are 0."""
        both = self.largest(np.abs(self.value) + np.abs(self.reference))
        return np.divide(self.gap, both, out=np.zeros_like(self.gap), where=self.gap > 0)

    @cached_property
    def _first(self) -> np.ndarray:
        """Flat indices, within one case, of the first SHOWN entries the formula speaks about."""
        if self.mask is None:
            return np.arange(min(SHOWN, self.value[0].size))
        return np.flatnonzero(self.mask)[:SHOWN]

    def shown(self, a: np.ndarray, c: int) -> tuple[float, ...]:
        return tuple(float(v) for v in a[c].reshape(-1)[self._first])


def _evaluated(formula: Formula, st: Setting) -> tuple[np.ndarray, bool]:
    """formula(st) with float64's errors ignored, and whether a step of it underflowed."""
    value, underflowed = with_underflow(lambda: formula(st))
    # A formula that keeps its value per Setting computed it once, maybe before this call.
    if isinstance(formula, KeepsValues):
        underflowed = formula.underflowed(st)
    return value, underflowed


def _underflowed_cases(
    formula: Formula, case: Case, model: Model, compared: _Compared
) -> np.ndarray:
    """Per case, (C,): whether evaluating `formula` on it underflows. The stacked cases were
    evaluated at once (`compared`); only when that underflowed is each case evaluated alone to
    say which."""
    if not compared.underflowed:
        return np.zeros(case.count, dtype=bool)
    if case.count == 1:
        return np.ones(1, dtype=bool)
    alone = [
        Case.stack([(case.x[c], case.gamma[c], case.beta[c], case.dout[c])], case.eps)
        for c in range(case.count)
    ]
    return np.array([_evaluated(formula, one.setting(model))[1] for one in alone])


def _compared(entry: Entry, st: Setting, formula: Formula) -> _Compared:
    """`formula` (the entry's or its correction) and the entry's reference."""
    value, underflowed = _evaluated(formula, st)
    own = np.zeros(np.shape(value))
    if isinstance(formula, BoundsRoundOff):
        own = np.broadcast_to(formula.round_off(st), np.shape(value))
    if entry.quantity.at_rows:
        value, own = value[..., st.rows], own[..., st.rows]
    value, reference, own = np.broadcast_arrays(value, st.reference(entry.quantity)[0], own)
    mask = None
    if entry.where is not None:
        mask = np.broadcast_to(entry.where(st), value.shape[1:])
    return _Compared(value, reference, mask, underflowed, own)


def _base(entry: Entry) -> dict:
    correction = entry.correction
    return {
        "id": entry.id,
        "document": entry.document,
        "step": entry.step,
        "line": entry.line,
        "model": entry.model.describe(),
        "claim": entry.quantity.text,
        "reference": entry.quantity.how,
        "reading": entry.reading,
        "mistake": None if correction is None else correction.mistake,
        "correction": None if correction is None else correction.latex,
        "values": (),
        "reference_values": (),
        "error": None,
        "correction_error": None,
        "written_by_lab": entry.written_by_lab,
    }


def judge(entry: Entry, case: Case) -> list[AuditResult]:
    """The verdict of one entry on each stacked case (see the module docstring), judged once
    per ε its model sees: cases made by Case.with_eps share it."""
    key = (entry.id, case.eps_for(entry.model))
    if key not in case.judged:
        case.judged[key] = _judge(entry, case)
    return case.judged[key]


def _judge(entry: Entry, case: Case) -> list[AuditResult]:
    base = _base(entry)
    notes = [""] * case.count if entry.note is None else entry.note(case)
    try:
        st = case.setting(entry.model)
    except ValueError as err:
        why = (
            str(err)
            if entry.model.eps
            else (f"this document has no ε, so it is judged at ε = 0, where {err}")
        )
        reason = f"These inputs cannot decide: {why}"
        return [
            AuditResult(**base, verdict="cannot decide", reason=reason, note=note) for note in notes
        ]
    compared = _compared(entry, st, entry.formula)
    finite = compared.finite(compared.value)
    quantity = entry.quantity
    scale = st.reference(quantity)[1]
    with np.errstate(over="ignore"):
        shared = ROUNDINGS * np.finfo(np.float64).eps * (2.0 + np.log2(st.n)) * scale * st.offset
        if quantity.moved:
            shared = shared + st.difference_bound(quantity.moved, quantity.read, scale)
        bound = shared + OWN_SLACK * compared.own
    gap, error = compared.gap, compared.error
    size = scale if quantity.always_zero else compared.largest(np.abs(compared.reference))
    # Near float64's largest number the true value, its terms or the round-off they carry can
    # overflow: then there is nothing to measure a formula against.
    # (The formula's own bound may be inf, where it divides by a value its round-off may
    # have made of either sign: that is the formula's cancellation, said below, not float64's.)
    measurable = (
        compared.finite(compared.reference)
        & np.isfinite(scale)
        & np.isfinite(shared)
        & np.isfinite(size)
    )
    lost = _underflowed_cases(entry.formula, case, entry.model, compared)
    corrected, corrected_lost = None, lost
    if entry.correction is not None:
        formula = entry.correction.formula
        corrected = _compared(entry, st, formula)
        corrected_lost = _underflowed_cases(formula, case, entry.model, corrected)
    results = []
    for c in range(case.count):
        if not finite[c]:
            reason = (
                "These inputs cannot decide: the formula divides by 0 on them. Try D ≥ 3 "
                "with entries that differ."
            )
            results.append(
                AuditResult(**base, verdict="cannot decide", reason=reason, note=notes[c])
            )
            continue
        if not measurable[c]:
            results.append(
                AuditResult(**base, verdict="cannot decide", reason=BEYOND_FLOAT64, note=notes[c])
            )
            continue
        status = _status(gap[c], bound[c], size[c])
        verdict, reason = _decide(
            entry, case, c, status, gap[c], bound[c], size[c], error[c], scale[c]
        )
        if status == CANNOT_RESOLVE and _status(gap[c], shared[c], size[c]) != CANNOT_RESOLVE:
            # The true value is not 0: only the formula's own round-off hides it.
            verdict, reason = "cannot decide", _cancels(compared.own[c], size[c])
        if verdict == "wrong" and lost[c]:
            # A right formula written with σ⁻³ gives 0 at σ = 1e150: its gap is float64's.
            verdict, reason = "cannot decide", UNDERFLOWED
        numbers = {
            "values": compared.shown(compared.value, c),
            "reference_values": compared.shown(compared.reference, c),
            "error": float(error[c]),
            "error_measures": _measures(status, lost[c], size[c] <= bound[c]),
        }
        if corrected is not None:
            numbers["correction_error"] = float(corrected.error[c])
            corrected_bound = shared[c] + OWN_SLACK * corrected.own[c]
            numbers["correction_error_measures"] = _measures(
                _status(corrected.gap[c], corrected_bound, size[c]),
                corrected_lost[c],
                size[c] <= corrected_bound,
            )
        results.append(
            AuditResult(**{**base, **numbers}, verdict=verdict, reason=reason, note=notes[c])
        )
    return results


def _excess(gap: float, bound: float) -> float:
    """gap / bound; a nonzero gap against a zero bound is infinitely far off."""
    return gap / bound if bound > 0 else (np.inf if gap > 0 else 0.0)


def _status(gap: float, bound: float, size: float) -> str:
    """ln_core.verdict's rule on one case: a gap, the bound on round-off, the true value's size."""
    return decide(_excess(gap, bound), bound, size)


def _measures(status: str, lost: bool, zero: bool) -> str:
    """What a relative error on one case measures (AuditResult.error_measures), from its
    `status` (_status): round-off where the gap is within its bound on a true value that is 0
    up to round-off (zero: its size is within the bound), float64's underflow where a formula
    that underflowed misses, the formula otherwise."""
    if status == CANNOT_RESOLVE and zero:
        return ROUND_OFF
    return UNDERFLOW if status == FAIL and lost else FORMULA


def _decide(
    entry: Entry,
    case: Case,
    c: int,
    status: str,
    gap: float,
    bound: float,
    size: float,
    error: float,
    scale: float,
) -> tuple[str, str]:
    """The verdict and its reason for case c, from its `status` (_status) and the numbers of
    the module docstring."""
    excess = _excess(gap, bound)
    if status == CANNOT_RESOLVE and size > bound:
        # Not 0 up to round-off: round-off is only not small against the value.
        return "cannot decide", (
            f"These inputs cannot decide: round-off can explain {bound:.1e} here (on terms "
            f"of size {scale:.1e}), which is not small against the true value, {size:.1e}, "
            f"so a formula off by that much would match it as well. Here "
            f"{_why_zero(case, entry.model, c)}."
        )
    if status == CANNOT_RESOLVE:
        return "cannot decide", (
            f"These inputs cannot decide: the true value is 0 here up to round-off (at most "
            f"{size:.1e}, while round-off can explain {bound:.1e}, on terms of size "
            f"{scale:.1e}), so any formula that gives about 0 matches it. Here "
            f"{_why_zero(case, entry.model, c)}."
        )
    if status == PASS and entry.correction is not None:
        return "cannot decide", (
            f"These inputs cannot decide: the formula is wrong (see the mistake), yet here it "
            f"matches the true value to {error:.1e}, because it agrees whenever "
            f"{entry.correction.agrees_when}. {entry.correction.exposed_by}"
        )
    if status == PASS:
        return "correct", (
            f"The formula gives the true value to {gap:.1e} (relative error {error:.1e}), "
            f"within what round-off can explain here ({bound:.1e})."
        )
    return "wrong", (
        f"The formula misses the true value: the largest gap is {gap:.1e} on terms of size "
        f"{scale:.1e} (relative error {error:.1e}), {excess:.3g}× what round-off can explain "
        f"here ({bound:.1e})."
    )
