"""Every check the lab shows, in words: what it checks, what value is expected, and whether
this one passes.

One vocabulary everywhere: "pass", "fail", "cannot resolve" (the numbers cannot tell, e.g. a
numerical estimate drowned in round-off), and "as expected" for a value that is not 0 but
should not be (eps's doing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.gradcheck import GradientCheck

PASS, FAIL, CANNOT_RESOLVE, AS_EXPECTED = "pass", "fail", "cannot resolve", "as expected"
STATUSES = (PASS, FAIL, CANNOT_RESOLVE, AS_EXPECTED)
# A rearrangement of the same arithmetic agrees to a few hundred units in the last place.
ROUNDING_ULPS = 1000


@dataclass(frozen=True)
class Verdict:
    """checks: what is compared; expected: the value it should have; status: one of STATUSES;
    reason: why this one has that status, with its numbers."""

    checks: str
    expected: str
    status: str
    reason: str

    @property
    def passed(self) -> bool:
        return self.status in (PASS, AS_EXPECTED)

    @property
    def help(self) -> str:
        """The metric's tooltip: what it checks and what is expected."""
        return f"Checks: {self.checks}. Expected: {self.expected}."

    @property
    def sentence(self) -> str:
        """The caption under the metric: the status and why."""
        return f"{self.status.capitalize()}: {self.reason}"


def within(checks: str, error: float, tolerance: float, why_tolerance: str) -> Verdict:
    """A relative error that passes at or below `tolerance` (`why_tolerance` says why that)."""
    expected = f"at most {tolerance:.0e} ({why_tolerance})"
    if error <= tolerance:
        return Verdict(checks, expected, PASS, f"{error:.1e} is within {tolerance:.0e}.")
    return Verdict(
        checks, expected, FAIL, f"{error:.1e} is above {tolerance:.0e}: more than rounding."
    )


def numerical_agreement(checks: str, error: float, tolerance: float, dtype: str) -> Verdict:
    """An analytic gradient against central differences, which keep about half the digits."""
    why = f"central differences in {dtype} keep about half of its digits"
    return within(checks, error, tolerance, why)


def rounding_agreement(checks: str, error: float, dtype: str) -> Verdict:
    """Two computations that are the same arithmetic in another order: equal up to rounding."""
    tolerance = ROUNDING_ULPS * float(np.finfo(np.dtype(dtype)).eps)
    return within(checks, error, tolerance, f"the same arithmetic in another order, in {dtype}")


def caught(bug_error: float, tolerance: float, dtype: str) -> Verdict:
    """Whether the gradient check catches an injected bug: it should fail the check."""
    checks = "whether the gradient check notices the injected bug"
    expected = f"a dx error above {tolerance:g} (the check passes below {tolerance:g} in {dtype})"
    if bug_error > tolerance:
        reason = f"dx's error {bug_error:.1e} is above {tolerance:g}, so the check fails it."
        return Verdict(checks, expected, PASS, reason)
    reason = f"dx's error {bug_error:.1e} is within {tolerance:g}: the bug hides here."
    return Verdict(checks, expected, FAIL, reason)


def gradient_verdict(check: GradientCheck, tensor: str) -> Verdict:
    """The staged backward's tensor against central differences, in ln_core's three statuses."""
    error = check.errors["backward"][tensor]
    closed = check.errors["closed_form"][tensor]
    checks = (
        f"{tensor} from the staged backward against central differences (relative error; the "
        f"closed form's is {closed:.1e})"
    )
    expected = (
        f"at most {check.tolerance:g} (central differences in {check.dtype.name} keep about "
        "half of its digits)"
    )
    status = check.status("backward", tensor)
    if status == PASS:
        reason = f"{error:.1e} is within {check.tolerance:g}."
    elif status == CANNOT_RESOLVE:
        reason = check.advice(tensor)
    else:
        reason = f"{error:.1e} is above {check.tolerance:g}: more than rounding."
    return Verdict(checks, expected, status, reason)
