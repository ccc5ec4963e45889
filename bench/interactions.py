"""The clicks inside the lab's fragments that bench/page_cpu.py times, page by page.

Each is what a student does on the page (the Stepper's Next, a vector picker, a toggle, a
chooser); a browser reruns only the page's fragment for it. Each page's list ends where it
began (Next then Prev, a toggle on then off), so every round starts from the default inputs.
Widgets are found by the keys ui/session/state.bound gives them ("w_<state key>_"), values are
written out (the bug's and documents' keys): importing the app's packages here would pin them to
this checkout when --root measures another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from streamlit.testing.v1 import AppTest

from pages.stepper.browser import CHANNEL
from teaching.steps import N_STEPS


@dataclass(frozen=True)
class Interaction:
    """page: the page's name (its script's stem); label: what the student does; act: the
    change made to the AppTest before the fragment's rerun; nested: the widget is in the
    fragment inside the page's (bench.fragment_rerun.page_fragment)."""

    page: str
    label: str
    act: Callable[[AppTest], object]
    nested: bool = False  # in the fragment inside the page's fragment, which reruns alone


def toggled(key: str, on: bool) -> Callable[[AppTest], object]:
    return lambda at: at.toggle(key=key).set_value(on)


def typed(key: str, text: str) -> Callable[[AppTest], object]:
    return lambda at: at.text_input(key=key).input(text)


def moved(delta: int) -> Callable[[AppTest], object]:
    """The Stepper's browser part moved `delta` steps: its hidden control (pages/stepper/
    browser.py) carries the step to the run that comes next."""

    def move(at: AppTest) -> None:
        at.session_state[CHANNEL] = min(N_STEPS, max(1, at.session_state["step"] + delta))

    return move


def chosen(key: str, value: str) -> Callable[[AppTest], object]:
    # By value: AppTest's select_index passes the shown label where a value is due.
    return lambda at: at.selectbox(key=key).set_value(value)


def picked(key: str, value: str) -> Callable[[AppTest], object]:
    return lambda at: at.radio(key=key).set_value(value)


INTERACTIONS: tuple[Interaction, ...] = (
    Interaction("stepper", "Next (the browser's step, sent with a run)", moved(1)),
    Interaction("stepper", "Prev (the browser's step, sent with a run)", moved(-1)),
    Interaction("stepper", "Predict before reveal on", toggled("w_quiz_", True)),
    Interaction("stepper", "Predict before reveal off", toggled("w_quiz_", False)),
    # A page's nested clicks come last: after a nested fragment's rerun AppTest holds that
    # fragment's widgets only.
    Interaction("jacobian", "Row 1", typed("w_view_b_", "1")),
    Interaction("jacobian", "Row 0", typed("w_view_b_", "0")),
    Interaction("jacobian", "Three paths on", toggled("w_jacobian_paths_", True), nested=True),
    Interaction("jacobian", "Three paths off", toggled("w_jacobian_paths_", False), nested=True),
    Interaction("gradcheck", "Row 1", typed("w_view_b_", "1")),
    Interaction("gradcheck", "Row 0", typed("w_view_b_", "0")),
    Interaction("gradcheck", "A known bug", chosen("w_bug_", "forget_gamma"), nested=True),
    Interaction("gradcheck", "No bug", chosen("w_bug_", "none"), nested=True),
    Interaction("audit", "Another document", chosen("w_audit_document_", "001")),
    Interaction("audit", "The first document", chosen("w_audit_document_", "000")),
    Interaction("batchnorm", "Normalize: batch", picked("w_norm_kind_", "batch")),
    Interaction("batchnorm", "Normalize: rms", picked("w_norm_kind_", "rms")),
    Interaction("batchnorm", "Normalize: layer", picked("w_norm_kind_", "layer")),
)
