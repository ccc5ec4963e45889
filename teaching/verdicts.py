"""Every check the lab shows, in words: what it checks, what value is expected, and whether
this one passes.

One rule decides (ln_core.verdict): a measured gap against a bound on what round-off and
truncation explain. One vocabulary says it: "pass", "fail", "cannot resolve" (right and wrong
coincide on these inputs, with the reason and what would resolve it), "as expected" for a value
that is not 0 but should not be (eps's doing), and for an injected bug "caught", "missed" or
"cannot tell here" (the bug changes dx by less than the check could separate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.bugs import CANNOT_TELL, CAUGHT, MISSED, SEPARATION, BugCheck
from ln_core.forward import Cache
from ln_core.gradcheck import GradientCheck
from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS, Judgement

AS_EXPECTED = "as expected"
STATUSES = (PASS, FAIL, CANNOT_RESOLVE, AS_EXPECTED, CAUGHT, MISSED, CANNOT_TELL)
# A common offset this many standard deviations away costs a central difference its digits.
LARGE_OFFSET = 1e3


@dataclass(frozen=True)
class Verdict:
    """checks: what is compared; expected: the value it should have; status: one of STATUSES;
    outcome: what came out, in plain words and a number a student knows ("off by 33 %, far
    beyond round-off", "agrees to 11 digits"), shown first; reason: why we can say so, with the
    numbers behind it, shown one click away."""

    checks: str
    expected: str
    status: str
    outcome: str
    reason: str

    @property
    def passed(self) -> bool:
        return self.status in (PASS, AS_EXPECTED, CAUGHT)

    @property
    def help(self) -> str:
        """The metric's tooltip: what it checks and what is expected."""
        return f"Checks: {self.checks}. Expected: {self.expected}."

    @property
    def headline(self) -> str:
        """What a student reads first: the status and the outcome."""
        return f"{self.status[:1].upper()}{self.status[1:]}: {self.outcome}"

    @property
    def sentence(self) -> str:
        """The headline and the reason in one line, for a text with no fold (a download)."""
        return f"{self.headline} Why we can say so: {self.reason}"


def number(value: float) -> str:
    """A number in a sentence: 3 significant digits (tables and tooltips keep every digit)."""
    return f"{value:.3g}"


def percent(fraction: float) -> str:
    """A relative error as a student reads it: "33.3 %", "1.2e-05 %", or "120× its size"."""
    if fraction >= 10:
        return f"{number(fraction)}× its size"
    return f"{number(100 * fraction)} %"


def beyond(excess: float) -> str:
    """How far beyond round-off a failing gap is, in words a student weighs at a glance."""
    if excess >= 100:
        return "far beyond round-off"
    return f"{number(excess)}× what round-off can explain"


def agrees(judgement: Judgement) -> str:
    """How closely a passing value agrees: "agrees exactly" or "agrees to 11 digits"."""
    if judgement.gap == 0:
        return "agrees exactly"
    digits = judgement.digits
    return f"agrees to {digits} digit{'s' if digits != 1 else ''}"


RULE = (
    "Each tensor's largest gap to central differences is compared with a bound on what "
    "round-off and truncation can explain here (the offset of x, the step h and the dtype "
    "set it): above the bound it fails, with certainty; within it, it passes when the bound "
    "is small against the gradient itself, and otherwise it is reported as cannot resolve, "
    "because a right and a wrong gradient would look the same."
)


def most_telling(judgements: dict[str, Judgement]) -> str:
    """The name whose judgement speaks for all of them: a fail first, then a cannot resolve,
    then the one nearest its bound."""
    rank = {FAIL: 2, CANNOT_RESOLVE: 1, PASS: 0}
    return max(judgements, key=lambda n: (rank[judgements[n].status], judgements[n].excess))


def check_headline(check: GradientCheck) -> str:
    """The gradient check's one-line summary over both methods and every tensor."""
    if not check.passed:
        return "The staged backward FAILS"
    if check.unresolved:
        return f"The staged backward does not fail; {', '.join(check.unresolved)}: cannot resolve"
    return "The staged backward passes"


def _group(cache: Cache) -> tuple[str, str]:
    """What one group of the normalization is called: its size, and what it is."""
    if cache.axis == (-1,):
        return "D", "vector"
    if len(cache.axis) == 2:
        return "L x D", "sequence"
    return "N", "feature"  # BatchNorm: a feature's N values are one group


def resolving_inputs(cache: Cache, dout: np.ndarray) -> str:
    """Inputs that would let a check resolve what these cannot, from what these are."""
    size, group = _group(cache)
    if cache.n == 1:
        # Nothing else helps: one value minus its own mean is exactly 0.
        return (
            f"Try {size} ≥ 3: with {size} = 1 every {group} normalizes to exactly 0 whatever "
            "x, eps or gamma are, so dx and dgamma are exactly 0."
        )
    tries = []
    if cache.dtype == np.float32:
        tries.append("float64")
    if cache.n == 2:
        tries.append(
            f"{size} ≥ 3 (with {size} = 2 every {group} normalizes to about ±1 whatever x is)"
        )
    # Only where x - mean has digits to lose: a constant vector's is exactly 0, however far
    # from 0 it sits, and a smaller offset would not change that.
    far = np.max(np.abs(cache.x), axis=cache.axis, keepdims=True) * cache.inv_sqrt_sve
    spread = np.any(cache.x_sm != 0, axis=cache.axis, keepdims=True)
    if np.any((far > LARGE_OFFSET) & spread):
        tries.append("x with a smaller common offset (x − mean cancels its leading digits)")
    if cache.eps < 1e-3:
        tries.append("eps ≥ 1e-3")
    rows = np.asarray(dout).reshape(-1, cache.x.shape[-1])
    if not np.any(rows) or np.all(rows == rows[:, :1]):
        tries.append("a random upstream gradient (a uniform one makes many gradients exactly 0)")
    tries.append("a random gamma")
    return f"Try {', or '.join(tries)}."


def underflow_reason(dtype: np.dtype) -> str:
    """Why nothing can be said where a rounding underflowed (ln_core.validation.underflowed)."""
    dtype = np.dtype(dtype)
    wider = " or use float64" if dtype == np.float32 else ""
    return (
        f"some values computed here fall below {dtype.name}'s smallest normal number, "
        f"{number(float(np.finfo(dtype).tiny))}, where round-off is no longer a small fraction of "
        "each value, so no bound on it holds and a wrong value could look like a right one. "
        f"Scale dout up{wider}: every gradient scales with dout."
    )


def judgement_outcome(judgement: Judgement, hint: str) -> str:
    """A judgement's outcome in plain words, first; for a cannot resolve, what would resolve it."""
    j = judgement
    if j.status == FAIL:
        return f"off by {percent(j.off_by)}, {beyond(j.excess)}."
    if j.status == CANNOT_RESOLVE and j.underflow is not None:
        dtype = np.dtype(j.underflow)
        wider = " or use float64" if dtype == np.float32 else ""
        return (
            f"values here fall below {dtype.name}'s smallest normal number, where round-off has "
            f"no bound. Scale dout up{wider}."
        )
    if j.status == CANNOT_RESOLVE:
        if j.size == 0:
            return f"the true value is exactly 0, so a wrong value would look the same. {hint}"
        return (
            f"round-off here could be {percent(j.resolution)} of the value, so a wrong value "
            f"would look the same. {hint}"
        )
    return f"{agrees(j)}, within round-off."


def judgement_reason(judgement: Judgement, hint: str) -> str:
    """Why a judgement has its status, with its numbers."""
    j = judgement
    if j.status == FAIL:
        return (
            f"the gap {number(j.gap)} is {number(j.excess)}× what round-off can explain there "
            f"({number(j.bound)}): more than rounding, so the value is wrong."
        )
    if j.status == CANNOT_RESOLVE and j.underflow is not None:
        return underflow_reason(j.underflow)
    if j.status == CANNOT_RESOLVE:
        size = (
            "the value it is compared with is exactly 0"
            if j.size == 0
            else f"the value it is compared with is only about {number(j.size)}"
        )
        return (
            f"the gap {number(j.gap)} is within what round-off can explain ({number(j.bound)}), "
            f"but {size}, so a wrong value would fit within that bound just as well. {hint}"
        )
    return (
        f"the gap {number(j.gap)} is within what round-off can explain ({number(j.bound)}), "
        f"which is small against the value's size {number(j.size)} (off by "
        f"{percent(j.off_by)})."
    )


def judged(checks: str, judgement: Judgement, why_bound: str, hint: str) -> Verdict:
    """A Verdict from ln_core.verdict's rule; why_bound: what the bound accounts for."""
    expected = f"a gap within what {why_bound} can explain"
    return Verdict(
        checks,
        expected,
        judgement.status,
        judgement_outcome(judgement, hint),
        judgement_reason(judgement, hint),
    )


def combined(verdicts: dict[str, Verdict], checks: str, all_hold: str, hint: str) -> Verdict:
    """Several named verdicts as one, for the top of a page: a fail first (with how far off),
    then what cannot be resolved (with what would resolve it); all_hold: the outcome when every
    one passes. The reason lists each verdict's headline."""
    failed = [name for name, v in verdicts.items() if v.status == FAIL]
    unresolved = [name for name, v in verdicts.items() if v.status == CANNOT_RESOLVE]
    if failed:
        status = FAIL
        outcome = f"{', '.join(failed)}: {verdicts[failed[0]].outcome}"
    elif unresolved:
        status = CANNOT_RESOLVE
        outcome = f"nothing fails, but {', '.join(unresolved)} cannot be resolved here. {hint}"
    else:
        status, outcome = PASS, all_hold
    reason = " ".join(f"{name}: {v.headline}" for name, v in verdicts.items())
    return Verdict(checks, "each of them as expected", status, outcome, reason)


def numerical_agreement(checks: str, judgement: Judgement, dtype: str, hint: str) -> Verdict:
    """An analytic gradient against central differences."""
    why = f"the central difference's round-off and truncation in {dtype} and the value's rounding"
    return judged(checks, judgement, why, hint)


def rounding_agreement(checks: str, judgement: Judgement, dtype: str, hint: str) -> Verdict:
    """Two computations that are the same arithmetic in another order: equal up to rounding."""
    return judged(
        checks, judgement, f"rounding the same arithmetic in another order in {dtype}", hint
    )


def gradient_verdict(check: GradientCheck, tensor: str, hint: str) -> Verdict:
    """The staged backward's tensor against central differences; hint: `resolving_inputs`."""
    judgement = check.judgement("backward", tensor)
    closed = check.judgement("closed_form", tensor)
    checks = (
        f"{tensor} from the staged backward against central differences (the closed form's "
        f"gap is {closed.gap:.1e})"
    )
    if check.working is check.numerical:
        return numerical_agreement(checks, judgement, check.dtype.name, hint)
    why = (
        "the float64 central difference's round-off and truncation and the "
        f"{check.dtype.name} value's own rounding"
    )
    return judged(checks, judgement, why, hint)


def precision_lesson(check: GradientCheck) -> str:
    """Why the reference differences ran in float64, and what float32 differences would say."""
    dtype = check.dtype.name
    apart = ", ".join(f"{t} off by {percent(e)}" for t, e in check.working_errors.items())
    return (
        f"The central differences above run in float64 on these same {dtype} inputs (step "
        f"{number(check.h)}), as PyTorch's gradcheck advises: far more precise than the "
        f"{dtype} gradients they check. The same differences in {dtype} (step "
        f"{number(check.working_h)}) would be {apart}: the precision {dtype} loses, and why "
        f"a {dtype} reference could not tell a right gradient from a slightly wrong one."
    )


def caught(result: BugCheck, dtype: str) -> Verdict:
    """Whether the gradient check catches an injected bug, by the check's own rule."""
    checks = "whether the gradient check notices the injected bug (it should fail the buggy dx)"
    expected = (
        f"a gap between the buggy dx and central differences above what round-off explains in "
        f"{dtype}"
    )
    j, change = result.judgement, result.change
    if result.outcome == CAUGHT:
        outcome = f"the buggy dx is off by {percent(j.off_by)}, {beyond(j.excess)}."
        reason = (
            f"the buggy dx sits {number(j.gap)} from central differences, {number(j.excess)}× "
            f"what round-off can explain there ({number(j.bound)}): the check fails it."
        )
    elif result.outcome == CANNOT_TELL:
        outcome = "the bug changes dx by less than this check can tell apart on these inputs."
        if change.status != FAIL:
            reason = (
                f"the bug changes dx by at most {number(change.gap)}, within what round-off can "
                f"explain ({number(change.bound)}): here it changes nothing measurable, so no "
                "check could tell the buggy dx from the right one."
            )
        elif not result.separable:
            reason = (
                f"the bug changes dx by at most {number(change.excess)}× what round-off can "
                f"explain ({number(change.bound)}); the check cannot separate values closer than "
                f"{SEPARATION:g}× that, so here it can neither catch nor miss the bug."
            )
        else:
            reason = (
                "the check cannot resolve dx on these inputs, so it can neither catch nor "
                "miss the bug."
            )
    else:
        outcome = (
            f"the bug changes dx by {percent(change.off_by)}, yet the check passes the buggy dx."
        )
        reason = (
            f"the bug changes dx by {number(change.gap)}, more than round-off explains, yet the "
            f"buggy dx sits within the check's bound ({number(j.bound)}) of central differences."
        )
    return Verdict(checks, expected, result.outcome, outcome, reason)
