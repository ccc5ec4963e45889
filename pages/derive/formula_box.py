"""The box a formula is typed into, bound to a state key.

The grammar reads at most MAX_CHARS characters. Streamlit cuts a text box's value to its
max_chars without a word, so the box takes one character more: a longer text (pasted, or sent
by a crafted message) arrives with MAX_CHARS + 1 and is refused here. It never reaches the
state, the cache key or the link; the box shows the formula kept, and says why once.
"""

from __future__ import annotations

import streamlit as st

from ln_core.formula.tokens import MAX_CHARS
from ui.session import state
from ui.session.fields import take_refusal


def _short(text: object) -> str:
    text = str(text)
    if len(text) > MAX_CHARS:
        raise ValueError(f"is longer than {MAX_CHARS:,} characters, the most a formula may have")
    return text


def formula_box(label: str, key: str) -> None:
    """A one-line text box for a formula; a refused text is named under it, the old one kept."""
    st.text_input(label, max_chars=MAX_CHARS + 1, **state.bound(key, parse=_short))
    said = take_refusal(label, key)
    if said is not None:
        st.error(f"{said}. The formula before it is kept.", icon=":material/error:")
