"""The Stepper's part that runs in the browser (walk.js, walk.css), and how its step reaches
Python without a run per step.

The browser draws every step from what walk.py wrote out. It clicks the step it shows into a
hidden segmented control that does not rerun (on_change="ignore"); that control's value comes
with the next run, whatever starts it, and `adopt` takes it as the session's step (app.py
calls it on every full run, the Stepper's fragment on its own runs). Where Python must act on
a move at once, the browser also sends a trigger, which reruns the fragment.

In a live class, the walk and the hidden control are a fragment of their own within the
Stepper's (`followed`): for a following student, the one the class's watcher wakes when only
the instructor's step moved (ui/live/wake.py); for the instructor, the one their move reruns to
publish the step. Its run sends the walk's new step and the control, and a following
student's also the step's typeset lines, a dozen messages; the Stepper's whole fragment sends
about 230 (every step's lines, the folds), and a tab renders its whole page again for nearly
every message (measured: 4 to 9 times a step, each a React tree of 4,200 components with
every step's lines on a phone's page, 1,900 with its step's alone), with twelve phones and
the projector sharing two cores.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from pages.stepper import feed
from teaching.steps import N_STEPS
from ui.live import follow, membership

_HERE = Path(__file__).parent
CHANNEL = "w_step_browser"  # the hidden control's key: a widget's view of "step"
CHANNEL_LABEL = "The step the browser shows"
SENT = "step_browser_sent"
# What walk.js reads on every drawing; the rest (the twenty steps, the drawings) goes as one
# JSON text, written once per Stepper run (see draw).
EVERY_DRAWING = ("version", "sync", "presenter")

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
    # Not in a container of its own: a following phone renders its page again for each
    # message of a step (a block is one more).
    st.segmented_control(
        CHANNEL_LABEL,
        list(range(1, N_STEPS + 1)),
        key=CHANNEL,
        on_change="ignore",
        label_visibility="collapsed",
    )


def draw(data: dict, step_parts: Callable[[bool], None]) -> None:
    """The walk at the session's step, and the hidden control holding it; `data`: walk.py's
    steps and drawings with the inputs' version, and whether every move goes to Python at
    once (`sync`); `step_parts(alone)`: what Streamlit draws of the steps beside the walk
    (every step's, or the session's step's `alone`). In its own fragment for the instructor
    and a following student, quiz off (with the quiz on, a step's question is asked by the
    Stepper's fragment, which must run for it); a following student's fragment draws its
    step's parts too, alone."""
    me = membership.current()
    # As text: each run of the walk's fragment alone sends `data` again, and Streamlit writes
    # a dict out anew each time (about 80 kB: two thirds of a following student's run on the
    # server, a hundred students a step); the text is written once here. walk.js reads it
    # only for a version it has not read. (Sent whole each time: a browser can skip a drawing
    # that another replaces before it is rendered, so a step alone could reach a browser that
    # never read its steps.)
    sent = {key: data[key] for key in EVERY_DRAWING}
    sent["walk"] = json.dumps({k: v for k, v in data.items() if k not in EVERY_DRAWING})
    if me is None or st.session_state["quiz"] or not (me.teaching or me.following):
        follow.waiting_note()
        _walk(sent)
        step_parts(False)
    elif me.following:
        followed(sent, step_parts)
    else:
        followed(sent, None)
        step_parts(False)


@st.fragment
def followed(data: dict, step_parts: Callable[[bool], None] | None) -> None:
    """The walk of an instructor or a following student: a run of this fragment alone (a
    move, sent at once, or a student woken) reuses the `data` of the Stepper's last run. The
    instructor's publishes the step; for a student, anything more than the step reruns the
    whole app (follow.in_stepper, which also tells the class's watcher to wake this
    fragment), and the step's parts (`step_parts`) are drawn for the step alone."""
    adopt()
    # The address keeps the step (a reload, a link copied) by walk.js: written here, it would
    # be one more message for the phone to render.
    with follow.in_stepper("stepper"):
        follow.waiting_note()
        if step_parts is None:  # the instructor's
            _walk(data)
        else:
            _walk({**data, "feed": _feed()})
            step_parts(True)


def _feed() -> dict:
    """What a following student's walk asks the server for the class's next step with
    (ui/live/feed.py): the class, the follow version this lab shows, and its view without the
    step, which the class's must equal for the walk to take a step alone."""
    me = membership.current()
    return {"address": feed.address(me.code), "after": me.applied, "view": follow.own_view()}


def _walk(data: dict) -> None:
    WALK(
        key="stepper_walk",
        data={**data, "step": st.session_state["step"]},
        on_moved_change=lambda: None,
    )
    channel()
