"""The live class in AppTest: an instructor and students as separate sessions on one store.

The store is a real SQLite file per test (LNLAB_CLASS_DB). AppTest runs whole scripts, so a
student's polling fragment is seen at each of their runs; real browsers and replicas are in
tests/browser/test_live_class.py.
"""

from __future__ import annotations

import pytest

from ui.live.store import Store

CLASS_PAGE = "pages/teach/class.py"


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    monkeypatch.setenv("LNLAB_CLASS_DB", url)
    return url


def _instructor(lab):
    lab.at.switch_page(CLASS_PAGE)
    lab.run()
    lab.click("Start a class")
    me = lab.state["live"]
    assert me.teaching and len(me.code) == 8
    return me


def _texts(lab) -> str:
    els = [*lab.at.markdown, *lab.at.caption, *lab.at.success, *lab.at.info, *lab.at.error]
    return "\n".join(e.value for e in els)


def test_one_student_alone_never_opens_the_store(lab, monkeypatch):
    monkeypatch.setenv("LNLAB_CLASS_DB", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    lab.open("Stepper").click("Next")
    lab.assert_clean()
    # An unreachable store would have left a message: it was never opened.
    assert "live" not in lab.state and lab.state["live_problem"] == ""


def test_the_class_page_says_when_the_store_is_unreachable(lab, monkeypatch):
    monkeypatch.setenv("LNLAB_CLASS_DB", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    lab.at.switch_page(CLASS_PAGE)
    lab.run().click("Start a class")
    lab.assert_no_exception()
    assert any("cannot be reached" in w for w in lab.warnings()), lab.warnings()
    assert "live" not in lab.state


def test_a_class_runs_from_start_to_reveal(db, lab, open_link):
    me = _instructor(lab)
    assert me.shown_code in _texts(lab)
    student = open_link({"join": me.code})
    student.assert_clean()
    assert student.state["live"].code == me.code
    assert f"Class {me.shown_code}" in _texts(student)
    # The instructor moves to step 4: the student's lab follows.
    lab.open("Stepper")
    lab.step_to(4)
    student.run().run()
    assert student.state["step"] == 4
    assert student.at.session_state["live"].applied >= 1
    # Ask the current step's question; the student votes.
    lab.at.switch_page(CLASS_PAGE)
    lab.run().click("Ask")
    question = Store(db).status(me.code, me.secret).question
    assert question is not None and question.asked.title.startswith("Step 4")
    student.run()
    student.at.radio(key=f"live_choice_{question.id}_1").set_value(
        question.asked.options[question.asked.answer]
    )
    student.run()
    student.at.button(key=f"live_vote_{question.id}_1").click()
    student.run()
    assert "Your vote is counted" in _texts(student)
    lab.run()
    assert lab.metrics()["Answered, round 1"] == "1 of 1"
    lab.click("Reveal")
    assert "The answer:" in _texts(lab)
    student.run()
    assert "Right:" in _texts(student)
