"""Choosing one vector of a batch, shared by every page that shows a single vector."""

from __future__ import annotations

import streamlit as st

from ui.session.fields import whole_field


def chosen_vector(shape: tuple[int, ...], rows: bool = True) -> tuple[int, ...]:
    """The chosen vector's index for `shape` (without the D axis), kept within the shape.

    (D,) has no choice; (N, D) a row (only if `rows`); (B, L, D) b and t. The choice lives in
    the shared state, so it survives page switches.
    """
    if len(shape) == 1 or (len(shape) == 2 and not rows):
        return ()
    s = st.session_state
    s["view_b"] = min(s["view_b"], shape[0] - 1)
    if len(shape) == 2:
        return (s["view_b"],)
    s["view_t"] = min(s["view_t"], shape[1] - 1)
    return (s["view_b"], s["view_t"])


def pick_vector(shape: tuple[int, ...], rows: bool = True) -> tuple[int, ...]:
    """Draw the pickers of chosen_vector's choice for `shape` and return it."""
    if not chosen_vector(shape, rows):
        return ()
    columns = st.columns(4)
    label = "Row" if len(shape) == 2 else "Batch element b"
    with columns[0]:
        whole_field(label, "view_b", 0, shape[0] - 1)
    if len(shape) == 3:
        with columns[1]:
            whole_field("Token t", "view_t", 0, shape[1] - 1)
    return chosen_vector(shape, rows)
