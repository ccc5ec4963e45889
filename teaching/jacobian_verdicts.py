"""The Jacobian page's four facts as verdicts: what each checks, its expected value, and
whether this vector's number is that value (eps's doing included).

Each comes from ln_core.verdict's rule, judged in ln_core.jacobian_facts against a careful bound
on the rounding of the computed J (a large common offset included), so a right J never fails,
and a fact whose expected value rounding would swamp is "cannot resolve", with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ln_core.jacobian_facts import JacobianFacts
from ln_core.verdict import Judgement
from teaching.verdicts import (
    AS_EXPECTED,
    CANNOT_RESOLVE,
    LARGE_OFFSET,
    PASS,
    Verdict,
    agrees,
    combined,
    judged,
    number,
    rounding_agreement,
)


@dataclass(frozen=True)
class JacobianVerdicts:
    """One Verdict per fact on the page."""

    ones: Verdict
    xhat: Verdict
    symmetry: Verdict
    dx: Verdict
    overall: Verdict  # the four in one, for the top of the page


def resolving_vector(facts: JacobianFacts, dtype: str) -> str:
    """Inputs that would let these facts resolve, from this vector's own numbers."""
    tries = []
    if dtype == "float32":
        tries.append("float64")
    if facts.offset > LARGE_OFFSET:
        tries.append("x with a smaller common offset (x − mean cancels its leading digits)")
    if facts.jacobian.shape[0] <= 2:
        tries.append("D ≥ 3 (with D ≤ 2 every vector normalizes to about ±1 whatever x is)")
    tries.append("a vector whose entries differ more")
    return f"Try {', or '.join(tries)}."


def _zero(checks: str, value: float, j: Judgement, why_zero: str, hint: str) -> Verdict:
    """A fact whose exact value is 0, judged against the rounding of the computed J."""
    expected = f"0 ({why_zero}), up to the rounding of the computed J"
    if j.status == PASS:
        outcome = f"0 up to rounding ({number(value)}, {j.digits} digits below what a wrong J "
        outcome += "would leave)."
        reason = (
            f"{number(value)} is rounding: within what rounding of J explains "
            f"({number(j.bound)}), which is small against the {number(j.size)} a wrong J "
            "would leave."
        )
        return Verdict(checks, expected, PASS, outcome, reason)
    return replace(judged(checks, j, "the rounding of the computed J", hint), expected=expected)


def _xhat(facts: JacobianFacts, eps: float, hint: str) -> Verdict:
    checks = "how much the output moves when every deviation x_j - mean is scaled (J x̂)"
    j = facts.xhat_judgement
    if eps == 0:
        why = "with eps = 0 scaling changes nothing"
        return _zero(checks, facts.xhat_response, j, why, hint)
    expected_value = facts.xhat_response_expected
    expected = (
        f"{number(expected_value)}, eps's doing: γ x̂ / σ · eps / (var + eps); it would be 0 at "
        "eps = 0"
    )
    if j.status == PASS:
        outcome = f"{number(facts.xhat_response)} is eps's doing, not a mistake ({agrees(j)})."
        reason = (
            f"{number(facts.xhat_response)} is eps's {number(expected_value)}, not a mistake "
            f"(gap {number(j.gap)}, within what rounding of J explains, {number(j.bound)})."
        )
        return Verdict(checks, expected, AS_EXPECTED, outcome, reason)
    if j.status == CANNOT_RESOLVE and j.size == 0:
        outcome = "eps's part is exactly 0 on this vector, so a wrong J would look the same."
        reason = (
            "eps's value is exactly 0 here (γ x̂ is 0, as when the entries are all equal), and "
            "J x̂ is then 0 for a wrong J as well: this vector cannot show eps's part."
        )
        return Verdict(checks, expected, CANNOT_RESOLVE, outcome, reason)
    if j.status == CANNOT_RESOLVE:
        outcome = (
            f"eps's part, {number(expected_value)}, drowns in the rounding of J, so a J x̂ of 0 "
            f"would look the same. {hint}"
        )
        reason = (
            f"{number(facts.xhat_response)} is within what rounding of J explains "
            f"({number(j.bound)}) of eps's {number(expected_value)}, but that rounding is not "
            f"small against eps's value, so a J x̂ of 0 would look the same. {hint}"
        )
        return Verdict(checks, expected, CANNOT_RESOLVE, outcome, reason)
    return replace(judged(checks, j, "the rounding of the computed J", hint), expected=expected)


def _symmetry(facts: JacobianFacts, hint: str) -> Verdict:
    checks = "whether J equals its transpose (max |J - Jᵀ|)"
    if facts.gamma_uniform:
        why = "gamma is the same for every feature"
        return _zero(checks, facts.symmetry_error, facts.symmetry_judgement, why, hint)
    expected = "not 0: row i of J is scaled by gamma_i, and the gammas differ here"
    outcome = "J is not symmetric, because gamma differs from feature to feature."
    reason = f"max |J - Jᵀ| is {number(facts.symmetry_error)}: row i of J is scaled by gamma_i."
    return Verdict(checks, expected, AS_EXPECTED, outcome, reason)


def jacobian_verdicts(facts: JacobianFacts, eps: float, dtype: str) -> JacobianVerdicts:
    """The verdicts for one vector's facts, computed at this eps in this dtype."""
    hint = resolving_vector(facts, dtype)
    four = dict(
        ones=_zero(
            "how much the output moves when the same number is added to every x_j (J 1)",
            facts.ones_response,
            facts.ones_judgement,
            "the mean takes any common shift away",
            hint,
        ),
        xhat=_xhat(facts, eps, hint),
        symmetry=_symmetry(facts, hint),
        dx=rounding_agreement(
            "the row vector dout J against the backward pass's dx",
            facts.dx_judgement,
            dtype,
            # The vector's own limits first (float32, an offset), then what dout J adds.
            f"{hint} Or try a random upstream gradient and gamma.",
        ),
    )
    named = dict(zip(("J 1 = 0", "J x̂", "symmetry", "dout J = dx"), four.values(), strict=True))
    overall = combined(
        named,
        "the four facts below: J 1, J x̂, symmetry, and dout J against the backward's dx",
        "all four facts J must satisfy hold on this vector.",
        hint,
    )
    return JacobianVerdicts(**four, overall=overall)
