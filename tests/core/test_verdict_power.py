"""Issue 37: verdicts with power. Each example of the issue, on the inputs a student sees (the
presets, the seeded dout of ui.session.state), and a property in both directions: on ordinary
inputs a correct gradient passes and one clearly wrong (by 5 % or more, where a central
difference in the working dtype can tell) fails, in float32 as in float64.

The reference differences run in float64 of the same inputs (ln_core.gradcheck), so a float32
check is no longer limited by float32 differences' few digits.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.longdouble_ref import node_reference, reference
from bench.verdict_sweep import POWER, Inputs, exact_residual, power_cases
from ln_core import (
    audit,
    backward,
    check_node,
    default_h,
    forward,
    gradient_check,
    jacobian_facts,
    make_sublayer,
    numerical_gradients,
    residual_backward,
    residual_forward,
    residual_numerical_grads,
)
from ln_core.audit import FORMULA
from ln_core.bugs import CAUGHT, Bug, check_bug
from ln_core.jacobian_facts import facts_of
from ln_core.node_check import rounding_bound
from ln_core.residual_check import residual_check
from ln_core.verdict import judge
from teaching.presets import make_example
from teaching.upstream import one_hot
from teaching.verdicts import caught, resolving_inputs

OFFSET = "Large common offset (about 2000)"
F32 = np.float32


def _inputs(preset: str, shape: tuple[int, ...], upstream: str = "random", seed: int = 0):
    """The preset's x, gamma, beta and the page's dout (seeded as ui.session.state seeds it),
    in float32."""
    example = make_example(preset, shape, seed)
    if upstream == "random":
        dout = np.random.default_rng(seed + 1).standard_normal(shape)
    elif upstream == "ones":
        dout = np.ones(shape)
    else:
        dout = one_hot(shape, 0)
    return [a.astype(F32) for a in (example.x, example.gamma, example.beta, dout)]


def test_large_common_offset_3x8_float32_passes_dx_and_fails_dx_times_1_1():
    """Was: the correct dx "cannot resolve" (bound 0.58 against a gap of 5.7e-3), and dx x 1.1
    the same. A float32 central difference is within 0.3 % of the truth there."""
    x, gamma, beta, dout = _inputs(OFFSET, (3, 8))
    check = gradient_check(x, gamma, beta, dout, 1e-5)
    for tensor in check.tensors:
        assert check.status("backward", tensor) == "pass", (tensor, check.resolution)
        assert check.status("closed_form", tensor) == "pass", tensor
    wrong = check.judgement("backward", "dx", check.analytic.dx * F32(1.1))
    assert wrong.status == "fail"
    # The float32 differences stay beside it, as the lesson on precision.
    assert check.working.dx.dtype == F32
    assert check.numerical.dx.dtype == np.float64
    assert 1e-5 < check.working_errors["dx"] < 1e-2


def test_forgotten_gamma_on_a_large_common_offset_is_caught():
    """Was: passed, 7.45 % off (Large common offset, (3, 32), one-hot dout, seed 1)."""
    x, gamma, beta, dout = _inputs(OFFSET, (3, 32), "one_hot", seed=1)
    check = gradient_check(x, gamma, beta, dout, 1e-5)
    result = check_bug(check, dout, forward(x, gamma, beta, 1e-5), Bug.FORGET_GAMMA)
    assert result.outcome == CAUGHT, result.judgement


def test_forgotten_gamma_on_a_constant_vector_is_caught_not_called_unmeasurable():
    """Was: "changes nothing measurable, so no check could tell" where the bug changes dx by
    100 % (Constant vector, float32, (3, 64), dout all ones): x - mean is exactly 0 there, so
    no offset's rounding enters the bound."""
    x, gamma, beta, dout = _inputs("Constant vector", (3, 64), "ones")
    check = gradient_check(x, gamma, beta, dout, 1e-5)
    assert check.status("backward", "dx") == "pass"
    result = check_bug(check, dout, forward(x, gamma, beta, 1e-5), Bug.FORGET_GAMMA)
    assert result.outcome == CAUGHT
    assert "no check could tell" not in caught(result, "float32").reason


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    d=st.integers(3, 32),
    dtype=st.sampled_from([np.float32, np.float64]),
    offset=st.sampled_from([0.0, 1.0, 10.0, 100.0]),
    scale=st.sampled_from([1e-2, 1.0, 30.0]),
    factor=st.sampled_from([0.5, 0.9, 0.95, 1.05, 1.1, 2.0, -1.0]),
)
def test_ordinary_inputs_a_correct_dx_passes_and_a_clearly_wrong_one_fails(
    seed, d, dtype, offset, scale, factor
):
    rng = np.random.default_rng(seed)
    x = (offset + scale * rng.standard_normal((2, d))).astype(dtype)
    gamma = (1 + 0.5 * rng.standard_normal(d)).astype(dtype)
    beta = (0.5 * rng.standard_normal(d)).astype(dtype)
    dout = rng.standard_normal((2, d)).astype(dtype)
    check = gradient_check(x, gamma, beta, dout, 1e-5)
    assert check.passed, check.errors
    exact = reference(x, gamma, beta, dout, float(dtype(1e-5)))["dx"]
    cache = forward(x, gamma, beta, 1e-5)
    working = numerical_gradients(x, gamma, beta, dout, 1e-5, default_h(cache)).dx
    wrong = check.analytic.dx * dtype(factor)
    off = float(np.max(np.abs(wrong - exact)))
    telling = off > 3 * float(np.max(np.abs(working - exact)))
    if telling and off >= 0.05 * float(np.max(np.abs(exact))):
        assert check.judgement("backward", "dx", wrong).status == "fail"


