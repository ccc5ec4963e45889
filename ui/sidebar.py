"""The controls every page shares, drawn in the sidebar by app.py on every run.

Numbers are typed into text fields and read by ui.numbers, so `1e3` means 1000 and a value
that is not a number in range is refused with a message instead of being stored as another
number (a browser's number field would read `1e3` as 1).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from teaching.presets import PRESETS
from ui import state
from ui.errors import shown_errors
from ui.limits import EPS_MAX, SIDEBAR
from ui.numbers import format_number, parse_eps, parse_whole


def _field(
    label: str,
    key: str,
    help_text: str,
    parse: Callable[[object], object],
    on_change: Callable[[], None] | None = None,
) -> None:
    """A number typed as text; a refused entry is named under the field, the old value kept."""
    st.text_input(
        label, help=help_text, **state.bound(key, on_change, parse=parse, show=format_number)
    )
    s = st.session_state
    problem = s["field_problems"].get(key)
    if problem is not None:
        # Said once: the field itself shows the value kept from then on.
        s["field_problems"] = {k: v for k, v in s["field_problems"].items() if k != key}
        typed, reason = problem
        shown = format_number(s[key])
        st.error(f"{label}: {typed} {reason}. It stays {shown}.", icon=":material/error:")


def _dimension(label: str, key: str, help_text: str) -> None:
    limits = SIDEBAR[key]
    parse = partial(parse_whole, low=limits.low, high=limits.high)
    _field(
        label, key, f"{help_text} From {limits.low} to {limits.high}.", parse, state.on_shape_change
    )


def draw() -> None:
    """Preset, shape, seed, eps and dtype; then a check that they define a LayerNorm."""
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
            _dimension("N (rows)", "n", "Vectors in the batch, one per row.")
        _dimension("D (features)", "d", "Features per vector: LayerNorm averages over these.")
        seed = SIDEBAR["seed"]
        _field(
            "Random seed",
            "seed",
            f"Same seed, same numbers. A whole number from {seed.low} to {seed.high}.",
            partial(parse_whole, low=seed.low, high=seed.high),
            state.regenerate,
        )
        _field(
            "eps",
            "eps",
            f"Added to the variance before the square root, from 0 to {EPS_MAX:g} (type 1e-5 "
            "for 0.00001). 0 is allowed: then a vector with zero variance has no defined output.",
            parse_eps,
        )
        st.radio("dtype", state.DTYPES, horizontal=True, **state.bound("dtype"))
        with shown_errors():
            state.check()
        st.divider()
        st.toggle(
            "Presenter mode",
            help="Larger type and contrast for a projector; the sidebar steps aside (the "
            "Controls button at the top of the page brings it back).",
            **state.bound("presenter"),
        )
