"""The Jacobian page's four facts as verdicts: what each checks, its expected value, and
whether this vector's number is that value (eps's doing included)."""

from __future__ import annotations

from dataclasses import dataclass

from ln_core.jacobian_facts import JacobianFacts
from teaching.verdicts import AS_EXPECTED, FAIL, PASS, Verdict, rounding_agreement

# Rounding in J times a vector grows with D and the size of J's entries (facts.rounding); a
# product of D terms lands within a few dozen times that.
ROUNDING_MARGIN = 100


@dataclass(frozen=True)
class JacobianVerdicts:
    """One Verdict per fact on the page."""

    ones: Verdict
    xhat: Verdict
    symmetry: Verdict
    dx: Verdict


def _zero(checks: str, value: float, bar: float, why_zero: str) -> Verdict:
    expected = f"0 ({why_zero}), up to rounding of about {bar:.0e}"
    if value <= bar:
        return Verdict(checks, expected, PASS, f"{value:.1e} is rounding: within {bar:.0e}.")
    return Verdict(checks, expected, FAIL, f"{value:.1e} is more than rounding ({bar:.0e}).")


def _xhat(facts: JacobianFacts, eps: float, bar: float) -> Verdict:
    checks = "how much the output moves when every deviation x_j - mean is scaled (J x̂)"
    if eps == 0:
        return _zero(checks, facts.xhat_response, bar, "with eps = 0 scaling changes nothing")
    expected_value = facts.xhat_response_expected
    expected = (
        f"{expected_value:.1e}, eps's doing: γ x̂ / σ · eps / (var + eps); it would be 0 at eps = 0"
    )
    gap = abs(facts.xhat_response - expected_value)
    if gap <= bar + 1e-6 * expected_value:
        reason = f"{facts.xhat_response:.1e} is eps's {expected_value:.1e}, not a mistake."
        return Verdict(checks, expected, AS_EXPECTED, reason)
    reason = f"{facts.xhat_response:.1e} differs from eps's {expected_value:.1e} by {gap:.1e}."
    return Verdict(checks, expected, FAIL, reason)


def _symmetry(facts: JacobianFacts, bar: float) -> Verdict:
    checks = "whether J equals its transpose (max |J - Jᵀ|)"
    if facts.gamma_uniform:
        return _zero(checks, facts.symmetry_error, bar, "gamma is the same for every feature")
    expected = "not 0: row i of J is scaled by gamma_i, and the gammas differ here"
    reason = f"{facts.symmetry_error:.1e}: J is not symmetric, because gamma is not uniform."
    return Verdict(checks, expected, AS_EXPECTED, reason)


def jacobian_verdicts(facts: JacobianFacts, eps: float, dtype: str) -> JacobianVerdicts:
    """The verdicts for one vector's facts, computed at this eps in this dtype."""
    bar = ROUNDING_MARGIN * facts.rounding
    return JacobianVerdicts(
        ones=_zero(
            "how much the output moves when the same number is added to every x_j (J 1)",
            facts.ones_response,
            bar,
            "the mean takes any common shift away",
        ),
        xhat=_xhat(facts, eps, bar),
        symmetry=_symmetry(facts, bar),
        dx=rounding_agreement(
            "the row vector dout J against the backward pass's dx",
            facts.dx_judgement,
            dtype,
            "Try a random upstream gradient and gamma, with D ≥ 3 and entries that differ.",
        ),
    )