def test_residual_block_on_one_large_outlier_resolves_dx_in_float32():
    """Was: dx "cannot resolve" with a bound 10x the value ("One large outlier", (3, 3),
    float32), where a float32 central difference is within 2.2e-4 of the truth; dx x 1.1 was
    not caught."""
    x, gamma, beta, dout = _inputs("One large outlier", (3, 3))
    sublayer = make_sublayer(3, 0, dtype=F32)
    cache = residual_forward(x, sublayer, gamma, beta, 1e-5)
    grads = residual_backward(dout, cache)
    check = residual_check(cache, grads, dout)
    assert check.numerical["dx"].dtype == np.float64
    statuses = {name: j.status for name, j in check.judgements.items()}
    assert statuses == dict.fromkeys(statuses, "pass")
    assert check.judgement("dx", grads.dx * F32(1.1)).status == "fail"


def test_the_audit_says_the_true_value_is_0_only_where_it_is():
    """Was, at |x| about 1e10 and D = 1: "cannot decide: the true value is 0 here up to
    round-off" for 002-dbeta, whose value and reference are both -0.4 against a bound of 0.2."""
    x = np.array([[1.3e10], [-0.7e10]])
    dout = np.array([[0.7], [-1.1]])
    results = {r.id: r for r in audit(x, np.array([1.5]), np.array([0.2]), dout, 1e-5)}
    dbeta = results["002-dbeta"]
    assert dbeta.verdict == "cannot decide"
    assert "true value is 0" not in dbeta.reason
    assert "4.0e-01" in dbeta.reason
    # Nor does its error say "within round-off: the true value is 0" (ui.draw.audit_view).
    assert dbeta.error_measures == FORMULA
    # Where the true value is 0 (dgamma: x - mean is 0 with one feature), it still says so.
    assert "true value is 0" in results["002-dgamma"].reason


def test_a_float32_constant_vector_whose_mean_rounds_is_never_failed():
    """float32, every entry -29846.8, eps = 1e-12: the mean of 64 (or 3) copies rounds, so the
    computed variance is the rounding's own (s = 512 where the exact s is 1e6) and the float32
    gradients have nothing to do with the exact ones: against float64 differences that is
    "cannot resolve", never "fail"."""
    for d in (3, 64):
        x = np.full((2, d), -29846.8, dtype=F32)
        gamma = np.linspace(0.5, 1.5, d, dtype=F32)
        for dout in (np.ones((2, d), F32), np.linspace(-1e6, 1e6, 2 * d, dtype=F32).reshape(2, d)):
            check = gradient_check(x, gamma, np.zeros(d, F32), dout, 1e-12)
            assert check.status("backward", "dx") == "cannot resolve", d
            assert check.passed, (d, check.errors)


def test_a_float32_residual_block_far_from_0_is_never_failed():
    """float32 x all -29999.05 (the sublayer saturates, z = x +- 1 rounds by 4e-3), eps =
    1e-12: the float32 z is no small perturbation of the exact one, so against float64
    differences dx is "cannot resolve", never "fail"."""
    x = np.full((1, 3), -29999.05, F32)
    gamma = np.array([1.2, 0.6, 1.5], F32)
    sublayer = make_sublayer(3, 0, dtype=F32)
    cache = residual_forward(x, sublayer, gamma, np.zeros(3, F32), 1e-12)
    for dout in (np.array([[0.3, -1.2, 0.8]], F32), np.array([[2e5, -7e5, 1e6]], F32)):
        check = residual_check(cache, residual_backward(dout, cache), dout)
        assert {j.status for j in check.judgements.values()} == {"cannot resolve"}


