"""How every page opens: its heading and the one sentence that says what to look at, so the
first screen holds the page's idea (its main figure or result follows at once, in a container
keyed "main_figure", which the browser tests find on the first screen)."""

from __future__ import annotations

import streamlit as st


def opening(title: str, idea: str) -> None:
    """The page's heading, then its idea in one sentence (the lab's own Markdown and maths)."""
    st.title(title)
    with st.container(key="idea"):
        st.markdown(idea)
