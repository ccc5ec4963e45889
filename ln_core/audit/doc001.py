"""Document 001, the three-path ∇X derivation: one vector X of n features, one γ per feature,
σ without ε. Its formulas (doc001.toml) name n as N, X − μ as x_sm, σ as σ and X̂ as xhat.

Jacobian-shaped lines are compared entry by entry on rows of Setting.rows: value [v, r, l] is
the entry for i = rows[r] (or j = rows[r] for a derivative with respect to X_j) and l.
"""

from __future__ import annotations

from ln_core.audit.entries import load_entries
from ln_core.audit.model import Entry
from ln_core.audit.setting import Model

MODEL = Model(gamma="per-feature", eps=False, axis="features")


ENTRIES: tuple[Entry, ...] = load_entries("001", {"MODEL": MODEL})
