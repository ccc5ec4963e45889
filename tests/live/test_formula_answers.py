"""Typed formulas in a live class ("derive dx"), on real SQLite and real PostgreSQL: one answer
per student per round, the room's histogram of judged categories, the instructor alone opening
the texts, hostile texts kept exactly and refused where no database could keep them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing

import pytest
from sqlalchemy import insert, select

from ln_core.formula.tokens import MAX_CHARS
from ui.live.rules import Refused
from ui.live.schema import formula_answers, rounds
from ui.live.store import ANSWERED, Asked, Derivation, Judged, Store, categories

DERIVE = Derivation(
    "dx", True, False, (1.0, 2.0, 4.0), (1.0, 0.5, 2.0), (0.0, 0.1, 0.0), (0.3, -1.0, 2.0), 1e-5
)
RIGHT = Judged("correct")
SIGN = Judged("wrong", "Drops the minus sign of x_sm = x - mean.")
WRONG = Judged("wrong")
UNREADABLE = Judged("unreadable")


def browser(n: int) -> str:
    return f"browser-{n:010d}"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with closing(Store(store_url)) as opened:
        yield opened


def a_derivation(store: Store, students: int = 4):
    started = store.start_class()
    for n in range(students):
        store.join(started.code, browser(n))
    qid = store.ask_derivation(started.code, started.secret, "Derive dx", "Type dx.", DERIVE)
    return started, qid


def test_the_histogram_counts_what_was_answered_round_by_round(store):
    started, qid = a_derivation(store, 5)
    code, secret = started.code, started.secret
    question = store.status(code, secret).question
    assert question.id == qid and question.asked.options == ()
    assert store.derivation(code, qid) == DERIVE
    given = [RIGHT, SIGN, SIGN, WRONG, UNREADABLE]
    for n, judged in enumerate(given):
        store.answer(code, browser(n), qid, 1, f"formula {n}", judged)
    status = store.status(code, secret)
    assert status.histogram == {1: {RIGHT: 1, SIGN: 2, WRONG: 1, UNREADABLE: 1}}
    assert status.counts == {1: ()}, "a typed question has no votes"
    # Students see their own answer, never the room's, until the reveal.
    poll = store.poll(code, browser(1))
    assert poll.my_formulas[1].text == "formula 1" and poll.my_formulas[1].judged == SIGN
    assert poll.histogram is None
    store.reveal(code, secret, qid, 1)
    assert store.poll(code, browser(4)).histogram == status.histogram
    store.vote_again(code, secret, qid, 1)
    for n in range(3):
        store.answer(code, browser(n), qid, 2, "rstd * dxhat", RIGHT)
    histogram = store.status(code, secret).histogram
    assert histogram[2] == {RIGHT: 3} and histogram[1] == status.histogram[1]
    assert categories(histogram) == [RIGHT, SIGN, WRONG, UNREADABLE]
    rows = store.results(code, secret)
    assert [(r["option"], r["correct"], r["round 1"], r["round 2"]) for r in rows] == [
        ("correct", True, 1, 3),
        (SIGN.mistake, False, 2, 0),
        ("wrong, no slip the lab names", False, 1, 0),
        ("could not be read", False, 1, 0),
    ]


def test_a_second_formula_in_a_round_is_refused_and_the_database_itself_forbids_it(store):
    started, qid = a_derivation(store)
    store.answer(started.code, browser(0), qid, 1, "dy", WRONG)
    with pytest.raises(Refused, match="already answered"):
        store.answer(started.code, browser(0), qid, 1, "rstd * dxhat", RIGHT)
    assert store.status(started.code, started.secret).histogram == {1: {WRONG: 1}}
    assert store.poll(started.code, browser(0)).my_formulas[1].text == "dy"
    with store.engine.begin() as conn:
        round_id = conn.execute(select(rounds.c.id)).scalar_one()
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"), store.engine.begin() as conn:
        conn.execute(
            insert(formula_answers).values(
                round_id=round_id, browser=browser(0), text="x", verdict="correct", mistake="", at=0
            )
        )
    assert ANSWERED.startswith("You have already answered")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"code": "ZZZZZZZZ"}, "No class"),
        ({"question": 999}, "not the one being asked"),
        ({"round_no": 2}, "closed"),
        ({"browser": browser(77)}, "Join the class"),
        ({"browser": "<script>"}, "not valid"),
        ({"text": "   "}, "Type your formula"),
        ({"text": "x" * (MAX_CHARS + 1)}, f"at most {MAX_CHARS:,}"),
        ({"text": "dy\x00"}, "NUL"),
        ({"text": "dy \ud800"}, "broken character"),
    ],
)
def test_a_formula_for_anything_unknown_is_refused_and_changes_nothing(store, change, message):
    started, qid = a_derivation(store)
    answer = {"code": started.code, "browser": browser(0), "question": qid, "round_no": 1,
              "text": "dy * gamma", **change}  # fmt: skip
    with pytest.raises(Refused, match=message):
        store.answer(answer["code"], answer["browser"], answer["question"], answer["round_no"],
                     answer["text"], WRONG)  # fmt: skip
    assert store.status(started.code, started.secret).histogram == {1: {}}


def test_a_typed_question_takes_no_vote_and_a_choice_question_no_formula(store):
    started, qid = a_derivation(store)
    with pytest.raises(Refused, match="not one of"):
        store.vote(started.code, browser(0), qid, 1, 0)
    with pytest.raises(Refused, match="That question is not one answered with a formula"):
        store.derivation(started.code, qid + 1)
    chosen = store.ask(started.code, started.secret, Asked("Step 1", "μ?", ("0", "1"), 1, ""))
    with pytest.raises(Refused, match="answered by choosing"):
        store.answer(started.code, browser(0), chosen, 1, "dy", WRONG)
    with pytest.raises(Refused, match="not one answered with a formula"):
        store.derivation(started.code, chosen)
    # Another class's code does not open this class's question.
    other = store.start_class()
    with pytest.raises(Refused):
        store.derivation(other.code, qid)


def test_after_the_reveal_formulas_are_refused(store):
    started, qid = a_derivation(store)
    store.reveal(started.code, started.secret, qid, 1)
    with pytest.raises(Refused, match="closed"):
        store.answer(started.code, browser(0), qid, 1, "dy", WRONG)


# Texts a student may send, as hostile as a text box allows: each is kept exactly as typed.
HOSTILE = [
    "<script>alert(1)</script>",
    "**bold** _x_ [link](https://example.com) ![img](x.png)",
    "$\\frac{1}{0}$ \\\\",
    '=HYPERLINK("http://x")',
    "'; DROP TABLE lnlab_formula_answers; --",
    "dy\u202e * gamma",
    "line one\nline two\r\n\ttabbed",
    "γ · x̂ / √(σ² + ε) 🙂",
    "x" * MAX_CHARS,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_formula_is_kept_exactly_and_opened_by_the_instructor_alone(store, text):
    started, qid = a_derivation(store)
    store.answer(started.code, browser(0), qid, 1, text, UNREADABLE)
    (answer,) = store.answers(started.code, started.secret, qid)
    assert answer.text == text and answer.judged == UNREADABLE and answer.round == 1
    assert store.poll(started.code, browser(0)).my_formulas[1].text == text
    with pytest.raises(Refused, match="Only the instructor"):
        store.answers(started.code, "not the secret", qid)
    # The results file counts categories; no text of a student is in it.
    assert all(text not in str(row.values()) for row in store.results(started.code, started.secret))


def test_a_flood_of_formulas_from_one_browser_is_refused(store):
    started, qid = a_derivation(store)
    limit = store.limits.votes_per_browser
    for _ in range(limit):
        with pytest.raises(Refused, match="closed"):
            store.answer(started.code, browser(0), qid, 2, "dy", WRONG)
    with pytest.raises(Refused, match="Too many formulas"):
        store.answer(started.code, browser(0), qid, 1, "dy", WRONG)


def test_ended_classes_lose_their_formulas_after_the_retention_time(store_url):
    now = [1_000_000.0]
    store = Store(store_url, clock=lambda: now[0])
    started, qid = a_derivation(store)
    store.answer(started.code, browser(0), qid, 1, "dy", WRONG)
    store.end(started.code, started.secret)
    now[0] += 3 * 3600
    assert store.purge(retention_s=7200) == 1
    with store.engine.begin() as conn:
        assert conn.execute(select(formula_answers)).first() is None
    store.close()