def test_residual_block_on_a_large_common_offset_resolves_dx_in_float32():
    """Was: "cannot resolve" (bound 0.079 against a size of 0.62 and a gap of 2e-4, Large
    common offset, (3, 8), dout all ones): the bound charged z's rounding as a chain of worst
    cases times the sublayer's gain, where z = x + f rounds by an ulp of |z| and the
    saturated tanh carries nothing back."""
    for upstream in ("ones", "random"):
        x, gamma, beta, dout = _inputs(OFFSET, (3, 8), upstream)
        sublayer = make_sublayer(8, 0, dtype=F32)
        cache = residual_forward(x, sublayer, gamma, beta, 1e-5)
        grads = residual_backward(dout, cache)
        check = residual_check(cache, grads, dout)
        assert check.judgements["dx"].status == "pass", check.judgements["dx"]
        assert check.judgement("dx", grads.dx * F32(1.1)).status == "fail"


def test_jacobian_times_xhat_resolves_eps_part_in_float32():
    """Was: J x̂ "cannot resolve" on 272 of 288 float32 vectors. eps's part is about 1e-5 of
    J's scale; float32 rounds J's entries by a few 1e-8 of it, which leaves one or two digits
    of that part, and the bound is now that rounding (ln_core's J against the float64 J of
    the same inputs, plus every operation's own rounding), not a chain of worst cases."""
    x, gamma, _, dout = _inputs("Random normal", (3, 8))
    for row in range(3):
        facts = jacobian_facts(x[row], gamma, dout[row], 1e-5)
        assert facts.xhat_judgement.status == "pass", facts.xhat_judgement
        cache = forward(x[row], gamma, None, 1e-5)
        wrong = facts_of(facts.jacobian * F32(1.1), cache, dout[row]).xhat_judgement
        assert wrong.status == "fail", wrong
        # The bound holds against eps's exact part, in np.longdouble from the same inputs.
        long = np.asarray(x[row], np.longdouble)
        centered = long - np.mean(long)
        var, eps = np.mean(centered * centered), np.longdouble(F32(1e-5))
        exact = np.asarray(gamma, np.longdouble) * centered * eps / (var + eps) ** 2
        product = facts.jacobian.astype(np.float64) @ cache.normalized_x.astype(np.float64)
        assert np.max(np.abs(product - exact)) <= facts.xhat_judgement.bound


def _sweep_case(preset: str, d: int, upstream: str, seed: int = 0):
    """One float32 case of bench.verdict_sweep's power grid (its own seeded dout)."""
    grid = dict(POWER, preset=(preset,), dtype=("float32",), d=(d,), upstream=(upstream,))
    (case,) = power_cases(dict(grid, seed=(seed,)))
    return case


