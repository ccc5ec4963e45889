"""A document's entries read from its data file, ln_core/audit/docNNN.toml.

The documents' words (their LaTeX lines, the mistakes, readings and corrections) are data and
live in the TOML files. Each formula there is written in the lab's formula grammar
(ln_core.formula) over the AUDIT names (ln_core.audit.symbols), parsed once here and evaluated
by the same evaluator that judges a student's typed formula: nothing in a data file is run as
Python. `model`, `quantity` and `note` name objects of the document's module.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.model import Correction, Entry
from ln_core.audit.setting import Setting
from ln_core.audit.symbols import AUDIT, audit_functions, audit_values
from ln_core.formula import FormulaError, Node, evaluate, parse

HERE = Path(__file__).parent
# A formula that divides by 0 or overflows on some inputs gives no number there: the judge
# reads the NaN as "these inputs cannot decide", as it reads any non-finite value.
NO_NUMBER = ("division-by-zero", "overflow", "undefined")


@dataclass(frozen=True)
class Expression:
    """One formula of a data file: its text and tree, called with a Setting."""

    text: str
    tree: Node

    @classmethod
    def read(cls, text: str) -> Expression:
        tree = parse(" ".join(text.split()), AUDIT)
        if isinstance(tree, FormulaError):
            raise ValueError(f"The audit formula {text!r} does not parse: {tree.describe()}")
        return cls(text=text, tree=tree)

    def __call__(self, st: Setting) -> np.ndarray:
        value = evaluate(
            self.tree, audit_values(st), audit_functions(st), max_elements=None, max_seconds=None
        )
        if isinstance(value, FormulaError):
            if value.kind in NO_NUMBER:
                return np.asarray(np.nan)
            raise ValueError(f"The audit formula {self.text!r} fails: {value.describe()}")
        return value


def read_toml(name: str) -> dict[str, Any]:
    """The data file `name` next to this module."""
    with (HERE / name).open("rb") as f:
        return tomllib.load(f)


def _look_up(text: str, names: Mapping[str, Any]) -> Any:
    """A name of the document's module, or q.NAME for a quantity of ln_core.audit.quantities."""
    if text.startswith("q."):
        return getattr(q, text[2:])
    return names[text]


def load_entries(document: str, names: Mapping[str, Any]) -> tuple[Entry, ...]:
    """Document `document`'s entries from doc<document>.toml, in file order.

    names: the document module's models, quantities and note functions, by name.
    """

    def entry(row: dict[str, Any]) -> Entry:
        correction = row.get("correction")
        note: Callable | None = _look_up(row["note"], names) if "note" in row else None
        return Entry(
            id=row["id"],
            document=document,
            step=row["step"],
            line=row["line"],
            model=_look_up(row.get("model", "MODEL"), names),
            quantity=_look_up(row["quantity"], names),
            formula=Expression.read(row["formula"]),
            correction=None
            if correction is None
            else Correction(
                latex=correction["latex"],
                formula=Expression.read(correction["formula"]),
                mistake=correction["mistake"],
                agrees_when=correction["agrees_when"],
                exposed_by=correction["exposed_by"],
            ),
            where=Expression.read(row["where"]) if "where" in row else None,
            reading=row.get("reading", ""),
            note=note,
            written_by_lab=row.get("written_by_lab", False),
        )

    return tuple(entry(row) for row in read_toml(f"doc{document}.toml")["entry"])
