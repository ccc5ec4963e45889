"""The numbers a verdict leads with (issue 36): "off by 33.3 %", "agrees to 11 digits", from
ln_core.verdict, and the words teaching.verdicts puts first, with the reasoning after."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ln_core import forward, gradient_check
from ln_core.bugs import CAUGHT, Bug, check_bug
from ln_core.verdict import DIGITS, agreeing_digits, judge, off_by
from teaching.verdicts import caught, judged, percent


@pytest.mark.parametrize(
    ("gap", "size", "fraction", "digits"),
    [
        (1.0, 3.0, 1 / 3, 0),  # off by a third: not one digit right
        (2.4e-12, 3.0, 8e-13, 12),
        (1e-11, 1.0, 1e-11, 11),
        (0.0, 0.0, 0.0, DIGITS),  # both exactly 0: they agree exactly
        (0.0, 5.0, 0.0, DIGITS),
        (1e-300, 0.0, math.inf, 0),  # any gap on a true 0 is infinitely far off
        (1e300, 1e-300, math.inf, 0),  # no overflow warning, no NaN
        (5e-324, 1e308, 0.0, DIGITS),  # a ratio that underflows agrees to every digit
    ],
)
def test_off_by_and_agreeing_digits_account_for_zeros(gap, size, fraction, digits):
    assert off_by(gap, size) == pytest.approx(fraction)
    assert agreeing_digits(gap, size) == digits


@pytest.mark.parametrize(
    ("fraction", "said"), [(1 / 3, "33.3 %"), (0.0012345, "0.123 %"), (120.0, "120× its size")]
)
def test_percent_has_three_significant_digits(fraction, said):
    assert percent(fraction) == said


def test_a_fail_leads_with_how_far_off_it_is_and_folds_the_bound():
    verdict = judged("dx", judge([1.0, 2.0], [1.0, 3.0], 1e-12), "round-off", "Try float64.")
    assert verdict.headline == "Fail: off by 33.3 %, far beyond round-off."
    assert "1e-12" in verdict.reason and "× what round-off can explain" in verdict.reason
    assert "e+" not in verdict.headline


def test_a_pass_leads_with_the_digits_it_agrees_to():
    verdict = judged("dx", judge([1.0, 3.0], [1.0, 3.0 + 2e-11], 1e-9), "round-off", "")
    assert verdict.headline == "Pass: agrees to 11 digits, within round-off."
    exact = judged("dx", judge([1.0, 3.0], [1.0, 3.0], 1e-9), "round-off", "")
    assert exact.headline == "Pass: agrees exactly, within round-off."


def test_a_cannot_resolve_leads_with_what_would_resolve_it():
    verdict = judged("dx", judge([1e-9, 0.0], [0.0, 0.0], 1e-8), "round-off", "Try float64.")
    assert verdict.headline.startswith("Cannot resolve: the true value is exactly 0")
    assert verdict.headline.endswith("Try float64.")


def test_a_caught_bug_says_how_far_off_the_buggy_dx_is():
    x, gamma = np.array([0.3, -1.2, 2.0, 0.7]), np.array([1.5, 0.5, 2.0, 1.0])
    dout = np.array([1.0, -2.0, 0.5, 3.0])
    cache = forward(x, gamma, np.zeros(4), 1e-5)
    check = gradient_check(x, gamma, np.zeros(4), dout, 1e-5)
    result = check_bug(check, dout, cache, Bug.FORGET_GAMMA)
    verdict = caught(result, "float64")
    assert result.outcome == CAUGHT
    assert verdict.headline.startswith("Caught: the buggy dx is off by ")
    assert " %" in verdict.headline or "its size" in verdict.headline
