"""A document's entries read from its data file, ln_core/audit/docNNN.toml.

The documents' words (their LaTeX lines, the mistakes, readings and corrections) are data and
live in the TOML files; each formula there is one Python expression over the setting `st`
(a note's, over the case), compiled once here and evaluated with only the names its document
module hands over, as ln_core.forward runs its FORWARD_LINES.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any

from ln_core.audit.model import Correction, Entry

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Expression:
    """One formula of a data file, called with the value of its one free variable."""

    text: str
    variable: str
    code: CodeType = field(repr=False, compare=False)
    namespace: dict[str, object] = field(repr=False, compare=False)

    @classmethod
    def compile(cls, text: str, variable: str, namespace: dict[str, object]) -> Expression:
        code = compile(text, f"<{text}>", "eval")
        return cls(text=text, variable=variable, code=code, namespace=namespace)

    def __call__(self, value: Any) -> Any:
        return eval(self.code, {**self.namespace, self.variable: value})


def read_toml(name: str) -> dict[str, Any]:
    """The data file `name` next to this module."""
    with (HERE / name).open("rb") as f:
        return tomllib.load(f)


def load_entries(document: str, namespace: Mapping[str, object]) -> tuple[Entry, ...]:
    """Document `document`'s entries from doc<document>.toml, in file order.

    namespace: the helpers the expressions use (np, the quantities, the document's models and
    functions); `model` and `quantity` are names or attributes looked up in it.
    """

    names = dict(namespace)

    def st_formula(text: str) -> Expression:
        return Expression.compile(text, "st", names)

    def look_up(text: str) -> Any:
        return eval(text, names)

    def entry(row: dict[str, Any]) -> Entry:
        correction = row.get("correction")
        return Entry(
            id=row["id"],
            document=document,
            step=row["step"],
            line=row["line"],
            model=look_up(row.get("model", "MODEL")),
            quantity=look_up(row["quantity"]),
            formula=st_formula(row["formula"]),
            correction=None
            if correction is None
            else Correction(
                latex=correction["latex"],
                formula=st_formula(correction["formula"]),
                mistake=correction["mistake"],
                agrees_when=correction["agrees_when"],
                exposed_by=correction["exposed_by"],
            ),
            where=st_formula(row["where"]) if "where" in row else None,
            reading=row.get("reading", ""),
            note=Expression.compile(row["note"], "case", names) if "note" in row else None,
            written_by_lab=row.get("written_by_lab", False),
        )

    return tuple(entry(row) for row in read_toml(f"doc{document}.toml")["entry"])
