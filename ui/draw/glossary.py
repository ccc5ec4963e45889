"""The glossary (teaching/glossary.py) drawn: a few names in plain words where a page first
uses them, the whole list on request."""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from teaching.glossary import MEANINGS, meaning


def glossary_list(names: Iterable[str] | None = None) -> None:
    """A list of names (default: every name) with their plain meaning."""
    st.markdown("\n".join(f"- `{n}`: {meaning(n)}" for n in (names or MEANINGS)))


def glossary_expander(
    names: Iterable[str] | None = None, title: str = "What the names mean"
) -> None:
    """A folded list of names (default: every name) with their plain meaning."""
    with st.expander(title, icon=":material/menu_book:"):
        glossary_list(names)
