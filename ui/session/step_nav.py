"""The stepper's navigation row: the step's heading and the controls bound to the session's step.

It reads and moves st.session_state["step"], so it lives with the session; ui/draw/step_view.py
draws the step it returns.
"""

from __future__ import annotations

import streamlit as st

from teaching.steps import N_STEPS, Step, step
from ui.session import clicks, state


def _go(delta: int) -> None:
    s = st.session_state
    s["step"] = min(N_STEPS, max(1, s["step"] + delta))


def navigation() -> Step:
    """The step's heading and the row that moves between steps; returns the current Step."""
    s = st.session_state
    current = step(s["step"])
    direction = "backward" if current.backward else "forward"
    st.header(
        f"Step {current.number} of {N_STEPS} · {direction} · node {current.index}: "
        f"{'d' if current.backward else ''}{current.node}"
        + (" and dx" if current.backward and current.index == 1 else "")
    )
    nav = st.container(key="stepper_nav").columns([1, 1, 4, 3], vertical_alignment="bottom")
    nav[0].button(
        "Prev",
        **clicks.once("step_prev", _go, -1),
        disabled=s["step"] == 1,
        width="stretch",
        icon=":material/arrow_back:",
    )
    nav[1].button(
        "Next",
        **clicks.once("step_next", _go, 1),
        disabled=s["step"] == N_STEPS,
        width="stretch",
        icon=":material/arrow_forward:",
        type="primary",
    )
    # On a projector the slider's label gives way to the step (its number shows on the knob).
    nav[2].slider(
        "Step",
        1,
        N_STEPS,
        label_visibility="collapsed" if s["presenter"] else "visible",
        **state.bound("step", widget="slider"),
    )
    nav[3].selectbox(
        "Jump to",
        list(range(1, N_STEPS + 1)),
        format_func=lambda n: step(n).label,
        **state.bound("step", widget="jump"),
    )
    return current
