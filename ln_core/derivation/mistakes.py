"""The known mistakes a wrong formula is compared with, so the lab can name the one it makes.

Three sources, one shape (a value on a Setting): the "break the backward" bugs of
ln_core.bugs; the slips below, written in the student's own grammar and run by the same
evaluator; and the five documents' errata (every audit entry with a correction, run in its
document's model), which name a mistake by its document. A formula makes a mistake when it
gives the mistake's numbers wherever it is wrong; the slips of one term are in slips.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ln_core.audit import DOCUMENTS, ENTRIES
from ln_core.audit.setting import Model, Setting
from ln_core.audit.symbols import BACKWARD_ORDER, LAYERNORM, functions, values
from ln_core.backward import backward
from ln_core.bugs import Bug, buggy_backward
from ln_core.derivation.quantities import TARGETS
from ln_core.formula import FormulaError, evaluate, parse
from ln_core.forward import forward

AUDIT_PAGE = "Derivation audit"
BUGS_PAGE = "Gradient check (Break the backward)"


@dataclass(frozen=True)
class Mistake:
    """name: the mistake in a few words; explanation: what goes wrong; page: where the lab
    shows it. model: the model its value is computed in (None: the student's).
    value: the mistake's numbers on a setting, the student's quantity's shape."""

    name: str
    explanation: str
    page: str
    value: Callable[[Setting], np.ndarray]
    model: Model | None = None


def written(text: str) -> Callable[[Setting], np.ndarray]:
    """A mistake written as a formula of the student's grammar, evaluated the same way."""
    tree = parse(text, LAYERNORM)
    if isinstance(tree, FormulaError):
        raise ValueError(f"The mistake {text!r} does not parse: {tree.describe()}")

    def value(st: Setting) -> np.ndarray:
        result = evaluate(tree, values(st), functions(st))
        if isinstance(result, FormulaError):
            raise ValueError(result.problem)
        return result

    return value


def _bug(bug: Bug) -> Callable[[Setting], np.ndarray]:
    """dx of the buggy backward, with the setting's real γ (the Setting's own pass runs at
    γ = 1, which would hide a forgotten γ)."""

    def value(st: Setting) -> np.ndarray:
        rows = []
        for c in range(st.cases):
            cache = forward(st.x[c], st.gamma[c, 0], st.beta[c, 0], st.cache.eps, st.cache.axis)
            rows.append(buggy_backward(st.dy[c], cache, bug).dx)
        return np.stack(rows)

    return value


def _scaled(target: str, factor: Callable[[Setting], float]) -> Callable[[Setting], np.ndarray]:
    def value(st: Setting) -> np.ndarray:
        return st.reference(TARGETS[target].quantity(st.model))[0] * factor(st)

    return value


def _without_gamma(target: str) -> Callable[[Setting], np.ndarray]:
    """The target's gradient when dy reaches x̂ without the factor γ."""

    def value(st: Setting) -> np.ndarray:
        if target == "dnormalized_x":
            return st.dy
        return backward(st.dy, st.cache).of(target[1:])

    return value


_DX_CLOSED = "inv_sqrt_sve * (dxhat - mean(dxhat) - {w} * mean(dxhat * {w}))"

_DX: tuple[Mistake, ...] = (
    *(Mistake(bug.description, bug.caveat or "", BUGS_PAGE, _bug(bug)) for bug in Bug),
    Mistake(
        "Drops the path through the mean μ.",
        "x moves μ, and μ moves every x̂: the term −mean(dx̂)/√(σ² + ε) is missing.",
        "Jacobian (its three paths)",
        written("inv_sqrt_sve * (dxhat - xhat * mean(dxhat * xhat))"),
    ),
    Mistake(
        "Uses x where x̂ is needed.",
        "The variance path weighs by x̂ = (x − μ)/√(σ² + ε), not by the raw x.",
        "Stepper",
        written(_DX_CLOSED.format(w="x")),
    ),
    Mistake(
        "Uses x − μ where x̂ is needed.",
        "x − μ still has to be divided by √(σ² + ε) to be x̂.",
        "Stepper",
        written(_DX_CLOSED.format(w="x_sm")),
    ),
    Mistake(
        "Sums over the wrong axis: over the vectors of the batch instead of the features.",
        "LayerNorm's μ and σ² are taken over the D features of each vector, so the sums of dx "
        "run over the features; over the batch is BatchNorm's.",
        "LayerNorm vs BatchNorm",
        written("inv_sqrt_sve * (dxhat - mean_batch(dxhat) - xhat * mean_batch(dxhat * xhat))"),
    ),
    Mistake(
        "Puts ε outside the root: divides by σ + ε instead of √(σ² + ε).",
        "The forward pass divided by √(σ² + ε); its backward must use the same number.",
        BUGS_PAGE,
        written("(dxhat - mean(dxhat) - x_sm / (σ + ε) * mean(dxhat * x_sm / (σ + ε))) / (σ + ε)"),
    ),
    Mistake(
        "Leaves ε out: divides by σ where the forward pass divided by √(σ² + ε).",
        "Right only at ε = 0; the gap grows as ε grows against σ².",
        "Jacobian",
        written("(dxhat - mean(dxhat) - x_sm / σ * mean(dxhat * x_sm / σ)) / σ"),
    ),
    Mistake(
        "Leaves ε out of the factor in front: divides by σ where the forward pass divided by "
        "√(σ² + ε).",
        "x̂ already holds ε; the 1/√(σ² + ε) in front of the bracket must hold it too. Right only "
        "at ε = 0.",
        "Jacobian",
        written("(dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) / σ"),
    ),
)


def _parameter(target: str, summed: str) -> tuple[Mistake, ...]:
    return (
        Mistake(
            "Sums over the wrong axis: over the features instead of the vectors.",
            "γ and β hold one number per feature, shared by every vector, so their gradients "
            "sum over the vectors.",
            "LayerNorm vs BatchNorm",
            written(f"sum({summed})"),
        ),
        Mistake(
            "Leaves out the sum over the vectors.",
            "Each vector adds its own part to the one γ (β) of a feature: the parts must be "
            "summed over the batch.",
            "Stepper",
            written(summed),
        ),
        Mistake(
            "Averages over the vectors instead of summing.",
            "Nothing is averaged: each vector's part adds to the gradient.",
            "Stepper",
            _scaled(target, lambda st: 1.0 / st.x.shape[-2]),
        ),
    )


_NAMED: dict[str, tuple[Mistake, ...]] = {
    "dx": _DX,
    "dgamma": (
        *_parameter("dgamma", "dy * xhat"),
        Mistake(
            "Uses x where x̂ is needed.",
            "out = γ x̂ + β, so ∂out/∂γ is x̂, not x.",
            "Stepper",
            written("sum_batch(dy * x)"),
        ),
        Mistake(
            "Multiplies by γ, which ∂out/∂γ does not contain.",
            "∂(γ x̂)/∂γ = x̂: γ itself drops out.",
            "Stepper",
            written("sum_batch(dy * gamma * xhat)"),
        ),
    ),
    "dbeta": _parameter("dbeta", "dy"),
}


def _generic(target: str) -> tuple[Mistake, ...]:
    """Slips any gradient can have: a factor 1/D, D or −1 too many, γ forgotten."""
    found = [
        Mistake(
            "A 1/N too many.",
            "The formula is the right one divided by D (N).",
            "Stepper",
            _scaled(target, lambda st: 1.0 / st.n),
        ),
        Mistake(
            "A factor N too many.",
            "The formula is the right one times D (N): a sum where a mean belongs?",
            "Stepper",
            _scaled(target, lambda st: float(st.n)),
        ),
        Mistake(
            "The sign is flipped.",
            "The formula is minus the right one.",
            "Stepper",
            _scaled(target, lambda st: -1.0),
        ),
    ]
    if target in BACKWARD_ORDER[2:-1]:  # dx has the bug FORGET_GAMMA
        found.append(
            Mistake(
                "Forgets γ.",
                "out = γ x̂ + β, so the gradient reaching x̂ is dy γ, not dy.",
                "Stepper",
                _without_gamma(target),
            )
        )
    return tuple(found)


def errata(target: str) -> tuple[Mistake, ...]:
    """Every document line with a correction that claims this target's quantity, named by its
    document: a student's formula that makes the same mistake gets it as a note."""
    wanted = {TARGETS[target].per_feature.how, TARGETS[target].scalar.how}
    return tuple(
        Mistake(
            f"The same mistake as {DOCUMENTS[entry.document].name} ({entry.step}).",
            entry.correction.mistake,
            AUDIT_PAGE,
            entry.formula,
            entry.model,
        )
        for entry in ENTRIES
        if entry.correction is not None and entry.quantity.how in wanted and entry.where is None
    )


def known_mistakes(target: str) -> tuple[Mistake, ...]:
    """The mistakes with plain names a formula for `target` is compared with, most specific
    first (the documents' errata are errata's; the slips of single terms are slips')."""
    return (*_NAMED.get(target, ()), *_generic(target))
