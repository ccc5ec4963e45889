"""Judging one entry on one case: correct, wrong, or "these inputs cannot decide".

Everything is judged in float64 against the quantity the formula claims to be. With `scale`
the natural size of that quantity's terms and tol = RTOL * scale:

- the formula agrees when max|formula - reference| <= tol;
- a reference at most ZERO * tol in size is round-off (0 in exact arithmetic, e.g. dx at D = 2
  without ε): a formula that also gives about 0 is not evidence either way -> cannot decide;
- a wrong formula (one with a correction) that agrees on these inputs -> cannot decide, with
  the reason it agrees here and the inputs that would expose it;
- otherwise agreement is 'correct' and disagreement 'wrong'.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit.model import AuditResult, Entry, Formula, Model
from ln_core.audit.setting import Case, Setting
from ln_core.gradcheck import rel_error

RTOL = 1e-9
RTOL_NUMERICAL = 1e-7  # a central difference in float64 is good to about 1e-10 of its scale
ZERO = 100.0
SHOWN = 6  # how many numbers of the formula and the reference a result carries


def _why_zero(case: Case, model: Model) -> str:
    """What makes the reference vanish on these inputs, and what to try instead."""
    batch = model.axis == "batch"
    group = "the batch" if batch else "each vector"
    size = case.x.shape[0] if batch else case.d
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
    dout = case.dout
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
        reasons.append("the true value happens to be 0 here")
    return f"{'; '.join(reasons)}. Try {try_} with a random upstream gradient"


def _numbers(a: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in a.reshape(-1)[:SHOWN])


def _result(entry: Entry, case: Case, **judged) -> AuditResult:
    correction = entry.correction
    note = ""
    if entry.note is not None:
        note = entry.note(case)
    base = {
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
        "note": note,
        "values": (),
        "reference_values": (),
        "error": None,
        "correction_error": None,
    }
    return AuditResult(**{**base, **judged})


def _undefined(entry: Entry, case: Case, err: ValueError) -> AuditResult:
    if entry.model.eps:
        why = str(err)
    else:
        why = f"this document has no ε, so it is judged at ε = 0, where {err}"
    return _result(
        entry,
        case,
        verdict="cannot decide",
        reason=f"These inputs cannot decide: {why}",
    )


def _compared(entry: Entry, st: Setting, formula: Formula) -> tuple[np.ndarray, np.ndarray]:
    """`formula` (the entry's or its correction) and the entry's reference, on the entries the
    formula speaks about; both flat."""
    with np.errstate(all="ignore"):
        value = np.asarray(formula(st), dtype=np.float64)
    value, reference = np.broadcast_arrays(value, st.reference(entry.quantity)[0])
    if entry.where is None:
        return value.reshape(-1), reference.reshape(-1)
    where = np.broadcast_to(entry.where(st), value.shape)
    return value[where], reference[where]


def judge(entry: Entry, case: Case) -> AuditResult:
    """The verdict of one entry on one case (see the module docstring), judged once per ε its
    model sees: cases made by Case.with_eps share it."""
    key = (entry.id, case.eps_for(entry.model))
    if key not in case.judged:
        case.judged[key] = _judge(entry, case)
    return case.judged[key]


def _judge(entry: Entry, case: Case) -> AuditResult:
    try:
        st = case.setting(entry.model)
    except ValueError as err:
        return _undefined(entry, case, err)
    value, reference = _compared(entry, st, entry.formula)
    if not np.all(np.isfinite(value)):
        return _result(
            entry,
            case,
            verdict="cannot decide",
            reason="These inputs cannot decide: the formula divides by 0 on them. Try D ≥ 3 "
            "with entries that differ.",
        )
    shown = {"values": _numbers(value), "reference_values": _numbers(reference)}
    quantity = entry.quantity
    scale = st.reference(quantity)[1]
    tol = (RTOL_NUMERICAL if quantity.numerical else RTOL) * scale
    gap = float(np.max(np.abs(value - reference)))
    size = float(np.max(np.abs(reference)))
    error = rel_error(value, reference)
    correction_error = None
    if entry.correction is not None:
        correction_error = rel_error(*_compared(entry, st, entry.correction.formula))
    judged = {**shown, "error": error, "correction_error": correction_error}
    agrees = gap <= tol
    if agrees and size <= ZERO * tol and not quantity.always_zero:
        reason = (
            f"These inputs cannot decide: the true value is 0 here up to round-off (at most "
            f"{size:.1e}, against terms of size {scale:.1e}), so any formula that "
            f"gives about 0 matches it. Here {_why_zero(case, entry.model)}."
        )
        return _result(entry, case, verdict="cannot decide", reason=reason, **judged)
    if agrees and entry.correction is not None:
        reason = (
            f"These inputs cannot decide: the formula is wrong (see the mistake), yet here it "
            f"matches the true value to {error:.1e}, because it agrees whenever "
            f"{entry.correction.agrees_when}. {entry.correction.exposed_by}"
        )
        return _result(entry, case, verdict="cannot decide", reason=reason, **judged)
    if agrees:
        reason = f"Matches {quantity.how} to {error:.1e}, which is round-off."
        return _result(entry, case, verdict="correct", reason=reason, **judged)
    reason = (
        f"Differs from {quantity.how}: the largest gap is {gap:.1e} on terms of size "
        f"{scale:.1e} (relative error {error:.1e})."
    )
    return _result(entry, case, verdict="wrong", reason=reason, **judged)
