"""Data editors bound to arrays in the shared state."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from ui import caps
from ui.errors import shown_errors
from ui.tables import frame_to_array, vectors_frame


def array_editor(
    name: str,
    array: np.ndarray,
    store: Callable[[np.ndarray], None],
    index: list[str] | None = None,
) -> None:
    """Edit `array` cell by cell; a valid edit is passed to `store` and the page reruns.

    The editor's key carries the state's editor_version, so arrays replaced from outside
    (preset, CSV, another upstream gradient) show up instead of old edits. An invalid cell
    shows st.error under the table and leaves the stored array as it was. An array larger than
    the table cap is not drawn (a note says why): the browser would be slow to fill it.
    """
    too_large = caps.refusal("inputs", array.shape, what=f"The table of {name}")
    if too_large is not None:
        st.info(too_large)
        return
    frame = vectors_frame(array)
    if index is not None:
        frame.index = index
    key = f"editor_{name}_{st.session_state['editor_version']}"
    edited = st.data_editor(frame, key=key, width="stretch")
    with shown_errors():
        new = frame_to_array(edited, name, array.shape)
        if not np.array_equal(new, array):
            store(new)
            st.rerun()
