"""Presenter mode: type and contrast for a projector, and the stepper's controls kept in view."""

from __future__ import annotations

import streamlit as st

# Larger type, black text and bigger buttons for a projector.
_PRESENTER_RULES = """
html, body, [data-testid="stAppViewContainer"] { font-size: 21px; }
[data-testid="stMarkdownContainer"] p,
[data-testid="stCaptionContainer"] { color: #000 !important; }
h1 { font-size: 2.4rem !important; }
h3 { font-size: 1.7rem !important; }
[data-testid="stDataFrame"] { font-size: 1.1rem; }
button[kind] { font-size: 1.1rem !important; min-height: 3rem; }
.st-key-stepper_nav { border-bottom: 2px solid #000; padding-bottom: 0.4rem; }
"""

# Always on: the stepper's navigation row stays in view even outside presenter mode. Streamlit
# wraps the row in a box exactly its height, which leaves it no room to stick: the wrapper is
# dissolved so the row sticks within the page.
_STICKY_NAV = """
[data-testid="stLayoutWrapper"]:has(> .st-key-stepper_nav) { display: contents; }
.st-key-stepper_nav { position: sticky; top: 3.2rem; z-index: 990; background: #fff; }
"""
_BASE_CSS = f"<style>{_STICKY_NAV}</style>"
_PRESENTER_CSS = f"<style>{_STICKY_NAV}{_PRESENTER_RULES}</style>"


def apply_style() -> None:
    """Inject the page style for the current mode."""
    st.html(_PRESENTER_CSS if st.session_state["presenter"] else _BASE_CSS)
