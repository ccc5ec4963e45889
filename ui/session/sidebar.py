"""The controls every page shares, drawn in the sidebar by app.py on every run.

Numbers are typed into text fields (ui.session.fields), so `1e3` means 1000 and a value that is not
a number in range is refused with a message instead of being stored as another number.
"""

from __future__ import annotations

import streamlit as st

from teaching.presets import PRESETS
from ui.entry.limits import EPS_MAX, SIDEBAR
from ui.server import compute
from ui.session import affine_control, state
from ui.session.errors import IN_SIDEBAR, shown_errors
from ui.session.fields import number_field, whole_field


def _dimension(label: str, key: str, help_text: str) -> None:
    limits = SIDEBAR[key]
    whole_field(label, key, limits.low, limits.high, help_text, state.on_shape_change)


def draw(url_path: str) -> None:
    """Preset, shape, seed, eps and dtype; then a check that they define a LayerNorm, with
    the layer options of the page at `url_path` (so it agrees with what the page shows)."""
    with st.sidebar:
        st.selectbox(
            "Preset",
            list(PRESETS),
            help="\n\n".join(f"**{p.name}**: {p.description}" for p in PRESETS.values()),
            **state.bound("preset", state.on_preset_change),
        )
        st.caption(PRESETS[st.session_state["preset"]].description)
        st.radio(
            "Shape",
            list(state.SHAPE_KINDS),
            format_func=state.SHAPE_KINDS.get,
            horizontal=True,
            **state.bound("shape_kind", state.on_shape_change),
        )
        kind = st.session_state["shape_kind"]
        if kind == "tokens":
            cols = st.columns(2)
            with cols[0]:
                _dimension("B (batch)", "b", "Sequences in the batch.")
            with cols[1]:
                _dimension("L (tokens)", "l", "Tokens per sequence.")
        elif kind == "rows":
            _dimension(
                "Vectors (rows)",
                "n",
                "Vectors in the batch, one per row. (In a typed formula N is D, the features "
                "of one vector.)",
            )
        _dimension("D (features)", "d", "Features per vector: LayerNorm averages over these.")
        seed = SIDEBAR["seed"]
        whole_field(
            "Random seed", "seed", seed.low, seed.high, "Same seed, same numbers.", state.regenerate
        )
        number_field(
            "eps",
            "eps",
            f"Added to the variance before the square root, from 0 to {EPS_MAX:g} (type 1e-5 "
            "for 0.00001). 0 is allowed: then a vector with zero variance has no defined output.",
        )
        st.radio("dtype", state.DTYPES, horizontal=True, **state.bound("dtype"))
        with shown_errors(way_out=IN_SIDEBAR):
            compute.forward(affine_control.for_page(state.inputs(), url_path))
        st.divider()
        st.toggle(
            "Presenter mode",
            help="Larger type and contrast for a projector; the sidebar steps aside (the "
            "Controls button at the top of the page brings it back).",
            **state.bound("presenter"),
        )
