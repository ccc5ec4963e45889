"""The one rule (ln_core.verdict) and its words (teaching.verdicts)."""

from __future__ import annotations

import numpy as np
import pytest

from ln_core import forward, gradient_check
from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS, decide, judge, rel_error
from teaching.verdicts import gradient_verdict, most_telling, resolving_inputs


@pytest.mark.parametrize(
    ("candidate", "reference", "bound", "status"),
    [
        ([1.0, 2.0], [1.0, 2.0 + 1e-9], 1e-8, PASS),  # within round-off, round-off is small
        ([1.0, 2.0], [1.0, 2.1], 1e-8, FAIL),  # far above round-off: certain
        ([1e-9, 0.0], [0.0, 0.0], 1e-8, CANNOT_RESOLVE),  # the true value is 0
        ([1e-9, 0.0], [2e-9, 0.0], 1e-8, CANNOT_RESOLVE),  # the true value is below the bound
        ([0.0, 0.0], [0.0, 0.0], 0.0, CANNOT_RESOLVE),  # an exact 0 says nothing either way
        ([3e-9, 0.0], [0.0, 0.0], 1e-9, FAIL),  # even a tiny value fails above the bound
    ],
)
def test_the_rule(candidate, reference, bound, status):
    assert judge(candidate, reference, bound).status == status


def test_a_per_entry_bound_is_judged_entry_by_entry():
    # Entry 0 has a loose bound, entry 1 a tight one: a gap of 1e-6 fails only at entry 1.
    bound = np.array([1.0, 1e-9])
    assert judge([1.0, 2.0 + 1e-6], [1.0, 2.0], bound).status == FAIL
    result = judge([1.0 + 1e-6, 2.0], [1.0, 2.0], bound)
    assert result.status == CANNOT_RESOLVE  # a bound of 1 is not small against a size of 2
    failed = judge([1.0, 2.0 + 1e-6], [1.0, 2.0], bound)
    assert failed.bound == 1e-9 and failed.excess == pytest.approx(1e3)


def test_decide_orders_fail_before_cannot_resolve():
    assert decide(excess=2.0, bound=1.0, size=0.0) == FAIL
    assert decide(excess=0.5, bound=1.0, size=5.0) == CANNOT_RESOLVE
    assert decide(excess=0.5, bound=1.0, size=50.0) == PASS


def test_rel_error_has_no_floor_and_zero_over_zero_is_zero():
    assert rel_error([0.0], [0.0]) == 0.0
    assert rel_error([1e-300], [-1e-300]) == 1.0
    assert rel_error([2e-19, 1e-19], [1e-19, 1e-19]) == pytest.approx(1 / 3)


def test_cannot_resolve_says_why_and_what_would_resolve_it():
    x, dout = np.array([[0.0, 3.0]]), np.array([[1.0, -2.0]])
    check = gradient_check(x, [1.0, 1.0], [0.0, 0.0], dout, 0.0)
    hint = resolving_inputs(forward(x, [1.0, 1.0], [0.0, 0.0], 0.0), dout)
    verdict = gradient_verdict(check, "dx", hint)
    assert verdict.status == CANNOT_RESOLVE
    assert "a wrong value would fit within that bound just as well" in verdict.reason
    assert "D ≥ 3" in verdict.reason and "eps ≥ 1e-3" in verdict.reason


def test_a_fail_says_how_far_above_round_off():
    x = np.array([[0.3, 3.0, -1.0, 2.0]])
    dout = np.array([[1.0, -2.0, 0.5, 0.0]])
    check = gradient_check(x, None, None, dout, 1e-3)
    wrong = check.judgement("backward", "dx", 2.0 * check.analytic.dx)
    assert wrong.status == FAIL and wrong.excess > 1e3


def test_most_telling_prefers_a_fail_then_a_cannot_resolve():
    judged = {
        "dx": judge([1.0], [1.0], 1e-9),
        "dgamma": judge([0.0], [0.0], 1e-9),
        "dbeta": judge([1.0], [1.0 + 5e-10], 1e-9),
    }
    assert most_telling(judged) == "dgamma"
    judged["dbeta"] = judge([1.0], [2.0], 1e-9)
    assert most_telling(judged) == "dbeta"
