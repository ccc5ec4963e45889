"""Which run a class's change asks of a student's session (ui/live/wake.wanted), and when.

The wake-ups themselves, on a real server, are in tests/server/test_class_wakeups.py.
"""

from __future__ import annotations

from streamlit.proto.ClientState_pb2 import ClientState

from ui.live.store import Asked, Follow, Glance, Question
from ui.live.wake import FEED_FIRST_S, STEPPER, BarView, Listener, fed_first, wanted

QUESTION = Question(7, Asked("Q", "Why?", ("a", "b"), 0, "Because."), 1, True, False, 1.0)


def _listener(**changes: object) -> Listener:
    rerun = ClientState(page_script_hash="stepper-hash", query_string="step=2")
    base = dict(code="ABCD2345", following=True, rerun=rerun, bar="bar-id", step="step-id",
                follow_shown=3, bar_shown=BarView(False, None))  # fmt: skip
    return Listener(**{**base, **changes})


def _glance(version: int = 3, page: str = STEPPER, question: Question | None = None,
            ended: bool = False) -> Glance:  # fmt: skip
    return Glance(Follow(version, page, "step=3"), ended, question)


def test_nothing_new_wakes_nobody():
    assert wanted(_listener(), _glance()) is None


def test_a_new_step_reruns_the_steppers_fragment_alone_with_the_sessions_page_and_link():
    rerun = wanted(_listener(), _glance(version=4))
    assert rerun is not None
    assert (rerun.fragment_id, rerun.page_script_hash, rerun.query_string) == (
        "step-id", "stepper-hash", "step=2"
    )  # fmt: skip


def test_a_move_to_another_page_or_off_the_stepper_reruns_the_whole_app():
    assert wanted(_listener(), _glance(version=4, page="jacobian")).fragment_id == ""
    assert wanted(_listener(step=""), _glance(version=4)).fragment_id == ""


def test_a_student_exploring_on_their_own_is_not_moved():
    assert wanted(_listener(following=False), _glance(version=4)) is None


def test_a_question_or_the_end_reruns_the_bar_even_for_a_student_exploring():
    explorer = _listener(following=False)
    assert wanted(explorer, _glance(question=QUESTION)).fragment_id == "bar-id"
    assert wanted(explorer, _glance(ended=True)).fragment_id == "bar-id"
    shown = _listener(bar_shown=BarView(False, QUESTION))
    assert wanted(shown, _glance(question=QUESTION)) is None


def test_a_move_and_a_question_together_rerun_the_whole_app():
    assert wanted(_listener(), _glance(version=4, question=QUESTION)).fragment_id == ""


def test_a_wake_up_that_did_not_bring_the_change_comes_again_as_the_whole_app():
    assert wanted(_listener(), _glance(version=4), again=True).fragment_id == ""
    assert wanted(_listener(), _glance(), again=True) is None


def test_a_step_waits_a_moment_for_a_walk_that_has_it_from_the_feed_and_nothing_else_does():
    student, young, old = _listener(), FEED_FIRST_S / 3, FEED_FIRST_S * 1.5
    step = wanted(student, _glance(version=4))
    assert fed_first(student, step, True, young)
    assert not fed_first(student, step, True, old)  # then the step's lines come
    assert not fed_first(student, step, False, young)  # no walk asks: the run brings the step
    for other in (_glance(version=4, page="jacobian"), _glance(version=4, question=QUESTION)):
        assert not fed_first(student, wanted(student, other), True, young)  # the whole app
    asked = _listener(following=False)
    assert not fed_first(asked, wanted(asked, _glance(question=QUESTION)), True, young)
    off_stepper = _listener(step="")
    assert not fed_first(off_stepper, wanted(off_stepper, _glance(version=4)), True, young)
