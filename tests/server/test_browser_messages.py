"""A browser's messages change its own session only (ui/server/browser_messages.py)."""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest
import streamlit as st
from streamlit.runtime.app_session import AppSession

import ui.server.browser_messages  # noqa: F401  # what app.py imports first
from ui.streamlit_private import WidgetMetadata, WidgetState, WStates


def test_a_clear_cache_message_leaves_the_shared_caches_and_the_session_alone() -> None:
    calls = []

    @st.cache_data(max_entries=4, ttl=60)
    def square(value: int) -> int:
        calls.append(value)
        return value * value

    assert square(3) == 9 and calls == [3]
    session = MagicMock()
    AppSession._handle_clear_cache_request(session)  # what a "clear_cache" BackMsg calls
    assert square(3) == 9
    assert calls == [3], "the shared cache was emptied"
    session._session_state.clear.assert_not_called()
    square.clear()


def _hand_built_editor_value(text: str) -> tuple[WStates, str]:
    """A data editor's state as a browser's message leaves it: serialized JSON text."""
    widget_id = "$$ID-0123456789abcdef-editor"
    states = WStates()
    states.set_widget_metadata(
        WidgetMetadata(widget_id, lambda value: value, lambda value: value, value_type="json_value")
    )
    states.set_widget_from_proto(WidgetState(id=widget_id, json_value=text))
    return states, widget_id


@pytest.mark.parametrize("depth", [12, 900, 100_000])
def test_a_value_nested_deeper_than_any_widget_sends_reads_as_no_value(depth: int) -> None:
    """A data editor's edits nest 3 deep; a hand-built value nested 900 deep deserializes, and
    Streamlit's own copy of it would then recurse too deep on every later run."""
    states, widget_id = _hand_built_editor_value("[" * depth + "]" * depth)
    with pytest.raises(KeyError):
        states[widget_id]


def test_a_value_nested_as_deep_as_a_widget_sends_is_read() -> None:
    states, widget_id = _hand_built_editor_value('{"edited_rows": {"0": {"0": [1.5]}}}')
    assert states[widget_id] == {"edited_rows": {"0": {"0": [1.5]}}}
