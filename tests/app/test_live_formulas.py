"""A live class derives a gradient: the instructor asks "derive dx", students type formulas on
their own screens, the derive page's judge judges each, and the Class page shows the room's
mistakes as a histogram of categories, never a student's text unless the instructor opens it.

The store is a real SQLite file per test (LNLAB_CLASS_DB); tests/live/test_formula_answers.py
runs the store on PostgreSQL too.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from ln_core.formula.tokens import MAX_CHARS
from ui.live import formulas, tally
from ui.live.formulas import choices
from ui.live.store import Judged, Store

CLASS_PAGE = "pages/teach/class.py"
DX = next(title for title, target in choices().items() if target == "dx")
RIGHT = "rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))"
SIGN = "rstd * (dxhat + mean(dxhat) - xhat * mean(dxhat * xhat))"
UNNAMED = "dxhat * 3"
HOSTILE = "<b>x</b> + **[a](javascript:alert(1))"  # unreadable, and hostile


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    monkeypatch.setenv("LNLAB_CLASS_DB", url)
    return url


def _texts(lab) -> str:
    els = [
        *lab.at.markdown, *lab.at.caption, *lab.at.success, *lab.at.info, *lab.at.error,
        *lab.at.warning, *lab.at.latex,
    ]  # fmt: skip
    return "\n".join(e.value for e in els)


def _ask_dx(lab, open_link, students: int):
    lab.at.switch_page(CLASS_PAGE)
    lab.run().click("Start a class")
    me = lab.state["live"]
    joined = [open_link({"join": me.code}) for _ in range(students)]
    lab.at.selectbox(key="live_ask").set_value(DX)
    lab.run().click("Ask")
    return me, joined


def _send(student, question, text: str) -> None:
    student.run()
    student.at.text_input(key=f"live_formula_{question.id}_{question.round}").input(text)
    student.run()
    student.at.button(key=f"live_send_{question.id}_{question.round}").click()
    student.run()


def test_the_room_derives_dx_and_the_histogram_counts_each_category(db, lab, open_link):
    me, students = _ask_dx(lab, open_link, 4)
    store = Store(db)
    question = store.status(me.code, me.secret).question
    assert question.asked.title == DX and question.asked.options == ()
    assert store.derivation(me.code, question.id).target == "dx"
    for student, text in zip(students, (RIGHT, SIGN, UNNAMED, HOSTILE), strict=True):
        _send(student, question, text)
        student.assert_no_exception()
        assert "Your formula is in" in _texts(student)
    lab.run()
    assert lab.metrics()["Answered, round 1"] == "4 of 4"
    assert not lab.at.get("plotly_chart"), "the room's answers show before the reveal"
    lab.click("Reveal")
    lab.assert_no_exception()
    histogram = store.status(me.code, me.secret).histogram[1]
    named = [j for j in histogram if j.mistake]
    assert len(named) == 1 and "minus sign" in named[0].mistake
    assert histogram == {
        Judged("correct"): 1,
        named[0]: 1,
        Judged("wrong"): 1,
        Judged("unreadable"): 1,
    }
    (chart,) = lab.at.get("plotly_chart")
    (bars,) = json.loads(chart.proto.spec)["data"]
    assert bars["x"] == [1, 1, 1, 1]
    assert bars["y"][0] == "Correct ✓" and bars["y"][-1] == "Could not be read"
    assert bars["text"] == ["1 · 25 %"] * 4
    assert "round 1: 1 of 4 right" in _texts(lab) and "Most common slip: Drops" in _texts(lab)
    # No student's text is anywhere on the projector, not even in the chart's data.
    shown = _texts(lab) + chart.proto.spec
    assert all(text not in shown for text in (RIGHT, SIGN, UNNAMED, HOSTILE, "<b>x"))
    # The most common slip redone on the projector: its input's numbers, no text.
    assert "Redo the most common slip by hand" in _texts(lab)
    inputs, gaps = lab.at.dataframe
    spec = store.derivation(me.code, question.id)
    example = formulas.check(spec, SIGN).counterexample
    assert list(inputs.value[""]) == list(example.rows())
    assert list(inputs.value["entry 1"]) == [f"{row[0]:.6g}" for row in example.rows().values()]
    assert len(gaps.value) >= 1 and "true" in gaps.value.columns
    for table in (inputs, gaps):
        assert all(text not in table.value.to_csv() for text in (RIGHT, SIGN, UNNAMED, HOSTILE))
    (opening,) = lab.at.get("link_button")
    assert "/stepper?" in opening.proto.url
    # Each student sees their own verdict, the slip named as on the derive page.
    for student in students:
        student.run()
        student.assert_no_exception()
    assert "Right." in _texts(students[0])
    assert "The mistake:" in _texts(students[1]) and "minus sign" in _texts(students[1])
    assert "none of the slips the lab knows" in _texts(students[2])
    assert "could not read your formula" in _texts(students[3])
    assert "<b>" not in _texts(students[3]), "a student's text is shown as typed, escaped"
    # The results file counts categories, without texts.
    results = tally.results_csv(store.results(me.code, me.secret))  # the Class page's file
    rows = list(csv.DictReader(io.StringIO(results)))
    assert [(r["option"], r["round 1"]) for r in rows] == [
        ("correct", "1"),
        (named[0].mistake, "1"),
        ("wrong, no slip the lab names", "1"),
        ("could not be read", "1"),
    ]
    store.close()


def test_the_instructor_alone_opens_the_texts_shown_literally(db, lab, open_link):
    me, (student,) = _ask_dx(lab, open_link, 1)
    question = Store(db).status(me.code, me.secret).question
    _send(student, question, HOSTILE)
    lab.run()
    lab.at.toggle(key=f"live_formula_open_{question.id}").set_value(True)
    lab.run()
    (table,) = lab.at.dataframe
    assert list(table.value["formula, as typed"]) == [HOSTILE]
    assert list(table.value["category"]) == ["could not be read"]


def test_the_instructor_can_show_the_room_live_before_the_reveal(db, lab, open_link):
    me, (student,) = _ask_dx(lab, open_link, 1)
    question = Store(db).status(me.code, me.secret).question
    _send(student, question, SIGN)
    lab.run()
    assert not lab.at.get("plotly_chart")
    lab.at.toggle(key="live_formula_live").set_value(True)
    lab.run()
    (chart,) = lab.at.get("plotly_chart")
    assert json.loads(chart.proto.spec)["data"][0]["x"] == [1]


def test_a_second_formula_in_a_round_is_refused_and_said(db, lab, open_link):
    me, (first,) = _ask_dx(lab, open_link, 1)
    second = open_link({})  # another tab of the same browser
    second.state["browser_id"] = first.state["browser_id"]
    second.state["live"] = first.state["live"]
    question = Store(db).status(me.code, me.secret).question
    second.run()
    second.at.text_input(key=f"live_formula_{question.id}_1").input(SIGN)
    second.run()
    _send(first, question, RIGHT)
    second.at.button(key=f"live_send_{question.id}_1").click()
    second.run()
    said = "\n".join(w.value for w in second.at.warning)
    assert "not sent: You have already answered in this round" in said, said
    status = Store(db).status(me.code, me.secret)
    assert status.histogram == {1: {Judged("correct"): 1}}


def test_a_second_round_takes_a_new_formula_and_the_chart_shows_both(db, lab, open_link):
    me, (student,) = _ask_dx(lab, open_link, 1)
    store = Store(db)
    question = store.status(me.code, me.secret).question
    _send(student, question, SIGN)
    lab.run().click("Discuss and vote again")
    question = store.status(me.code, me.secret).question
    assert question.round == 2
    _send(student, question, RIGHT)
    lab.run().click("Reveal")
    (chart,) = lab.at.get("plotly_chart")
    rounds = [(t["name"], t["x"]) for t in json.loads(chart.proto.spec)["data"]]
    assert rounds == [("round 1", [0, 1]), ("round 2", [1, 0])]
    assert "round 1: 0 of 1 right; round 2: 1 of 1 right" in _texts(lab)


# Markdown that would act (a link, an image, a formula, HTML) unless escaped by a backslash, and
# what Streamlit's Markdown links even when escaped (tests/app/test_bad_input_matrix.py).
ACTIVE_MARKDOWN = re.compile(r"(?<!\\)(\]\(|!\[|\$|<[a-zA-Z/])")
AUTOLINK = re.compile(r"(https?|ftp)://|www\.|[\w.+-]@[\w-]", re.IGNORECASE)
TYPED = [
    "[Sign in](https://ev.il) + dy",
    "www.ev.il/x * gamma",
    "user@ev.il",
    "<img src=x onerror=alert(1)> dxhat",
    "$\\frac{1}{0}$ ![i](x.png)",
    '=HYPERLINK("https://ev.il")',
    "dxhat\u202e - mean(dxhat)",
    "dxhat\t* rstd",
    "x" * MAX_CHARS,
]


@pytest.mark.parametrize("typed", TYPED, ids=range(len(TYPED)))
def test_a_hostile_formula_is_read_sent_and_opened_exactly_as_typed(db, lab, open_link, typed):
    me, (student,) = _ask_dx(lab, open_link, 1)
    question = Store(db).status(me.code, me.secret).question
    _send(student, question, typed)
    student.assert_no_exception()
    for element in [*student.at.markdown, *student.at.error, *student.at.warning,
                    *student.at.success]:  # fmt: skip
        assert not ACTIVE_MARKDOWN.search(element.value), element.value
        assert not AUTOLINK.search(element.value), element.value
    (answer,) = Store(db).answers(me.code, me.secret, question.id)
    assert answer.text == typed
    lab.run()
    lab.at.toggle(key=f"live_formula_open_{question.id}").set_value(True)
    lab.run().click("Reveal")
    assert typed not in _texts(lab)
    tables = [t for t in lab.at.dataframe if "formula, as typed" in t.value.columns]
    assert [list(t.value["formula, as typed"]) for t in tables] == [[typed]]
    student.run()
    student.assert_no_exception()


def test_a_formula_longer_than_the_grammar_reads_is_refused_and_said(db, lab, open_link):
    me, (student,) = _ask_dx(lab, open_link, 1)
    question = Store(db).status(me.code, me.secret).question
    _send(student, question, "x" * (MAX_CHARS + 1))
    said = "\n".join(w.value for w in student.at.warning)
    assert f"not sent: Your formula has {MAX_CHARS + 1:,} characters" in said, said
    assert Store(db).status(me.code, me.secret).histogram == {1: {}}


def test_the_room_votes_on_its_most_common_slip_redone_by_hand(db, lab, open_link):
    me, students = _ask_dx(lab, open_link, 2)
    store = Store(db)
    question = store.status(me.code, me.secret).question
    for student in students:
        _send(student, question, SIGN)
    lab.run().click("Reveal")
    lab.click("Ask the room to redo it")
    lab.assert_no_exception()
    assert not lab.state["live_problem"], lab.state["live_problem"]
    follow_up = store.status(me.code, me.secret).question
    assert follow_up.id != question.id and follow_up.asked.title == "Redo the slip: dx"
    result = formulas.check(store.derivation(me.code, question.id), SIGN)
    gap, example = result.differences[0], result.counterexample
    asked = follow_up.asked
    assert asked.options[asked.answer] == f"{gap.true:.4g}"
    assert f"{gap.yours:.4g}" in asked.options, "the slip's own value is a choice"
    assert f"ε = {example.eps:.6g}" in asked.prompt and "minus sign" in asked.explanation
    students[0].run()
    students[0].at.radio(key=f"live_choice_{follow_up.id}_1").set_value(asked.options[asked.answer])
    students[0].run()
    students[0].at.button(key=f"live_vote_{follow_up.id}_1").click()
    students[0].run()
    assert "Your vote is counted" in _texts(students[0])