def test_break_the_backward_catches_the_mean_path_sign_bug_about_5_percent_off():
    """Was: break the backward passed a mean-path-sign bug 5.4 % off (float32). On the power
    grid's Constant vector, (3, 64), random dout, the bug moves dx by 5.3 % of the truth (a
    float32 central difference is far closer): x - mean is exactly 0 there, so no offset's
    rounding, growing with 1 / sqrt(eps), may widen the bound enough to let it through."""
    case = _sweep_case("Constant vector", 64, "random")
    exact = reference(case.x, case.gamma, case.beta, case.dout, float(F32(1e-5)))["dx"]
    check = gradient_check(case.x, case.gamma, case.beta, case.dout, 1e-5)
    result = check_bug(
        check, case.dout, forward(case.x, case.gamma, case.beta, 1e-5), Bug.MEAN_PATH_SIGN
    )
    off = np.max(np.abs(result.dx - exact)) / np.max(np.abs(exact))
    assert 0.05 < off < 0.06
    assert result.outcome == CAUGHT, result.judgement
    assert check.status("backward", "dx") == "pass"


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    d=st.integers(3, 32),
    dtype=st.sampled_from([np.float32, np.float64]),
    offset=st.sampled_from([0.0, 1.0, 3.0]),
    factor=st.sampled_from([0.9, 1.1, 2.0, -1.0]),
)
def test_jacobian_times_xhat_both_ways_on_ordinary_vectors(seed, d, dtype, offset, factor):
    """A correct J is never failed, and the bound holds against eps's exact part; where the
    check passes, J off by 10 % or more fails. (How often it passes where J x̂ is within 1 %
    of the truth is bench.verdict_sweep --power's count: float32 J x̂ keeps one or two digits
    of eps's part, so a few such vectors stay "cannot resolve".)"""
    rng = np.random.default_rng(seed)
    x = (offset + rng.standard_normal(d)).astype(dtype)
    gamma = (1 + 0.5 * rng.standard_normal(d)).astype(dtype)
    dout = rng.standard_normal(d).astype(dtype)
    facts = jacobian_facts(x, gamma, dout, 1e-5)
    judgement = facts.xhat_judgement
    assert judgement.status != "fail", judgement
    long = np.asarray(x, np.longdouble)
    centered = long - np.mean(long)
    var, eps = np.mean(centered * centered), np.longdouble(dtype(1e-5))
    exact = np.asarray(gamma, np.longdouble) * centered * eps / (var + eps) ** 2
    cache = forward(x, gamma, None, 1e-5)
    product = facts.jacobian.astype(np.float64) @ cache.normalized_x.astype(np.float64)
    assert np.max(np.abs(product - exact)) <= judgement.bound
    if judgement.status == "pass":
        wrong = facts_of(facts.jacobian * dtype(factor), cache, dout).xhat_judgement
        assert wrong.status == "fail", wrong


@settings(max_examples=16, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    d=st.integers(3, 8),
    dtype=st.sampled_from([np.float32, np.float32, np.float64]),
    offset=st.sampled_from([0.0, 1.0, 2000.0, 2000.0]),
)
def test_residual_block_both_ways_on_ordinary_inputs(seed, d, dtype, offset):
    """The residual block's dx is never failed when correct; where a central difference in
    the working dtype is within 1 % of the exact dx, the check resolves it, and dx x 1.1 (off
    by 10 %) fails."""
    rng = np.random.default_rng(seed)
    x = (offset + rng.standard_normal((2, d))).astype(dtype)
    gamma = (1 + 0.5 * rng.standard_normal(d)).astype(dtype)
    beta = (0.5 * rng.standard_normal(d)).astype(dtype)
    dout = rng.standard_normal((2, d)).astype(dtype)
    sublayer = make_sublayer(d, seed % 7, dtype=dtype)
    cache = residual_forward(x, sublayer, gamma, beta, 1e-5)
    grads = residual_backward(dout, cache)
    check = residual_check(cache, grads, dout)
    assert "fail" not in {j.status for j in check.judgements.values()}
    case = Inputs((), x, gamma, beta, dout, 1e-5)
    exact = exact_residual(case, cache.sublayer)["dx"]
    working = residual_numerical_grads(x, sublayer, gamma, beta, dout, 1e-5, default_h(cache.ln))[
        "dx"
    ]
    if np.max(np.abs(working - exact)) < 0.01 * np.max(np.abs(exact)):
        assert check.judgements["dx"].status == "pass", check.judgements["dx"]
        assert check.judgement("dx", grads.dx * dtype(1.1)).status == "fail"


def test_a_constant_vector_is_not_told_to_try_a_smaller_offset():
    """x - mean is exactly 0 on a constant vector however far from 0 it sits: the advice
    under its "cannot resolve" names what would help, not a smaller common offset."""
    x, gamma, beta, dout = _inputs("Constant vector", (3, 64), "ones")
    x = x + F32(100.0)
    advice = resolving_inputs(forward(x, gamma, beta, 1e-5), dout)
    assert "smaller common offset" not in advice
    assert "float64" in advice
    x, gamma, beta, dout = _inputs(OFFSET, (3, 8))
    assert "smaller common offset" in resolving_inputs(forward(x, gamma, beta, 1e-5), dout)


def test_the_stepper_checks_dx_of_a_large_common_offset_in_float32():
    """Was: the node check of x "cannot resolve" on Large common offset (3, 8) in float32: each
    moved copy of x computes its own mean, whose float32 rounding over the step swamps the
    difference. Its differences now run in float64 of the same inputs, as the gradient
    check's do, so the correct dx passes and one off by 10 % fails."""
    x, gamma, beta, dout = _inputs(OFFSET, (3, 8))
    cache = forward(x, gamma, beta, 1e-5)
    result = check_node(cache, backward(dout, cache), "x")
    assert result.status == "pass", result.judgement
    assert judge(result.analytic * F32(1.1), result.numerical, result.bound).status == "fail"


