"""Document 002, the 'transpose of batch normalization' notes: a batch of m vectors of H
features, one γ per feature, ε inside the root. Its formulas (doc002.toml)
name H as N, x − μ as x_sm, (σ² + ε)^(-1/2) as rstd, ∂L/∂x̂ as dy γ.

Lines that combine earlier partials ((3), (4)) are evaluated with the true partials, so each
line is judged on its own step.
"""

from __future__ import annotations

from ln_core.audit.entries import load_entries
from ln_core.audit.model import Entry
from ln_core.audit.setting import Model

MODEL = Model(gamma="per-feature", eps=True, axis="features")


ENTRIES: tuple[Entry, ...] = load_entries("002", {"MODEL": MODEL})
