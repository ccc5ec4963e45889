"""A browser's messages change its own session only (ui/server/browser_messages.py)."""

from __future__ import annotations

from unittest.mock import MagicMock

import streamlit as st
from streamlit.runtime.app_session import AppSession

import ui.server.browser_messages  # noqa: F401  # what app.py imports first


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
