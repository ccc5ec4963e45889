"""The controls every page shares, drawn in the sidebar by app.py on every run."""

from __future__ import annotations

import streamlit as st

from teaching.presets import PRESETS
from ui import state
from ui.errors import shown_errors


def _dimension(label: str, key: str, help_text: str) -> None:
    low, high = state.LIMITS[key]
    st.number_input(
        label,
        min_value=low,
        max_value=high,
        step=1,
        key=key,
        help=help_text,
        on_change=state.on_shape_change,
    )


def draw() -> None:
    """Preset, shape, seed, eps and dtype; then a check that they define a LayerNorm."""
    with st.sidebar:
        st.selectbox(
            "Preset",
            list(PRESETS),
            key="preset",
            on_change=state.on_preset_change,
            help="\n\n".join(f"**{p.name}**: {p.description}" for p in PRESETS.values()),
        )
        st.caption(PRESETS[st.session_state["preset"]].description)
        st.radio(
            "Shape",
            list(state.SHAPE_KINDS),
            format_func=state.SHAPE_KINDS.get,
            key="shape_kind",
            on_change=state.on_shape_change,
            horizontal=True,
        )
        kind = st.session_state["shape_kind"]
        if kind == "tokens":
            cols = st.columns(2)
            with cols[0]:
                _dimension("B (batch)", "b", "Sequences in the batch.")
            with cols[1]:
                _dimension("L (tokens)", "l", "Tokens per sequence.")
        elif kind == "rows":
            _dimension("N (rows)", "n", "Vectors in the batch, one per row.")
        _dimension("D (features)", "d", "Features per vector: LayerNorm averages over these.")
        st.number_input(
            "Random seed",
            min_value=0,
            max_value=state.LIMITS["seed"][1],
            step=1,
            key="seed",
            on_change=state.regenerate,
            help="Same seed, same numbers.",
        )
        st.number_input(
            "eps",
            min_value=0.0,
            max_value=10.0,
            step=1e-5,
            format="%.1e",
            key="eps",
            help="Added to the variance before the square root. 0 is allowed: then a "
            "vector with zero variance has no defined output.",
        )
        st.radio("dtype", state.DTYPES, key="dtype", horizontal=True)
        with shown_errors():
            state.check()
        st.divider()
        st.toggle(
            "Presenter mode",
            help="Larger type and contrast for a projector; the sidebar steps aside (the "
            "Controls button at the top of the page brings it back).",
            **state.bound("presenter"),
        )
