"""The way forward from inputs with no defined output (ln_core.forward.ZeroVariance: a vector
whose entries are all equal, at eps = 0): its message carries the buttons that fix it, on
every page (ui.session.errors draws them under its message)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.session import state
from ui.streamlit_private import StreamlitDuplicateElementKey

# eps's usual value (PyTorch's default): every variance then has something to add to.
DEFINED_EPS = 1e-5
# The spread added to x, as a fraction of its largest |entry| (at least 1): small enough to
# keep the example, large enough that no rounding makes two entries equal again.
SPREAD = 0.01


def set_eps() -> None:
    """Button callback: eps = 1e-5."""
    s = st.session_state
    s["eps"] = DEFINED_EPS
    s["field_problems"] = {k: v for k, v in s["field_problems"].items() if k != "eps"}


def spread_x() -> None:
    """Button callback: x plus a small spread, different in every entry, so no vector (nor
    feature, for BatchNorm) has equal entries."""
    x = st.session_state["x"]
    scale = max(float(np.max(np.abs(x))), 1.0)
    pattern = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    state.set_array("x", x + SPREAD * scale * pattern)
    state.bump_editors()


def way_out(place: str) -> None:
    """The two fixes, side by side, keyed by `place` (ui.session.errors.PAGE or IN_SIDEBAR); a
    spread cannot help a vector of one entry."""
    left, right = st.columns(2)
    try:
        left.button(
            "Set eps to 1e-5",
            key=f"way_out_eps_{place}",
            on_click=set_eps,
            icon=":material/build:",
            type="primary",
            help="eps is added to the variance before the square root: with eps > 0 a constant "
            "vector normalizes to 0.",
        )
    except StreamlitDuplicateElementKey:
        return  # a second message in the same place this run: the first one carries them
    if st.session_state["x"].shape[-1] > 1:
        right.button(
            "Add a small spread to x",
            key=f"way_out_spread_{place}",
            on_click=spread_x,
            icon=":material/scatter_plot:",
            help=f"Adds up to ±{SPREAD:.0%} of x's largest entry, different in every entry "
            "(every vector of x changes a little).",
        )
