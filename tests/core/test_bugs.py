"""Every known bug fails a float64 gradient check that the correct backward passes."""

from __future__ import annotations

import numpy as np
import pytest
from kit import teaching_case

from ln_core import backward, forward, gradient_check, jacobian
from ln_core.bugs import (
    CANNOT_TELL,
    CAUGHT,
    Bug,
    buggy_backward,
    check_bug,
    jacobian_from_backward,
    numerical_jacobian,
)
from teaching.verdicts import caught


def _bug_check(case, eps: float, bug: Bug):
    """The gradient check of the case, and the bug put through it."""
    check = gradient_check(case.x, case.gamma, case.beta, case.dout, eps)
    cache = forward(case.x, case.gamma, case.beta, eps)
    return check, check_bug(check, case.dout, cache, bug)


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_correct_backward_passes(seed):
    case = teaching_case(seed)
    check = gradient_check(case.x, case.gamma, case.beta, case.dout, 1e-5)
    assert all(check.status(m, t) == "pass" for m in check.errors for t in check.tensors)


@pytest.mark.parametrize("bug", list(Bug))
@pytest.mark.parametrize("seed", [0, 2, 3])
def test_every_bug_is_caught(bug, seed):
    _, result = _bug_check(teaching_case(seed), 1e-5, bug)
    assert result.outcome == CAUGHT, (bug, result.judgement)
    assert result.judgement.status == "fail"


@pytest.mark.parametrize("bug", [b for b in Bug if b is not Bug.EPS_AFTER_SQRT])
def test_structural_bugs_are_far_off(bug):
    _, result = _bug_check(teaching_case(0), 1e-5, bug)
    assert result.judgement.relative > 1e-2, (bug, result.judgement)
    assert result.judgement.excess > 1e3


def test_eps_after_sqrt_is_clearer_at_larger_eps():
    # At eps = 1e-5 the buggy dx is off by about 1e-6 relative; with eps = 1e-3 by about 1e-4,
    # far above what round-off explains in float64.
    small = _bug_check(teaching_case(0), 1e-5, Bug.EPS_AFTER_SQRT)[1].judgement
    large = _bug_check(teaching_case(0), 1e-3, Bug.EPS_AFTER_SQRT)[1].judgement
    assert small.relative < 1e-5 < large.relative
    assert large.excess > 10 * small.excess > 10
    assert Bug.EPS_AFTER_SQRT.caveat is not None


@pytest.mark.parametrize(
    ("bug", "x", "gamma", "eps"),
    [
        # At eps = 0 the two scales are the same number: the bug is the identical formula.
        (Bug.EPS_AFTER_SQRT, [[0.0, 3.0], [1.0, -1.0]], [1.5, 0.5], 0.0),
        (Bug.EPS_AFTER_SQRT, [[0.3, 3.0, -1.0, 2.0]], [1.5, 0.5, 1.0, -2.0], 0.0),
        # With gamma = 1 forgetting it changes nothing.
        (Bug.FORGET_GAMMA, [[0.3, 3.0, -1.0, 2.0]], [1.0, 1.0, 1.0, 1.0], 1e-5),
    ],
)
def test_a_bug_that_changes_nothing_cannot_be_told(bug, x, gamma, eps):
    """Issue 19: `?d=2&eps=0&bug=eps_after_sqrt` said "caught: yes" for an identical formula."""
    x = np.asarray(x)
    dout = np.linspace(-1.0, 2.0, x.size).reshape(x.shape)
    check = gradient_check(x, gamma, np.zeros(x.shape[-1]), dout, eps)
    result = check_bug(check, dout, forward(x, gamma, np.zeros(x.shape[-1]), eps), bug)
    assert result.outcome == CANNOT_TELL
    assert result.change.status != "fail"


def test_a_bug_within_twice_the_bound_is_not_called_missed():
    """unbiased_variance, D = 3, eps = 10, x ~ 1e-4: the bug moves dx by 8.50e-11 against the
    check's bound of 8.46e-11 (1.004×). The check passes anything within its bound of central
    differences, themselves within it of the true dx, so it cannot separate values closer than
    twice the bound: "missed" claimed too much."""
    x = np.array([1.0279864778554905e-04, -1.2244070791714774e-05, -2.2246190732891436e-05])
    beta = np.array([-0.24164534604106783, 0.4119992888359287, 0.546849466184004])
    dout = np.array([1.4149963476277407, -1.2307601025877526, -1.003333681333207])
    gamma = np.ones(3)
    check = gradient_check(x, gamma, beta, dout, 10.0)
    result = check_bug(check, dout, forward(x, gamma, beta, 10.0), Bug.UNBIASED_VARIANCE)
    assert result.change.status == "fail" and result.change.excess < 2
    assert result.outcome == CANNOT_TELL
    assert "cannot separate" in caught(result, "float64").reason


