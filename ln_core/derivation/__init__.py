"""Checking a student's own derivation: a formula typed for one of the backward pass's
gradients, judged by the audit's judge on the student's inputs and on inputs chosen to tell
common mistakes apart (probes), with the known mistake it makes named (mistakes).

`symbols` is the names a formula may use, bound to an audit Setting; `quantities` what it may
claim to be; `check` puts them together.
"""

from ln_core.audit.symbols import LAYERNORM
from ln_core.derivation.check import (
    Counterexample,
    DerivationCheck,
    Difference,
    NamedMistake,
    ProbeResult,
    check_formula,
    model_for,
    read,
)
from ln_core.derivation.quantities import TARGETS, Target, usable

__all__ = [
    "LAYERNORM",
    "TARGETS",
    "Counterexample",
    "DerivationCheck",
    "Difference",
    "NamedMistake",
    "ProbeResult",
    "Target",
    "check_formula",
    "model_for",
    "read",
    "usable",
]
