"""Choosing one vector of a batch, shared by every page that shows a single vector."""

from __future__ import annotations

import streamlit as st

from ui.session.fields import whole_field


def pick_vector(shape: tuple[int, ...], rows: bool = True) -> tuple[int, ...]:
    """Draw the pickers for `shape` and return the chosen vector's index (without the D axis).

    (D,) needs no picker; (N, D) picks a row (only if `rows`); (B, L, D) picks b and t.
    The choice lives in the shared state, so it survives page switches.
    """
    if len(shape) == 1 or (len(shape) == 2 and not rows):
        return ()
    s = st.session_state
    s["view_b"] = min(s["view_b"], shape[0] - 1)
    columns = st.columns(4)
    label = "Row" if len(shape) == 2 else "Batch element b"
    with columns[0]:
        whole_field(label, "view_b", 0, shape[0] - 1)
    if len(shape) == 2:
        return (s["view_b"],)
    s["view_t"] = min(s["view_t"], shape[1] - 1)
    with columns[1]:
        whole_field("Token t", "view_t", 0, shape[1] - 1)
    return (s["view_b"], s["view_t"])
