"""The Jacobian page's four facts as verdicts: what each checks, its expected value, and
whether this vector's number is that value (eps's doing included).

Each comes from ln_core.verdict's rule, judged in ln_core.jacobian_facts against a careful bound
on the rounding of the computed J (a large common offset included), so a right J never fails,
and a fact whose expected value rounding would swamp is "cannot resolve", with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from ln_core.jacobian_facts import JacobianFacts
from ln_core.verdict import Judgement
from teaching.verdicts import (
    AS_EXPECTED,
    CANNOT_RESOLVE,
    FAIL,
    LARGE_OFFSET,
    PASS,
    Verdict,
    judgement_reason,
    rounding_agreement,
)


@dataclass(frozen=True)
class JacobianVerdicts:
    """One Verdict per fact on the page."""

    ones: Verdict
    xhat: Verdict
    symmetry: Verdict
    dx: Verdict


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
        reason = (
            f"{value:.1e} is rounding: within what rounding of J explains ({j.bound:.1e}), "
            f"which is small against the {j.size:.1e} a wrong J would leave."
        )
        return Verdict(checks, expected, PASS, reason)
    return Verdict(checks, expected, j.status, judgement_reason(j, hint))


def _xhat(facts: JacobianFacts, eps: float, hint: str) -> Verdict:
    checks = "how much the output moves when every deviation x_j - mean is scaled (J x̂)"
    j = facts.xhat_judgement
    if eps == 0:
        why = "with eps = 0 scaling changes nothing"
        return _zero(checks, facts.xhat_response, j, why, hint)
    expected_value = facts.xhat_response_expected
    expected = (
        f"{expected_value:.1e}, eps's doing: γ x̂ / σ · eps / (var + eps); it would be 0 at eps = 0"
    )
    if j.status == PASS:
        reason = (
            f"{facts.xhat_response:.1e} is eps's {expected_value:.1e}, not a mistake (gap "
            f"{j.gap:.1e}, within what rounding of J explains, {j.bound:.1e})."
        )
        return Verdict(checks, expected, AS_EXPECTED, reason)
    if j.status == CANNOT_RESOLVE and j.size == 0:
        reason = (
            "eps's value is exactly 0 here (γ x̂ is 0, as when the entries are all equal), and "
            "J x̂ is then 0 for a wrong J as well: this vector cannot show eps's part."
        )
        return Verdict(checks, expected, CANNOT_RESOLVE, reason)
    if j.status == CANNOT_RESOLVE:
        reason = (
            f"{facts.xhat_response:.1e} is within what rounding of J explains "
            f"({j.bound:.1e}) of eps's {expected_value:.1e}, but that rounding is not small "
            f"against eps's value, so a J x̂ of 0 would look the same. {hint}"
        )
        return Verdict(checks, expected, CANNOT_RESOLVE, reason)
    return Verdict(checks, expected, FAIL, judgement_reason(j, hint))


def _symmetry(facts: JacobianFacts, hint: str) -> Verdict:
    checks = "whether J equals its transpose (max |J - Jᵀ|)"
    if facts.gamma_uniform:
        why = "gamma is the same for every feature"
        return _zero(checks, facts.symmetry_error, facts.symmetry_judgement, why, hint)
    expected = "not 0: row i of J is scaled by gamma_i, and the gammas differ here"
    reason = f"{facts.symmetry_error:.1e}: J is not symmetric, because gamma is not uniform."
    return Verdict(checks, expected, AS_EXPECTED, reason)


def jacobian_verdicts(facts: JacobianFacts, eps: float, dtype: str) -> JacobianVerdicts:
    """The verdicts for one vector's facts, computed at this eps in this dtype."""
    hint = resolving_vector(facts, dtype)
    return JacobianVerdicts(
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
