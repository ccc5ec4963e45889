"""The Stepper's part that runs in the browser (walk.js, walk.css), and how its step reaches
Python without a run per step.

The browser draws every step from what walk.py wrote out. It clicks the step it shows into a
hidden segmented control that does not rerun (on_change="ignore"); that control's value comes
with the next run, whatever starts it, and `adopt` takes it as the session's step (app.py
calls it on every full run, the Stepper's fragment on its own runs). Where Python must act on
a move at once, the browser also sends a trigger, which reruns the fragment.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from teaching.steps import N_STEPS

_HERE = Path(__file__).parent
CHANNEL = "w_step_browser"  # the hidden control's key: a widget's view of "step"
CHANNEL_LABEL = "The step the browser shows"
SENT = "step_browser_sent"

WALK = st.components.v2.component(
    "lnlab_stepper_walk",
    html=(
        '<div class="lnlab-walk"><div class="lnlab-part-head"></div>'
        '<div class="lnlab-part-graph"></div><div class="lnlab-part-numbers"></div>'
        '<div class="lnlab-part-folds"></div></div>'
    ),
    css=(_HERE / "walk.css").read_text(encoding="utf-8"),
    js=(_HERE / "walk.js").read_text(encoding="utf-8"),
    # In the page's own document: its heading is the page's h2, the app's styles and the
    # presenter's type apply, and the keys and the tests reach its buttons.
    isolate_styles=False,
)


def adopt() -> None:
    """Take the step the browser moved to since the last run (a different value in the hidden
    control than the one drawn there)."""
    s = st.session_state
    moved = s.get(CHANNEL)
    if moved is not None and moved != s.get(SENT) and moved in range(1, N_STEPS + 1):
        s["step"] = moved


def channel() -> None:
    """The hidden control, holding the session's step as drawn."""
    s = st.session_state
    s[CHANNEL] = s[SENT] = s["step"]
    with st.container(key="stepper_channel"):
        st.segmented_control(
            CHANNEL_LABEL,
            list(range(1, N_STEPS + 1)),
            key=CHANNEL,
            on_change="ignore",
            label_visibility="collapsed",
        )


def draw(data: dict) -> None:
    """The walk, at the session's step; `data`: walk.py's steps and drawings with the inputs'
    version, and whether every move goes to Python at once (`sync`)."""
    WALK(
        key="stepper_walk",
        data={**data, "step": st.session_state["step"]},
        on_moved_change=lambda: None,
    )
