"""The derivation audit: every formula the five source documents state, run on the student's
inputs in the document's own model and judged against the quantity it claims to be.

One data file per document (doc000.toml .. doc004.toml) holds its entries: the document's
lines, its formulas (in the grammar of ln_core.formula, over the names of `symbols`, the same
evaluator that judges a student's typed formula), the mistakes and readings; the module of the
same name names the model and quantities the entries claim, and `entries` reads the file.
`documents` names the documents and their notation (documents.toml); `verdict` judges an entry
on a case.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import doc000, doc001, doc002, doc003, doc004
from ln_core.audit.documents import DOCUMENTS, Document, Symbol
from ln_core.audit.model import (
    FORMULA,
    ROUND_OFF,
    UNDERFLOW,
    AuditResult,
    Correction,
    Entry,
    Quantity,
)
from ln_core.audit.setting import Case, Model
from ln_core.audit.verdict import judge

ENTRIES: tuple[Entry, ...] = (
    *doc000.ENTRIES,
    *doc001.ENTRIES,
    *doc002.ENTRIES,
    *doc003.ENTRIES,
    *doc004.ENTRIES,
)
VERDICTS = ("correct", "wrong", "cannot decide")


def audit_case(case: Case) -> list[list[AuditResult]]:
    """Every entry judged on each stacked case: one list per case, in ENTRIES order. The case
    caches its settings and results (see Case.with_eps)."""
    by_entry = [judge(entry, case) for entry in ENTRIES]
    return [list(results) for results in zip(*by_entry, strict=True)]


def audit(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float = 1e-5
) -> list[AuditResult]:
    """Every entry of ENTRIES judged on these inputs, in order.

    x: (D,), (N, D) or (B, L, D), any float dtype (judged in float64); gamma, beta: (D,);
    dout: x's shape. Documents without ε are judged at ε = 0; where a document's model is
    undefined on the inputs, its entries say "cannot decide" and why. Raises ValueError only
    for inputs that are not numbers of the right shapes.
    """
    return audit_case(Case.of(x, gamma, beta, dout, eps))[0]


__all__ = [
    "DOCUMENTS",
    "ENTRIES",
    "FORMULA",
    "ROUND_OFF",
    "UNDERFLOW",
    "VERDICTS",
    "AuditResult",
    "Case",
    "Correction",
    "Document",
    "Entry",
    "Model",
    "Quantity",
    "Symbol",
    "audit",
    "audit_case",
]
