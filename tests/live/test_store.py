"""The class store on real SQLite and real PostgreSQL: votes, refusals, limits, retention,
two processes on one database, and votes that survive their process being killed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import create_engine, insert, select, text

from ui.live import rules
from ui.live.rules import Limits, Refused
from ui.live.schema import rounds, votes
from ui.live.store import BUSY_MS, Asked, Store, StoreUnavailable

VOTER = Path(__file__).with_name("voter.py")
ASKED = Asked("Step 1", "What is sample_mean?", ("0.5", "1.0", "-2"), 1, "It is the mean: 1.0.")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def browser(n: int) -> str:
    return f"browser-{n:010d}"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(store_url: str, clock: Clock) -> Store:
    opened = Store(store_url, clock=clock)
    yield opened
    opened.close()


def a_class(store: Store, students: int = 3):
    started = store.start_class()
    for n in range(students):
        store.join(started.code, browser(n))
    return started, store.ask(started.code, started.secret, ASKED)


def test_a_question_is_voted_revealed_voted_again_and_exported(store):
    started, qid = a_class(store, 4)
    code, secret = started.code, started.secret
    for n, option in enumerate([1, 1, 0, 2]):
        store.vote(code, browser(n), qid, 1, option)
    status = store.status(code, secret)
    assert status.members == 4 and status.counts == {1: (1, 2, 1)}
    assert not status.question.revealed and status.question.round_open
    store.reveal(code, secret, qid, 1)
    assert store.poll(code, browser(0)).glance.question.revealed
    store.vote_again(code, secret, qid, 1)
    for n in range(4):
        store.vote(code, browser(n), qid, 2, 1)
    assert store.status(code, secret).counts == {1: (1, 2, 1), 2: (0, 4, 0)}
    assert store.poll(code, browser(2)).my_votes == {1: 0, 2: 1}
    rows = store.results(code, secret)
    assert [(r["option"], r["correct"], r["round 1"], r["round 2"]) for r in rows] == [
        ("0.5", False, 1, 0),
        ("1.0", True, 2, 4),
        ("-2", False, 1, 0),
    ]


def test_a_second_vote_is_refused_and_the_database_itself_forbids_it(store):
    started, qid = a_class(store)
    store.vote(started.code, browser(0), qid, 1, 0)
    with pytest.raises(Refused, match="already voted"):
        store.vote(started.code, browser(0), qid, 1, 2)
    assert store.status(started.code, started.secret).counts == {1: (1, 0, 0)}
    # Past the app's own check, the unique constraint still holds.
    with store.engine.begin() as conn:
        round_id = conn.execute(select(rounds.c.id)).scalar_one()
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"), store.engine.begin() as conn:
        conn.execute(insert(votes).values(round_id=round_id, browser=browser(0), option=1, at=0))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"code": "ZZZZZZZZ"}, "No class"),
        ({"question": 999}, "not the one being asked"),
        ({"round_no": 2}, "closed"),
        ({"option": 3}, "not one of"),
        ({"option": -1}, "not one of"),
        ({"browser": browser(77)}, "Join the class"),
        ({"browser": "<script>"}, "not valid"),
    ],
)
def test_a_vote_for_anything_unknown_is_refused_and_changes_nothing(store, change, message):
    started, qid = a_class(store)
    vote = {
        "code": started.code,
        "browser": browser(0),
        "question": qid,
        "round_no": 1,
        "option": 0,
        **change,
    }
    with pytest.raises(Refused, match=message):
        store.vote(
            vote["code"], vote["browser"], vote["question"], vote["round_no"], vote["option"]
        )
    assert store.status(started.code, started.secret).counts == {1: (0, 0, 0)}


def test_votes_after_a_reveal_or_on_an_old_question_are_refused(store):
    started, qid = a_class(store)
    store.reveal(started.code, started.secret, qid, 1)
    with pytest.raises(Refused, match="closed"):
        store.vote(started.code, browser(0), qid, 1, 0)
    newer = store.ask(started.code, started.secret, ASKED)
    with pytest.raises(Refused, match="not the one"):
        store.vote(started.code, browser(0), qid, 1, 0)
    store.vote(started.code, browser(0), newer, 1, 0)


def test_voting_closed_now_or_by_a_countdown_refuses_later_votes_and_counts_only_accepted(
    store, clock
):
    started, qid = a_class(store, 4)
    code, secret = started.code, started.secret
    store.vote(code, browser(0), qid, 1, 1)
    store.close_voting(code, secret, qid, 1, after_s=30)
    store.vote(code, browser(1), qid, 1, 1)  # within the countdown: taken
    question = store.glance(code).question
    assert question.round_open and question.closes_at == clock.now + 30
    clock.now += 30
    assert not store.glance(code).question.round_open  # the students' bars see it closed
    with pytest.raises(Refused, match="The instructor closed voting for this round"):
        store.vote(code, browser(2), qid, 1, 0)
    with pytest.raises(Refused, match="already closed"):
        store.close_voting(code, secret, qid, 1)
    store.reveal(code, secret, qid, 1)
    assert store.status(code, secret).counts == {1: (0, 2, 0)}
    store.vote_again(code, secret, qid, 1)  # a new round is open, without a countdown
    assert store.glance(code).question.round_open
    store.vote(code, browser(2), qid, 2, 0)
    store.close_voting(code, secret, qid, 2)  # now
    with pytest.raises(Refused, match="closed voting"):
        store.vote(code, browser(3), qid, 2, 1)
    assert not store.status(code, secret).question.revealed  # closed, not revealed
    assert store.status(code, secret).counts == {1: (0, 2, 0), 2: (1, 0, 0)}
    rows = store.results(code, secret)
    assert [(r["round 1"], r["round 2"]) for r in rows] == [(0, 1), (2, 0), (0, 0)]
    with pytest.raises(Refused, match="countdown runs"):
        store.close_voting(code, secret, qid, 2, after_s=-1)
    with pytest.raises(Refused):  # only the instructor's secret closes a round
        store.close_voting(code, "not-the-secret", qid, 2)


HOSTILE = ("**<b>x</b>** [link](http://evil) $x$", "<img src=x onerror=alert(1)> =1+1")


def test_the_instructors_own_question_is_kept_as_typed_with_or_without_a_right_answer(store):
    started = store.start_class()
    code, secret = started.code, started.secret
    store.join(code, browser(0))
    poll = Asked("Mine", HOSTILE[0], HOSTILE, None, "", own=True)
    qid = store.ask(code, secret, poll)
    assert store.glance(code).question.asked == poll  # raw text back, no right answer
    store.vote(code, browser(0), qid, 1, 1)
    rows = store.results(code, secret)
    assert [(r["option"], r["correct"], r["round 1"]) for r in rows] == [
        (HOSTILE[0], False, 0),
        (HOSTILE[1], False, 1),
    ]
    ranked = replace(poll, answer=1)
    store.ask(code, secret, ranked)
    assert store.glance(code).question.asked == ranked
    with pytest.raises(Refused, match="one of them as its answer"):
        store.ask(code, secret, replace(ASKED, answer=None))  # the lab's own always has one


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"title": "a\u202eb"}, r"title holds an invisible character \(U\+202E\)"),
        ({"prompt": "tab\there"}, r"The question holds an invisible character \(U\+0009\)"),
        ({"options": ("yes", "no\x00")}, r"Choice 2 holds an invisible character"),
        ({"options": ("yes", " yes ")}, "Two choices read the same"),
        ({"options": ("only",)}, "Give 2 to 5 choices"),
        ({"options": tuple("abcdef")}, "Give 2 to 5 choices"),
        ({"options": ("yes", "x" * 81)}, "Choice 2 is 81 characters long; at most 80"),
        ({"prompt": "   "}, "The question is empty"),
    ],
)
def test_the_instructors_own_question_refuses_what_it_cannot_show_as_typed(store, change, message):
    started = store.start_class()
    own = Asked("Mine", "Which?", ("yes", "no"), 0, "", own=True)
    with pytest.raises(Refused, match=message):
        store.ask(started.code, started.secret, replace(own, **change))
    assert store.glance(started.code).question is None


def test_how_sure_each_voter_was_is_kept_per_option_and_in_the_file(store):
    started, qid = a_class(store, 4)
    code, secret = started.code, started.secret
    store.vote(code, browser(0), qid, 1, 1, confidence=2)
    store.vote(code, browser(1), qid, 1, 1, confidence=0)
    store.vote(code, browser(2), qid, 1, 0)  # said nothing
    with pytest.raises(Refused, match="How sure you are is one of: a guess, fairly sure, sure"):
        store.vote(code, browser(3), qid, 1, 0, confidence=3)
    # The split is the reveal's: nobody, instructor or student, has it while the round is open.
    assert store.status(code, secret).split == {} and store.poll(code, browser(0)).split is None
    store.reveal(code, secret, qid, 1)
    split = {1: ((0, 0, 0, 1), (1, 0, 1, 0), (0, 0, 0, 0))}
    assert store.status(code, secret).split == split == store.poll(code, browser(3)).split
    (right,) = [r for r in store.results(code, secret) if r["correct"]]
    assert (right["round 1"], right["round 1 sure"], right["round 1 a guess"]) == (2, 1, 1)
    assert right["round 1 fairly sure"] == right["round 1 not said"] == 0


def test_only_the_instructors_secret_steers_the_class(store):
    started, qid = a_class(store)
    code = started.code
    forged = rules.new_secret()
    actions = [
        lambda s: store.publish(code, s, "stepper", "step=3"),
        lambda s: store.ask(code, s, ASKED),
        lambda s: store.reveal(code, s, qid, 1),
        lambda s: store.vote_again(code, s, qid, 1),
        lambda s: store.status(code, s),
        lambda s: store.results(code, s),
        lambda s: store.end(code, s),
    ]
    for action in actions:
        for secret in (forged, "", rules.secret_hash(started.secret)):
            with pytest.raises(Refused, match="Only the instructor"):
                action(secret)
    glance = store.poll(code, browser(0)).glance
    assert glance.follow.version == 0 and glance.question.id == qid and not glance.ended
    assert glance.question.round == 1 and glance.question.round_open


def test_replayed_or_stale_instructor_actions_are_refused(store):
    started, qid = a_class(store)
    code, secret = started.code, started.secret
    store.vote_again(code, secret, qid, 1)
    with pytest.raises(Refused, match="moved on"):
        store.reveal(code, secret, qid, 1)  # a reveal of round 1, sent again late
    with pytest.raises(Refused, match="at most 2"):
        store.vote_again(code, secret, qid, 2)
    newer = store.ask(code, secret, ASKED)
    with pytest.raises(Refused, match="moved on"):
        store.reveal(code, secret, qid, 2)
    assert store.status(code, secret).question.id == newer
    store.end(code, secret)
    for action in (lambda: store.ask(code, secret, ASKED), lambda: store.end(code, secret)):
        with pytest.raises(Refused, match="ended"):
            action()
    with pytest.raises(Refused, match="This class has ended"):
        store.join(code, browser(9))


def test_guessed_join_codes_are_limited_and_the_right_code_always_joins(store, clock):
    started = store.start_class()
    guesser = browser(50)
    for guess in ("ABCD2345", "abcd-2346", "0O1IL000", "short", "x" * 500):
        with pytest.raises(Refused, match=r"No class|join code is 8"):
            store.join(guess, guesser)
    with pytest.raises(Refused, match="Too many wrong join codes from this browser"):
        store.join("ABCD2347", guesser)
    # The limit counts wrong codes only once they are known wrong: the right one joins at once.
    assert store.join(rules.show_code(started.code).lower(), guesser) == started.code
    clock.now += 601
    with pytest.raises(Refused, match="No class"):
        store.join("ABCD2347", guesser)


def test_a_flood_of_wrong_codes_refuses_no_student_nor_a_reconnecting_one(store):
    started = store.start_class()
    store.join(started.code, browser(0))
    # Many browsers without cookies, each guessing its fill, and an ended class's students
    # reopening the lab: nobody else is refused for it.
    for n in range(1, 120):
        with pytest.raises(Refused, match=r"No class|Too many"):
            store.join("ZZZZZZZZ", browser(1000 + n % 7))
    ended = store.start_class()
    store.end(ended.code, ended.secret)
    for n in range(20):
        with pytest.raises(Refused, match="This class has ended"):
            store.join(ended.code, browser(2000 + n))
    assert store.join(started.code, browser(0)) == started.code  # a reconnect
    for n in range(1, 40):
        assert store.join(started.code, browser(n)) == started.code
    assert store.status(started.code, started.secret).members == 40


def test_a_capped_class_refuses_browsers_beyond_its_size_but_never_its_students(store):
    started = store.start_class()
    code, secret = started.code, started.secret
    for n in range(3):
        store.join(code, browser(n))
    store.size(code, secret, 3, capped=False)
    store.join(code, browser(3))  # expected, not capped: the instructor sees 4 of 3
    status = store.status(code, secret)
    assert (status.members, status.expected, status.capped) == (4, 3, False)
    store.size(code, secret, 4, capped=True)
    with pytest.raises(Refused, match="This class is full: the instructor admits 4"):
        store.join(code, browser(4))
    assert store.join(code, browser(2)) == code  # a student of the class reconnects
    with pytest.raises(Refused, match="whole number from 1"):
        store.size(code, secret, 0, capped=True)
    with pytest.raises(Refused, match="Only the instructor"):
        store.size(code, "forged", None, capped=False)
    store.size(code, secret, None, capped=True)  # no size: nothing to cap at
    store.join(code, browser(4))
    assert store.status(code, secret) == replace(status, members=5, expected=None)


def test_a_flood_of_votes_from_one_browser_is_refused(store_url, clock):
    store = Store(store_url, Limits(votes_per_browser=3, votes_per_browser_s=10), clock)
    started, qid = a_class(store)
    store.vote(started.code, browser(0), qid, 1, 0)
    for _ in range(2):
        with pytest.raises(Refused, match="already voted"):
            store.vote(started.code, browser(0), qid, 1, 1)
    for _ in range(3):
        with pytest.raises(Refused, match="Too many votes"):
            store.vote(started.code, browser(0), qid, 1, 1)
    # Others still vote meanwhile.
    store.vote(started.code, browser(1), qid, 1, 2)
    assert store.status(started.code, started.secret).counts == {1: (1, 0, 1)}
    store.close()


def test_ended_classes_are_deleted_after_the_retention_time(store, clock):
    kept, kept_qid = a_class(store)
    ended, ended_qid = a_class(store)
    store.vote(ended.code, browser(0), ended_qid, 1, 0)
    store.end(ended.code, ended.secret)
    clock.now += 3600
    assert store.purge(retention_s=7200) == 0
    clock.now += 3601
    assert store.purge(retention_s=7200) == 1
    with pytest.raises(Refused, match="no longer there"):
        store.poll(ended.code, browser(0))
    with store.engine.connect() as conn:
        assert conn.execute(select(votes)).all() == []
    assert store.poll(kept.code, browser(0)).glance.question.id == kept_qid


def test_follow_state_is_what_the_instructor_published_last(store):
    started, _ = a_class(store)
    assert store.publish(started.code, started.secret, "stepper", "step=2&seed=3") == 1
    assert store.publish(started.code, started.secret, "jacobian", "step=3") == 2
    follow = store.poll(started.code, browser(1)).glance.follow
    assert (follow.version, follow.page, follow.query) == (2, "jacobian", "step=3")


def test_a_glance_changes_with_every_move_a_student_must_see_and_with_nothing_else(store):
    """What ui/live/wake.py compares to know whom to wake: a new step, a question's reveal, a
    second round and the end each change it; a vote does not (nobody else sees it)."""
    started, qid = a_class(store)
    glances = [store.glance(started.code)]
    store.publish(started.code, started.secret, "stepper", "step=2")
    glances.append(store.glance(started.code))
    store.vote(started.code, browser(0), qid, 1, 1)
    assert store.glance(started.code) == glances[-1]
    store.reveal(started.code, started.secret, qid, 1)
    glances.append(store.glance(started.code))
    store.vote_again(started.code, started.secret, qid, 1)
    glances.append(store.glance(started.code))
    store.end(started.code, started.secret)
    glances.append(store.glance(started.code))
    assert len({repr(g) for g in glances}) == len(glances)
    assert glances[1].follow.query == "step=2" and glances[-1].ended
    assert glances[2].question.revealed and glances[3].question.round == 2
    assert store.poll(started.code, browser(0)).glance == glances[-1]


def _voters(
    url: str, code: str, qid: int, *ranges: tuple[int, int], hold: bool = False
) -> list[subprocess.Popen]:
    return [
        subprocess.Popen(
            [sys.executable, str(VOTER), url, code, str(qid), str(first), str(count)]
            + ["--hold"] * hold,
            stdout=subprocess.PIPE,
            text=True,
        )
        for first, count in ranges
    ]


def test_two_processes_share_one_database(store_url):
    store = Store(store_url)
    started = store.start_class()
    qid = store.ask(started.code, started.secret, ASKED)
    # Two processes, overlapping browsers 20..29: each of those votes once, whoever is first.
    procs = _voters(store_url, started.code, qid, (0, 30), (20, 30))
    outputs = [p.communicate(timeout=120)[0].splitlines() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    accepted = [line.split()[1] for out in outputs for line in out if line.startswith("ok")]
    refused = [line for out in outputs for line in out if line.startswith("refused")]
    assert sorted(accepted) == [browser(n) for n in range(50)]
    assert len(refused) == 10 and all("already voted" in line for line in refused)
    counts = store.status(started.code, started.secret).counts[1]
    assert counts == tuple(sum(1 for n in range(50) if n % 3 == k) for k in range(3))
    store.close()


def test_an_acknowledged_vote_survives_its_process_being_killed(store_url):
    store = Store(store_url)
    started = store.start_class()
    qid = store.ask(started.code, started.secret, ASKED)
    (proc,) = _voters(store_url, started.code, qid, (0, 3), hold=True)
    acknowledged = [proc.stdout.readline().split()[1] for _ in range(3)]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    assert acknowledged == [browser(n) for n in range(3)]
    fresh = Store(store_url)
    assert sum(fresh.status(started.code, started.secret).counts[1]) == 3
    fresh.close()
    store.close()


def test_a_vote_left_open_by_a_host_that_vanished_does_not_block_the_next(pg_server):
    url = pg_server.create_database("lnlab_vanished")
    first, second = Store(url), Store(url)  # two app hosts on one database
    started, qid = a_class(first, 1)
    # The first host inserted the student's vote, then lost its link before COMMIT: its
    # transaction stays open on the server, holding the vote's row.
    held = first.engine.connect()
    held.begin()
    round_id = held.execute(select(rounds.c.id).where(rounds.c.question_id == qid)).scalar_one()
    held.execute(insert(votes).values(round_id=round_id, browser=browser(0), option=0, at=0.0))
    # The student reconnects to the second host and votes: refused as unreachable (the row is
    # locked) until the server ends the idle transaction, then counted. Bounded tries.
    problems = []
    for _ in range(60):
        try:
            second.vote(started.code, browser(0), qid, 1, 2)
            break
        except StoreUnavailable as err:
            problems.append(str(err))
            time.sleep(0.5)
    held.invalidate()
    assert second.status(started.code, started.secret).counts[1] == (0, 0, 1), problems[-1:]
    first.close()
    second.close()


def test_an_unreachable_database_is_a_clear_error_not_a_crash():
    from deploy.processes import free_port

    with pytest.raises(StoreUnavailable, match=r"(?i)connect|refused"):
        Store(f"postgresql+psycopg://lnlab@127.0.0.1:{free_port()}/none?connect_timeout=2")


def test_a_store_locked_by_another_program_is_said_within_a_second(store_url, clock):
    store = Store(store_url, clock=clock)
    started, qid = a_class(store)
    holder = create_engine(store_url).connect()
    if store_url.startswith("sqlite"):
        busy = store.engine.connect().exec_driver_sql("PRAGMA busy_timeout").scalar_one()
        assert busy == BUSY_MS <= 1000
        holder.exec_driver_sql("BEGIN EXCLUSIVE")
    else:
        holder.execute(text("LOCK TABLE lnlab_classes, lnlab_questions IN EXCLUSIVE MODE"))
    with pytest.raises(StoreUnavailable, match=r"locked by another program for 0.8 s"):
        store.vote(started.code, browser(0), qid, 1, 0)
    holder.rollback()
    holder.close()
    store.vote(started.code, browser(0), qid, 1, 0)
    store.close()


def test_a_queue_of_writers_is_waited_out_not_called_locked(tmp_path, clock):
    """Writers that take SQLite's lock one after the other, committing each time, keep a click
    waiting past BUSY_MS (a class's burst of joins on a busy machine): the click waits its turn
    and is counted, where a file nobody commits to is said locked within a second (above)."""
    path = tmp_path / "classes.sqlite3"
    store = Store(f"sqlite:///{path}", clock=clock)
    started, qid = a_class(store)
    others = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    others.execute("CREATE TABLE other_writers (n INTEGER)")
    taken = threading.Event()

    def queue() -> None:
        # Four writers' turns of half BUSY_MS and more, back to back: the lock is free only
        # between a COMMIT and the next BEGIN.
        for n in range(4):
            others.execute("BEGIN IMMEDIATE")
            taken.set()
            others.execute("INSERT INTO other_writers VALUES (?)", (n,))
            time.sleep(0.6)
            others.execute("COMMIT")

    writers = threading.Thread(target=queue)
    writers.start()
    taken.wait()
    try:
        store.vote(started.code, browser(0), qid, 1, 2)
    finally:
        writers.join()
        others.close()
    assert store.status(started.code, started.secret).counts[1] == (0, 0, 1)
    store.close()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_sqlite_file_deleted_or_replaced_under_the_server_is_said(tmp_path, how):
    path = tmp_path / "classes.sqlite3"
    store = Store(f"sqlite:///{path}")
    started, _ = a_class(store)
    for name in tmp_path.iterdir():
        os.remove(name)
    if how == "replaced":
        sqlite3.connect(path).close()
    assert store.replaced
    with pytest.raises(StoreUnavailable, match=f"classes.sqlite3 was {how} while the lab ran"):
        store.status(started.code, started.secret)
    store.close()


def test_a_database_made_by_an_older_lab_gets_the_new_columns(tmp_path):
    path = tmp_path / "classes.sqlite3"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE lnlab_classes (id INTEGER PRIMARY KEY, code VARCHAR(16) NOT NULL UNIQUE,"
        " secret_hash VARCHAR(64) NOT NULL, created_at FLOAT NOT NULL, ended_at FLOAT,"
        " follow_version INTEGER NOT NULL, follow_page VARCHAR(64) NOT NULL,"
        " follow_query TEXT NOT NULL)"
    )
    old.execute("INSERT INTO lnlab_classes VALUES (1, 'ABCD2345', 'x', 0, NULL, 0, '', '')")
    old.commit()
    old.close()
    store = Store(f"sqlite:///{path}")
    assert store.join("ABCD2345", browser(0)) == "ABCD2345"  # the old class, still there
    store.close()


def test_join_codes_avoid_look_alikes_and_have_enough_entropy():
    assert not set("01ILO") & set(rules.ALPHABET)
    assert len(rules.ALPHABET) ** rules.CODE_LENGTH > 5e11
    codes = {rules.new_code() for _ in range(1000)}
    assert len(codes) == 1000 and all(rules.read_code(c) == c for c in codes)
    assert rules.read_code(" abcd-2345 ") == "ABCD2345"
