"""Number fields: a number typed as text, read by ui.entry.numbers, bound to a state key.

A browser's number field reads `1e3` as 1 in an integer field, so every number a student
types goes through a text field instead: the text is read exactly, or refused with a message
under the field while the state keeps its value (which the field shows again).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from ui.entry.limits import SIDEBAR
from ui.entry.numbers import format_number, parse_whole
from ui.session import state


def number_field(
    label: str,
    key: str,
    help_text: str,
    parse: Callable[[object], object] | None = None,
    on_change: Callable[[], None] | None = None,
) -> None:
    """A number typed as text; a refused entry is named under the field, the old value kept.

    parse: how this field reads the text, where it is narrower than the state key's own check
    (ui.session.state.SCHEMA), which reads it otherwise: either way the text is read once."""
    reads = parse or state.SCHEMA[key].valid
    st.text_input(
        label, help=help_text, **state.bound(key, on_change, parse=reads, show=format_number)
    )
    said = take_refusal(label, key)
    if said is not None:
        shown = format_number(st.session_state[key])
        st.error(f"{said}. It stays {shown}.", icon=":material/error:")


def take_refusal(label: str, key: str) -> str | None:
    """What the field `label` refused and why, as a sentence (see state.bound), or None; taken,
    so it is said once: the field itself shows the value kept from then on."""
    s = st.session_state
    problem = s["field_problems"].get(key)
    if problem is not None:
        s["field_problems"] = {k: v for k, v in s["field_problems"].items() if k != key}
        typed, reason = problem
        # A reason that quotes the text ("holds “abc”, ...") needs it only once.
        return f"{label} {reason}" if reason.startswith("holds ") else f"{label}: {typed} {reason}"
    return None


def whole_field(
    label: str,
    key: str,
    low: int,
    high: int,
    help_text: str = "",
    on_change: Callable[[], None] | None = None,
) -> None:
    """A whole number from `low` to `high` (both included) typed as text; read by the state
    key's own check where those are the key's own limits (the sidebar's), else by this field."""
    limits = f"A whole number from {low} to {high}."
    own = SIDEBAR.get(key)
    narrower = own is None or (own.low, own.high) != (low, high)
    parse = partial(parse_whole, low=low, high=high) if narrower else None
    number_field(label, key, f"{help_text} {limits}".strip(), parse, on_change)
