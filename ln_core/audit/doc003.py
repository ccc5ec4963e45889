"""Document 003, the per-token transformer derivation: one token's vector of D features, one γ
per feature, ε inside the root; a table sums dγ and dβ over batch and sequence.
Its formulas (doc003.toml) name D as N, x − μ as x_sm, 1/sqrt(σ² + ε) as rstd, dx̂ as dy γ.
"""

from __future__ import annotations

from ln_core.audit.entries import load_entries
from ln_core.audit.model import Entry
from ln_core.audit.setting import Model

MODEL = Model(gamma="per-feature", eps=True, axis="features")


ENTRIES: tuple[Entry, ...] = load_entries("003", {"MODEL": MODEL})
