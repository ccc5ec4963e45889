"""Presenter mode: type and contrast for a projector, and the stepper's controls kept in view."""

from __future__ import annotations

import streamlit as st

# Larger type, darker text and thicker focus rings; the stepper's navigation row sticks to the
# top of the page so Next and Prev never scroll away.
_PRESENTER_CSS = """
<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 21px; }
[data-testid="stMarkdownContainer"] p,
[data-testid="stCaptionContainer"] { color: #000 !important; }
h1 { font-size: 2.4rem !important; }
h3 { font-size: 1.7rem !important; }
[data-testid="stDataFrame"] { font-size: 1.1rem; }
button[kind] { font-size: 1.1rem !important; min-height: 3rem; }
.st-key-stepper_nav {
  position: sticky; top: 3.2rem; z-index: 990; background: #fff;
  border-bottom: 2px solid #000; padding-bottom: 0.4rem;
}
</style>
"""

# Always on: the stepper's navigation row stays in view even outside presenter mode.
_BASE_CSS = """
<style>
.st-key-stepper_nav { position: sticky; top: 3.2rem; z-index: 990; background: #fff; }
</style>
"""


def apply_style() -> None:
    """Inject the page style for the current mode."""
    css = _PRESENTER_CSS if st.session_state["presenter"] else _BASE_CSS
    st.html(css)