@pytest.mark.parametrize(
    ("dtype", "scale", "upstream"),
    [(np.float32, 1e15, 1.0), (np.float64, 1e19, 1.0), (np.float64, 1.0, 1e-19)],
)
def test_tiny_gradients_do_not_hide_a_bug(dtype, scale, upstream):
    """Issue 19: x ~ 1e15 in float32 (or 1e19, or dout ~ 1e-19, in float64) made every dx tiny,
    and the relative error's absolute floor hid mean_path_sign, 100 % off."""
    case = teaching_case(0)
    x = (scale * case.x).astype(dtype)
    dout = upstream * case.dout
    check = gradient_check(x, case.gamma, case.beta, dout, 1e-5)
    result = check_bug(check, dout, forward(x, case.gamma, case.beta, 1e-5), Bug.MEAN_PATH_SIGN)
    assert result.outcome == CAUGHT, result.judgement
    assert result.judgement.relative > 0.1


@pytest.mark.parametrize("bug", list(Bug))
def test_bugs_only_break_dx(bug):
    case = teaching_case(1, (2, 3, 5))
    cache = forward(case.x, case.gamma, case.beta)
    broken, correct = buggy_backward(case.dout, cache, bug), backward(case.dout, cache)
    np.testing.assert_allclose(broken.dgamma, correct.dgamma, rtol=1e-12)
    np.testing.assert_allclose(broken.dbeta, correct.dbeta, rtol=1e-12)
    assert broken.dx.shape == case.x.shape


@pytest.mark.parametrize("bug", list(Bug))
def test_descriptions_are_one_line(bug):
    assert bug.description and "\n" not in bug.description


def test_bug_can_be_named_by_its_value():
    case = teaching_case(4)
    cache = forward(case.x, case.gamma, case.beta)
    by_name = buggy_backward(case.dout, cache, "forget_gamma")
    np.testing.assert_array_equal(by_name.dx, buggy_backward(case.dout, cache, Bug.FORGET_GAMMA).dx)
    with pytest.raises(ValueError, match="Unknown bug"):
        buggy_backward(case.dout, cache, "off_by_one")


def test_unbiased_variance_needs_two_entries():
    cache = forward(np.array([[2.0]]), np.ones(1), np.zeros(1), eps=1e-3)
    with pytest.raises(ValueError, match="D - 1"):
        buggy_backward(np.ones((1, 1)), cache, Bug.UNBIASED_VARIANCE)


def test_float32_stays_float32():
    case = teaching_case(5)
    cache = forward(case.x.astype(np.float32), case.gamma, case.beta)
    assert buggy_backward(case.dout, cache, Bug.MEAN_PATH_SIGN).dx.dtype == np.float32


@pytest.mark.parametrize("eps", [1e-5, 0.0])
def test_the_three_jacobians_agree_for_the_correct_backward(eps):
    case = teaching_case(6, (7,))
    from_backward = jacobian_from_backward(backward, case.x, case.gamma, eps)
    np.testing.assert_allclose(from_backward, jacobian(case.x, case.gamma, eps), atol=1e-14)
    numerical = numerical_jacobian(case.x, case.gamma, eps)
    assert np.max(np.abs(from_backward - numerical)) < 1e-8


@pytest.mark.parametrize("bug", list(Bug))
def test_buggy_jacobian_differs_from_the_numerical_one(bug):
    case = teaching_case(7, (6,))
    buggy = jacobian_from_backward(lambda d, c: buggy_backward(d, c, bug), case.x, case.gamma)
    difference = buggy - numerical_jacobian(case.x, case.gamma)
    assert np.max(np.abs(difference)) > 1e-7, bug


def test_jacobian_helpers_need_one_vector():
    with pytest.raises(ValueError, match="one vector"):
        numerical_jacobian(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match="one vector"):
        jacobian_from_backward(backward, np.ones((2, 3)), np.ones(3))
