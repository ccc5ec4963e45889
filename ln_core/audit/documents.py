"""The five source documents the lab was built from, named by what they are, each with the
key from its notation to the lab's (the words are in documents.toml)."""

from __future__ import annotations

from dataclasses import dataclass

from ln_core.audit.entries import read_toml


@dataclass(frozen=True)
class Symbol:
    """One symbol of a document (LaTeX) and what it is in the lab's words."""

    document: str
    lab: str


@dataclass(frozen=True)
class Document:
    """key: '000'..'004' (the order the lab received them); name: what the document is."""

    key: str
    name: str
    summary: str
    notation: tuple[Symbol, ...]


DOCUMENTS: dict[str, Document] = {
    row["key"]: Document(
        key=row["key"],
        name=row["name"],
        summary=row["summary"],
        notation=tuple(Symbol(document, lab) for document, lab in row["notation"]),
    )
    for row in read_toml("documents.toml")["document"]
}
