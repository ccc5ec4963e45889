"""One click, one action, even when Streamlit delivers the click twice.

Streamlit's browser code holds a click for a zero-delay timer before sending it. A fragment's
`run_every` timer that fires in between sends the state of every widget, the held click
included, and the server runs the click's callback for that message and again for the click's
own. In a live class this moved the instructor's Stepper two steps for one Next (the class
test failed on it once in CI; tests/browser/test_clicks.py holds each click until a timer's
tick has carried it, and sees it every time). An instructor's session runs such a timer on
every page (ui/live/follow.py) and one on the Class page (pages/teach/teacher.py); a student's
class bar runs one every 30 s (ui/live/student.py).

So a callback whose second run would add to what the first did (a step, a question, a round, a
vote) is handed its button's drawing, and only the first delivery of a click on that drawing
runs it. A new click is always on a new drawing, since the run a click starts draws its button
again; a second click before that run has drawn the button is taken for the first one, as a
double click is. The second delivery must come before the button is drawn again, so no such
button sits in a fragment with a timer, whose every tick draws it again (measured: one Ask
there asked three questions). The class bar's Vote is safe there: after a vote the bar draws
no Vote button.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import Any

import streamlit as st

ACTED = "clicks_acted"
_DRAWINGS = count(1)  # one numbering for the process: no two drawings share a number


def once(button: str, callback: Callable[..., None], *args: Any) -> dict:
    """Keyword arguments for st.button: its key `button`, and `callback(*args)` run once per
    click on this drawing of the button."""
    drawing = next(_DRAWINGS)
    return {"key": button, "on_click": _first_delivery, "args": (button, drawing, callback, args)}


def _first_delivery(
    button: str, drawing: int, callback: Callable[..., None], args: tuple[Any, ...]
) -> None:
    acted = st.session_state[ACTED]
    if acted.get(button) == drawing:
        return  # the same click, delivered again
    st.session_state[ACTED] = {**acted, button: drawing}  # a new dict: the default is shared
    callback(*args)