def test_the_stepper_checks_dsq_xsm_of_random_normal_in_float32():
    """Was: the node check of sq_xsm "cannot resolve" on Random normal (3, 64), dout ones, in
    float32 (bound 3.6e-2 against a gap of 1.7e-4; the float32 central difference is within
    0.34 % of the truth): a moved square's change to the variance is rounded to an ulp of the
    variance. Every node's differences now run in float64 of the same inputs, as x's do, so
    the correct dsq_xsm passes and one off by 10 % fails."""
    case = _sweep_case("Random normal", 64, "ones")
    cache = forward(case.x, case.gamma, case.beta, case.eps)
    result = check_node(cache, backward(case.dout, cache), "sq_xsm")
    assert result.status == "pass", result.judgement
    assert judge(result.analytic * F32(1.1), result.numerical, result.bound).status == "fail"


def test_dinv_sqrt_sve_of_a_one_hot_dout_on_a_large_common_offset_is_not_failed():
    """The mean's float32 rounding moves every x_sm by the same amount, so dinv_sqrt_sve =
    sum(w * x_sm) by that times sum(w): on Large common offset (3, 4) with a one-hot dout, the
    float32 dinv_sqrt_sve is 5e-6 off its exact value, more than its rounding bound allowed
    when the shift was counted against sum|w * x_sm| only (the one entry sits near the mean).
    Against float64 differences of the same inputs, that was a correct gradient failed."""
    case = _sweep_case(OFFSET, 4, "one_hot")
    cache = forward(case.x, case.gamma, case.beta, case.eps)
    grads = backward(case.dout, cache)
    exact = node_reference(case.x, case.gamma, case.beta, case.dout, float(F32(case.eps)))
    for node in ("inv_sqrt_sve", "sqrt_sve", "sve", "sample_var", "sq_xsm"):
        gap = np.abs(np.asarray(grads.of(node), np.longdouble) - exact[node])
        assert np.all(gap <= rounding_bound(cache, case.dout, node)), node
        assert check_node(cache, grads, node).status != "fail", node


def test_residual_block_at_d_2_resolves_dx_of_a_large_common_offset_in_float64():
    """Was: "cannot resolve" on Large common offset (3, 2), dout ones, float64 (bound 1.4e-6
    against a dx of size 5.3e-6; the central difference is within 1e-6 of it): the truncation
    bound used the gradient's natural size, s * sum|dout * gamma| * (1 + X), but at D = 2
    LayerNorm depends on z only through z1 - z2 and all its derivatives are eps s^2 of that
    size (normalized_z = +-1 up to eps s^2). Now a pass, and dx x 1.1 fails."""
    grid = dict(POWER, preset=(OFFSET,), dtype=("float64",), d=(2,), upstream=("ones",))
    (case,) = power_cases(dict(grid, seed=(0,)))
    sublayer = make_sublayer(2, 0)
    cache = residual_forward(case.x, sublayer, case.gamma, case.beta, case.eps)
    grads = residual_backward(case.dout, cache)
    check = residual_check(cache, grads, case.dout)
    assert check.judgements["dx"].status == "pass", check.judgements["dx"]
    assert check.judgement("dx", grads.dx * 1.1).status == "fail"


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    dtype=st.sampled_from([np.float32, np.float64]),
    offset=st.sampled_from([0.0, 2000.0]),
    spread=st.sampled_from([1e-3, 1e-2, 1.0, 50.0]),
)
def test_residual_block_at_d_2_never_fails_a_correct_gradient(seed, dtype, offset, spread):
    """At D = 2 the truncation bound counts LayerNorm's flatness (eps s^2): still no correct
    gradient is failed, with sigma from about sqrt(eps) (no flatness) to far above it."""
    rng = np.random.default_rng(seed)
    x = (offset + spread * rng.standard_normal((3, 2))).astype(dtype)
    gamma = (1 + 0.5 * rng.standard_normal(2)).astype(dtype)
    beta = (0.5 * rng.standard_normal(2)).astype(dtype)
    dout = rng.standard_normal((3, 2)).astype(dtype)
    sublayer = make_sublayer(2, seed % 7, dtype=dtype)
    cache = residual_forward(x, sublayer, gamma, beta, 1e-5)
    check = residual_check(cache, residual_backward(dout, cache), dout)
    assert "fail" not in {j.status for j in check.judgements.values()}, check.judgements
