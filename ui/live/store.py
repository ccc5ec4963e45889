"""The live class's store: one small interface over SQLAlchemy Core, for SQLite or PostgreSQL.

    store = Store("sqlite:///data/classes.sqlite3")       # or "postgresql+psycopg://..."
    started = store.start_class()                          # code for students, secret for you
    store.join(started.code, browser)                      # a student's browser joins
    question_id = store.ask(started.code, started.secret, asked)
    store.vote(started.code, browser, question_id, 1, option)
    store.reveal(started.code, started.secret, question_id, 1)

Every instructor action takes the secret (checked against its stored hash) and names the
question and round it acts on, so a replayed or stale action is refused instead of moving the
class. Every refusal raises rules.Refused with a message for the person acting and changes
nothing but the rate limits' counters; a database that cannot be reached raises
StoreUnavailable. Statements are built with SQLAlchemy Core: all values are bound parameters.

SQLite runs in WAL mode with synchronous=FULL, so a vote whose commit returned survives its
process being killed, and writers take the lock up front (BEGIN IMMEDIATE) so that processes
sharing the file queue instead of failing, for BUSY_MS at most (PostgreSQL's lock_timeout is
the same): a database locked by something else is said within a second, while a queue of
writers that moves (a class's burst of joins) is waited out. A SQLite file deleted
or replaced under the running server is said too (Store.replaced).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import (
    Connection,
    Engine,
    Row,
    Table,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    select,
    text,
)
from sqlalchemy import update as sql_update
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from ui.live import rules
from ui.live.rules import Limits, Refused
from ui.live.schema import (
    attempts,
    classes,
    derivations,
    formula_answers,
    members,
    metadata,
    questions,
    rounds,
    votes,
)

_WRITE = "lnlab_write"
MAX_CLASS = 2000  # students a class may expect
# round -> per option, votes per confidence level (rules.CONFIDENCE), then those not said
Sureness = dict[int, tuple[tuple[int, ...], ...]]
NO_ANSWER = -1  # a question's answer column when none of its options is right
# ms a SQLite statement waits for another writer: a vote takes a few ms, so a wait this long
# is a file locked by something else, said within a second instead of freezing a click.
BUSY_MS = 800
# s a SQLite writer waits its turn in a queue: a wait past BUSY_MS during which other writers
# committed is a burst of students (forty joining at once hold the lock for seconds on a busy
# machine), not a locked file, and it waits on while the queue moves, this long at most.
QUEUE_S = 10.0
OPENING_MS = 60_000
IDLE_TRANSACTION_S = 5


ANSWERED = "You have already answered in this round: one formula per student per round."


class StoreUnavailable(Exception):
    """The database could not be reached or answered with an error."""


@dataclass(frozen=True)
class Started:
    code: str  # for students: in the join link, the QR code and read aloud
    secret: str  # for the instructor's browser only


@dataclass(frozen=True)
class Asked:
    """A multiple-choice question as the instructor asks it; `answer` indexes `options` (None:
    the instructor's own question without a right answer). `own`: the instructor typed it, so
    its text is anyone's text, shown exactly as typed (ui/live/asking.shown)."""

    title: str
    prompt: str
    options: tuple[str, ...]
    answer: int | None
    explanation: str
    own: bool = False


@dataclass(frozen=True)
class Derivation:
    """A question answered with a typed formula: the gradient `target` (a key of the derive
    page's TARGETS), the model, and the one vector every answer is judged on."""

    target: str
    with_eps: bool
    scalar_gamma: bool
    x: tuple[float, ...]
    gamma: tuple[float, ...]
    beta: tuple[float, ...]
    dout: tuple[float, ...]
    eps: float


@dataclass(frozen=True)
class Judged:
    """What the judge made of a typed formula: its verdict (one of VERDICTS) and the slip it
    named ("" for none): the category a class's histogram counts."""

    verdict: str
    mistake: str = ""

    @property
    def label(self) -> str:
        """The category in words: the slip's own name where the judge named one."""
        if self.mistake:
            return self.mistake
        return {"wrong": "wrong, no slip the lab names", "unreadable": "could not be read"}.get(
            self.verdict, self.verdict
        )


# round -> category -> answers; every round so far is there, empty or not.
Histogram = dict[int, dict[Judged, int]]


VERDICTS = ("correct", "wrong", "cannot decide", "unreadable")
MAX_MISTAKE = 1000  # characters of a slip's name: the lab's own words, far shorter


def categories(histogram: Histogram) -> list[Judged]:
    """The categories a histogram has, in the order a room reads them: correct, the named
    slips (the most common first), then wrong without a name, cannot decide, unreadable."""
    totals: dict[Judged, int] = {}
    for counts in histogram.values():
        for judged, count in counts.items():
            totals[judged] = totals.get(judged, 0) + count
    rank = {verdict: i for i, verdict in enumerate(("correct", "", *VERDICTS[1:]))}
    return sorted(
        totals,
        key=lambda j: (rank["" if j.mistake else j.verdict], -totals[j], j.mistake),
    )


@dataclass(frozen=True)
class FormulaAnswer:
    """One typed formula of a round, as the instructor opens it: the text exactly as typed."""

    round: int
    text: str
    judged: Judged


@dataclass(frozen=True)
class Question:
    """The class's latest question and where it stands. A question without options is
    answered with a typed formula (Store.ask_derivation)."""

    id: int
    asked: Asked
    round: int  # the current round, 1 or 2
    round_open: bool  # votes are taken now (False once a countdown has run out)
    revealed: bool
    opened_at: float  # when the current round opened
    closes_at: float | None = None  # when voting closes (closed) by the instructor's word


@dataclass(frozen=True)
class Follow:
    """What a following student shows: the instructor's page and view (a link's query)."""

    version: int
    page: str
    query: str


@dataclass(frozen=True)
class Glance:
    """What every student of the class is shown alike: where to be, whether it ended, the
    question and where it stands (ui/live/wake.py compares glances to know who to wake)."""

    follow: Follow
    ended: bool
    question: Question | None


@dataclass(frozen=True)
class Poll:
    """One student's look at the class: what every student is shown, and what they answered."""

    glance: Glance
    my_votes: dict[int, int]  # round -> option
    split: Sureness | None = None  # the class's votes and how sure they were, once revealed
    my_formulas: dict[int, FormulaAnswer] = field(default_factory=dict)  # round -> typed
    histogram: Histogram | None = None  # the class's typed formulas, once revealed


@dataclass(frozen=True)
class Status:
    """The instructor's look: who joined, what is asked, answers per round."""

    members: int
    question: Question | None
    counts: dict[int, tuple[int, ...]]  # round -> votes per option (shown only once revealed)
    expected: int | None = None  # the class size the instructor said, if they did
    capped: bool = False  # browsers beyond `expected` are refused
    histogram: Histogram = field(default_factory=dict)  # a typed question's answers per round
    split: Sureness = field(default_factory=dict)  # the votes and how sure they were, revealed


class Store:
    """A class store on the database at `url` (SQLAlchemy URL); the schema is created on start."""

    def __init__(
        self, url: str, limits: Limits | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.limits, self.clock = limits or Limits(), clock
        self.engine = _engine(url)
        self._writer = self.engine.execution_options(**{_WRITE: True})
        self._file = _sqlite_file(self.engine)
        self._file_id: tuple[int, int] | None = None
        with _reachable(), self._writer.connect() as opening:
            if self._file is not None:
                # Processes starting together queue to create the tables, however long a busy
                # machine keeps one of them: this is a start, not a student's click.
                opening.connection.driver_connection.execute(f"PRAGMA busy_timeout={OPENING_MS}")
            with opening.begin():
                if self.engine.dialect.name == "postgresql":
                    # Replicas starting together would race to create the same tables.
                    opening.execute(text("SELECT pg_advisory_xact_lock(22022)"))
                metadata.create_all(opening)
                _add_missing_columns(opening)
            if self._file is not None:
                opening.connection.driver_connection.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        if self._file is not None:
            self._file_id = _file_id(self._file)

    def close(self) -> None:
        self.engine.dispose()

    def _same_file(self) -> None:
        """A SQLite file deleted or replaced under the running server is said, not written
        past: its open connections would go on writing to the old file, lost at their close,
        and a restart would silently open an empty one."""
        if self._file_id is None:
            return
        try:
            now = _file_id(self._file)
        except FileNotFoundError:
            raise StoreUnavailable(
                f"the class's database file {self._file} was deleted while the lab ran"
            ) from None
        if now != self._file_id:
            raise StoreUnavailable(
                f"the class's database file {self._file} was replaced while the lab ran"
            )

    @property
    def replaced(self) -> bool:
        """Whether the SQLite file this store opened is no longer there (see _same_file)."""
        try:
            self._same_file()
        except StoreUnavailable:
            return True
        return False

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        self._same_file()
        with _reachable(), ExitStack() as held:
            yield self._begin_in_turn(held)

    def _begin_in_turn(self, held: ExitStack) -> Connection:
        """A write transaction, begun (and entered into `held`) once the lock is this store's.
        SQLite has one writer at a time, and a wait ends as locked after BUSY_MS; the file's
        commit counter (PRAGMA data_version) tells a queue that moved during the wait from a
        file some other program keeps locked, which is said at once."""
        if self._file is None:
            return held.enter_context(self._writer.begin())
        start = time.monotonic()
        while True:
            with self.engine.connect() as watch:
                # The driver's own connection: a PRAGMA through SQLAlchemy would begin a
                # transaction of its own.
                commits = watch.connection.driver_connection.cursor()
                before = commits.execute("PRAGMA data_version").fetchone()
                try:
                    return held.enter_context(self._writer.begin())
                except OperationalError as err:
                    moved = commits.execute("PRAGMA data_version").fetchone() != before
                    if not ("locked" in str(err) and moved):
                        raise
                    if time.monotonic() - start > QUEUE_S:
                        raise StoreUnavailable(
                            f"its database was busy with other writes for {QUEUE_S:g} s"
                        ) from err

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        self._same_file()
        with _reachable(), self.engine.connect() as conn:
            yield conn

    # The instructor's actions.

    def start_class(self) -> Started:
        secret = rules.new_secret()
        for _ in range(5):  # a code already taken (once in ~1e11) is drawn again
            code = rules.new_code()
            try:
                with self._write() as conn:
                    conn.execute(
                        insert(classes).values(
                            code=code,
                            secret_hash=rules.secret_hash(secret),
                            created_at=self.clock(),
                            follow_version=0,
                            follow_page="",
                            follow_query="",
                        )
                    )
                return Started(code, secret)
            except IntegrityError:
                continue
        raise StoreUnavailable("could not draw a free join code")

    def _own_class(self, conn: Connection, code: str, secret: str) -> int:
        row = conn.execute(
            select(classes.c.id, classes.c.secret_hash, classes.c.ended_at).where(
                classes.c.code == code
            )
        ).first()
        if row is None or not rules.secret_matches(secret, row.secret_hash):
            raise Refused("Only the instructor who started this class can do that.")
        if row.ended_at is not None:
            raise Refused("This class has ended.")
        return row.id

    def check_instructor(self, code: str, secret: str) -> None:
        with self._read() as conn:
            self._own_class(conn, code, secret)

    def publish(self, code: str, secret: str, page: str, query: str) -> int:
        """Set what following students show; returns the new follow version."""
        with self._write() as conn:
            class_id = self._own_class(conn, code, secret)
            conn.execute(
                sql_update(classes)
                .where(classes.c.id == class_id)
                .values(
                    follow_version=classes.c.follow_version + 1,
                    follow_page=page,
                    follow_query=query,
                )
            )
            return conn.execute(
                select(classes.c.follow_version).where(classes.c.id == class_id)
            ).scalar_one()

    def ask(self, code: str, secret: str, asked: Asked) -> int:
        """Ask a new question (its round 1 opens; any earlier question closes)."""
        if asked.own:
            rules.check_own(asked.title, asked.prompt, asked.options)
        if asked.answer is None:
            right = asked.own  # only the instructor's own question may have no right answer
        else:
            right = 0 <= asked.answer < len(asked.options)
        if not 2 <= len(asked.options) <= 8 or not right:
            raise Refused("A question needs 2 to 8 choices and one of them as its answer.")
        with self._write() as conn:
            return self._insert_question(conn, self._own_class(conn, code, secret), asked)

    def _insert_question(self, conn: Connection, class_id: int, asked: Asked) -> int:
        """The class's new question, its round 1 open; every earlier question closes."""
        now = self.clock()
        conn.execute(
            sql_update(questions).where(questions.c.class_id == class_id).values(round_open=False)
        )
        question_id = conn.execute(
            insert(questions)
            .values(
                class_id=class_id,
                title=asked.title,
                prompt=asked.prompt,
                options=json.dumps(list(asked.options)),
                answer=NO_ANSWER if asked.answer is None else asked.answer,
                explanation=asked.explanation,
                own=asked.own,
                asked_at=now,
                current_round=1,
                round_open=True,
                revealed=False,
            )
            .returning(questions.c.id)
        ).scalar_one()
        conn.execute(insert(rounds).values(question_id=question_id, number=1, opened_at=now))
        return question_id

    def ask_derivation(
        self, code: str, secret: str, title: str, prompt: str, derivation: Derivation
    ) -> int:
        """Ask for a typed formula (a question without options; its round 1 opens)."""
        spec = {k: getattr(derivation, k) for k in ("x", "gamma", "beta", "dout", "eps")}
        with self._write() as conn:
            class_id = self._own_class(conn, code, secret)
            question_id = self._insert_question(conn, class_id, Asked(title, prompt, (), 0, ""))
            conn.execute(
                insert(derivations).values(
                    question_id=question_id,
                    target=derivation.target,
                    with_eps=derivation.with_eps,
                    scalar_gamma=derivation.scalar_gamma,
                    inputs=json.dumps(spec),
                )
            )
            return question_id

    def _current(self, conn: Connection, class_id: int, lock: bool = False) -> Question | None:
        query = (
            select(questions, rounds.c.opened_at, rounds.c.closes_at)
            .join(
                rounds,
                (rounds.c.question_id == questions.c.id)
                & (rounds.c.number == questions.c.current_round),
            )
            .where(questions.c.class_id == class_id)
            .order_by(questions.c.id.desc())
            .limit(1)
        )
        # Votes hold the question row shared, so a reveal waits for the votes in flight.
        row = conn.execute(query.with_for_update(read=True) if lock else query).first()
        if row is None:
            return None
        asked = _asked(row)
        # A round whose countdown ran out is closed for everyone alike: the votes, the
        # students' bars (woken by the change, ui/live/wake.py) and the instructor's counts.
        still = row.closes_at is None or self.clock() < row.closes_at
        return Question(row.id, asked, row.current_round, row.round_open and still,
                        row.revealed, row.opened_at, row.closes_at)  # fmt: skip

    def _move(
        self, conn: Connection, code: str, secret: str, question_id: int, round_no: int,
        **values: object,
    ) -> None:  # fmt: skip
        """Change the question, if the class is still at this question and round."""
        current = self._current(conn, self._own_class(conn, code, secret))
        if current is None or current.id != question_id or current.round != round_no:
            raise Refused("The class has moved on from that question or round; nothing changed.")
        conn.execute(sql_update(questions).where(questions.c.id == question_id).values(**values))

    def reveal(self, code: str, secret: str, question_id: int, round_no: int) -> None:
        """Close the round and show the answers."""
        with self._write() as conn:
            self._move(conn, code, secret, question_id, round_no, round_open=False, revealed=True)

    def close_voting(
        self, code: str, secret: str, question_id: int, round_no: int, after_s: float = 0.0
    ) -> None:
        """Close the round's voting now, or after a countdown of `after_s` s, without revealing:
        votes that come later are refused."""
        if not 0 <= after_s <= rules.MAX_COUNTDOWN_S:
            raise Refused(f"A countdown runs 0 to {rules.MAX_COUNTDOWN_S:g} s.")
        with self._write() as conn:
            current = self._current(conn, self._own_class(conn, code, secret), lock=True)
            if current is None or (current.id, current.round) != (question_id, round_no):
                raise Refused(
                    "The class has moved on from that question or round; nothing changed."
                )
            if not current.round_open:
                raise Refused("Voting for that round is already closed.")
            conn.execute(
                sql_update(rounds)
                .where(rounds.c.question_id == question_id, rounds.c.number == round_no)
                .values(closes_at=self.clock() + after_s)
            )

    def vote_again(self, code: str, secret: str, question_id: int, round_no: int) -> None:
        """Close round `round_no` and open the next, with the answer hidden again."""
        if round_no >= rules.ROUNDS:
            raise Refused(f"A question has at most {rules.ROUNDS} rounds.")
        with self._write() as conn:
            self._move(conn, code, secret, question_id, round_no,
                       current_round=round_no + 1, round_open=True, revealed=False)  # fmt: skip
            conn.execute(
                insert(rounds).values(
                    question_id=question_id, number=round_no + 1, opened_at=self.clock()
                )
            )

    def end(self, code: str, secret: str) -> None:
        with self._write() as conn:
            class_id = self._own_class(conn, code, secret)
            conn.execute(
                sql_update(classes).where(classes.c.id == class_id).values(ended_at=self.clock())
            )

    def size(self, code: str, secret: str, expected: int | None, capped: bool) -> None:
        """Say how many students the class expects (None: not said), and whether browsers
        beyond that are refused (members already in stay)."""
        if expected is not None and not 1 <= expected <= MAX_CLASS:
            raise Refused(f"A class size is a whole number from 1 to {MAX_CLASS}.")
        with self._write() as conn:
            class_id = self._own_class(conn, code, secret)
            conn.execute(
                sql_update(classes)
                .where(classes.c.id == class_id)
                .values(expected=expected, capped=capped and expected is not None)
            )

    def status(self, code: str, secret: str) -> Status:
        with self._read() as conn:
            class_id = self._own_class(conn, code, secret)
            joined = conn.execute(
                select(func.count()).select_from(members).where(members.c.class_id == class_id)
            ).scalar_one()
            size = conn.execute(
                select(classes.c.expected, classes.c.capped).where(classes.c.id == class_id)
            ).one()
            current = self._current(conn, class_id)
            counts = {} if current is None else self._counts(conn, current)
            histogram = {} if current is None else self._histogram(conn, current)
            revealed = current is not None and current.revealed
            split = self._sureness(conn, current) if revealed else {}
            return Status(joined, current, counts, size.expected, bool(size.capped), histogram,
                          split)  # fmt: skip

    def _sureness(self, conn: Connection, question: Question) -> Sureness:
        """How sure the votes for `question` were: round -> per option, the votes per
        rules.CONFIDENCE level, then those that did not say."""
        rows = conn.execute(
            select(rounds.c.number, votes.c.option, votes.c.confidence, func.count())
            .join(votes, votes.c.round_id == rounds.c.id)
            .where(rounds.c.question_id == question.id)
            .group_by(rounds.c.number, votes.c.option, votes.c.confidence)
        ).all()
        levels = len(rules.CONFIDENCE)
        split = {
            n: [[0] * (levels + 1) for _ in question.asked.options]
            for n in range(1, question.round + 1)
        }
        for number, option, confidence, count in rows:
            split[number][option][levels if confidence is None else confidence] += count
        return {n: tuple(tuple(c) for c in per) for n, per in split.items()}

    def _counts(self, conn: Connection, question: Question) -> dict[int, tuple[int, ...]]:
        rows = conn.execute(
            select(rounds.c.number, votes.c.option, func.count())
            .join(votes, votes.c.round_id == rounds.c.id)
            .where(rounds.c.question_id == question.id)
            .group_by(rounds.c.number, votes.c.option)
        ).all()
        counts = {n: [0] * len(question.asked.options) for n in range(1, question.round + 1)}
        for number, option, count in rows:
            counts[number][option] = count
        return {n: tuple(c) for n, c in counts.items()}

    def _histogram(self, conn: Connection, question: Question) -> Histogram:
        rows = conn.execute(
            select(
                rounds.c.number, formula_answers.c.verdict, formula_answers.c.mistake, func.count()
            )
            .join(formula_answers, formula_answers.c.round_id == rounds.c.id)
            .where(rounds.c.question_id == question.id)
            .group_by(rounds.c.number, formula_answers.c.verdict, formula_answers.c.mistake)
        ).all()
        histogram: Histogram = {n: {} for n in range(1, question.round + 1)}
        for number, verdict, mistake, count in rows:
            histogram[number][Judged(verdict, mistake)] = count
        return histogram

    def results(self, code: str, secret: str) -> list[dict[str, object]]:
        """Every question asked, in order: its options and the votes per option per round."""
        with self._read() as conn:
            class_id = self._own_class(conn, code, secret)
            ids = conn.execute(
                select(questions.c.id).where(questions.c.class_id == class_id).order_by("id")
            ).scalars()
            out = []
            for number, question_id in enumerate(list(ids), start=1):
                row = conn.execute(select(questions).where(questions.c.id == question_id)).one()
                options = json.loads(row.options)
                asked = _asked(row)
                question = Question(
                    row.id, asked, row.current_round, row.round_open, row.revealed, row.asked_at
                )
                if not options:
                    out += _typed_rows(number, row, self._histogram(conn, question))
                    continue
                counts = self._counts(conn, question)
                split = self._sureness(conn, question)
                for index, option in enumerate(options):
                    out.append(
                        {
                            "question": number,
                            "title": row.title,
                            "prompt": row.prompt,
                            "option": option,
                            "correct": index == row.answer,
                            **{f"round {n}": counts[n][index] for n in sorted(counts)},
                            **{
                                f"round {n} {level}": split[n][index][k]
                                for n in sorted(split)
                                for k, level in enumerate((*rules.CONFIDENCE, rules.NOT_SAID))
                            },
                        }
                    )
            return out

    # The students' side.

    def _recent(self, conn: Connection, kind: str, who: str | None, seconds: float) -> int:
        query = select(func.count()).where(
            attempts.c.kind == kind, attempts.c.at > self.clock() - seconds
        )
        if who is not None:
            query = query.where(attempts.c.who == who)
        return conn.execute(query.select_from(attempts)).scalar_one()

    def join(self, code_text: str, browser: str) -> str:
        """A browser joins the class with this code; returns the code in its stored form.

        The code is looked up first: a running class's code always lets its members back in,
        and anyone else while the class has room; only a code known to be wrong counts
        against the browser's limit, so a flood of wrong codes refuses nobody else.
        """
        rules.check_browser_id(browser)
        lim = self.limits
        try:
            code, refusal = rules.read_code(code_text), None
        except Refused as err:
            code, refusal = "", str(err)
        with self._write() as conn:
            row = conn.execute(
                select(classes.c.id, classes.c.ended_at, classes.c.expected, classes.c.capped)
                .where(classes.c.code == code)
            ).first()  # fmt: skip
            if row is not None and row.ended_at is not None:
                refusal = "This class has ended."  # its students reopening the lab: no guess
            elif row is not None:
                refusal = self._admit(conn, row, browser)
            elif self._recent(conn, "join_failed", browser, lim.joins_failed_per_browser_s) >= (
                lim.joins_failed_per_browser
            ):
                refusal = (
                    "Too many wrong join codes from this browser; check the code with your "
                    "instructor (the right one always works)."
                )
            else:
                conn.execute(
                    insert(attempts).values(kind="join_failed", who=browser, at=self.clock())
                )
                refusal = refusal or "No class is running with this join code."
        if refusal:
            raise Refused(refusal)
        return code

    def _admit(self, conn: Connection, row: Row, browser: str) -> str | None:
        """Add the browser to the running class `row` unless it is full; the refusal if so."""
        known = conn.execute(
            select(members.c.browser).where(
                members.c.class_id == row.id, members.c.browser == browser
            )
        ).first()
        if known is not None:
            return None
        if row.capped and row.expected is not None:
            joined = conn.execute(
                select(func.count()).select_from(members).where(members.c.class_id == row.id)
            ).scalar_one()
            if joined >= row.expected:
                return (
                    f"This class is full: the instructor admits {row.expected} students. "
                    "If you are one of them, tell your instructor."
                )
        conn.execute(
            insert(members).values(class_id=row.id, browser=browser, joined_at=self.clock())
        )
        return None

    def glance(self, code: str) -> Glance:
        with self._read() as conn:
            return self._glance(conn, code)

    def _glance(self, conn: Connection, code: str) -> Glance:
        row = conn.execute(select(classes).where(classes.c.code == code)).first()
        if row is None:
            raise Refused("This class is no longer there.")
        follow = Follow(row.follow_version, row.follow_page, row.follow_query)
        return Glance(follow, row.ended_at is not None, self._current(conn, row.id))

    def poll(self, code: str, browser: str) -> Poll:
        with self._read() as conn:
            glance = self._glance(conn, code)
            mine: dict[int, int] = {}
            if glance.question is not None:
                mine = dict(
                    conn.execute(
                        select(rounds.c.number, votes.c.option)
                        .join(votes, votes.c.round_id == rounds.c.id)
                        .where(
                            rounds.c.question_id == glance.question.id, votes.c.browser == browser
                        )
                    ).all()
                )
            question = glance.question
            if question is None or question.asked.options:
                shown = question is not None and question.revealed
                return Poll(glance, mine, self._sureness(conn, question) if shown else None)
            typed = conn.execute(
                select(rounds.c.number, formula_answers)
                .join(formula_answers, formula_answers.c.round_id == rounds.c.id)
                .where(rounds.c.question_id == question.id, formula_answers.c.browser == browser)
            ).all()
            my_formulas = {r.number: _formula_answer(r) for r in typed}
            histogram = self._histogram(conn, question) if question.revealed else None
            return Poll(glance, mine, None, my_formulas, histogram)

    def vote(
        self, code: str, browser: str, question_id: int, round_no: int, option: int,
        confidence: int | None = None,
    ) -> None:  # fmt: skip
        """Record one vote, with how sure the student said they were (an index of
        rules.CONFIDENCE, or None); returns only once it is committed."""
        rules.check_confidence(confidence)

        def check(current: Question) -> None:
            rules.check_option(option, list(current.asked.options))

        self._record(votes, "vote", code, browser, (question_id, round_no), check,
                     "You have already voted in this round.", option=option,
                     confidence=confidence)  # fmt: skip

    def _record(
        self, table: Table, kind: str, code: str, browser: str, at: tuple[int, int],
        check: Callable[[Question], None], already: str, **values: object,
    ) -> None:  # fmt: skip
        """One answer (`kind`: a vote or a typed formula) to round `at` (question id, round
        number) in `table`, once the round and `check` allow it; a second from the browser is
        refused with `already` (the database's own unique rule, so racing replicas cannot both
        succeed). Returns only once it is committed."""
        rules.check_browser_id(browser)
        question_id, round_no = at
        refusal = None
        with self._write() as conn:
            conn.execute(insert(attempts).values(kind=kind, who=browser, at=self.clock()))
            try:
                check(self._open_round(conn, code, browser, question_id, round_no, kind))
                with conn.begin_nested():
                    round_id = conn.execute(
                        select(rounds.c.id).where(
                            rounds.c.question_id == question_id, rounds.c.number == round_no
                        )
                    ).scalar_one()
                    conn.execute(
                        insert(table).values(
                            round_id=round_id, browser=browser, at=self.clock(), **values
                        )
                    )
            except Refused as err:
                refusal = str(err)
            except IntegrityError:
                refusal = already
        if refusal:
            raise Refused(refusal)

    def _open_round(
        self, conn: Connection, code: str, browser: str, question_id: int, round_no: int,
        kind: str,
    ) -> Question:  # fmt: skip
        """The question being answered, if a member of the class may answer its round now
        (`kind`: a vote or a typed formula, each rate-limited alike); else Refused."""
        lim = self.limits
        if self._recent(conn, kind, browser, lim.votes_per_browser_s) > lim.votes_per_browser:
            raise Refused(f"Too many {kind}s from this browser; wait a few seconds.")
        row = conn.execute(
            select(classes.c.id, classes.c.ended_at).where(classes.c.code == code)
        ).first()
        if row is None or row.ended_at is not None:
            raise Refused("No class is running with this join code.")
        joined = conn.execute(
            select(members.c.browser).where(
                members.c.class_id == row.id, members.c.browser == browser
            )
        ).first()
        if joined is None:
            raise Refused("Join the class before voting.")
        current = self._current(conn, row.id, lock=True)
        if current is None or current.id != question_id:
            raise Refused("That question is not the one being asked now.")
        if current.round != round_no or not current.round_open:
            if current.round == round_no and current.closes_at is not None:
                raise Refused("The instructor closed voting for this round.")
            raise Refused("Voting for that round is closed.")
        return current

    # Typed formulas: the judge runs in the student's process between `derivation` (what to
    # judge on) and `answer` (the verdict recorded), outside any transaction, so a slow
    # formula holds no lock; `answer` checks again that the round is still open.

    def derivation(self, code: str, question_id: int) -> Derivation:
        """What the answers to a typed question are judged on."""
        with self._read() as conn:
            row = conn.execute(
                select(derivations)
                .join(questions, questions.c.id == derivations.c.question_id)
                .join(classes, classes.c.id == questions.c.class_id)
                .where(classes.c.code == code, derivations.c.question_id == question_id)
            ).first()
        if row is None:
            raise Refused("That question is not one answered with a formula.")
        spec = json.loads(row.inputs)
        arrays = {k: tuple(float(v) for v in spec[k]) for k in ("x", "gamma", "beta", "dout")}
        return Derivation(row.target, row.with_eps, row.scalar_gamma, **arrays, eps=spec["eps"])

    def answer(
        self, code: str, browser: str, question_id: int, round_no: int, text: str, judged: Judged
    ) -> None:
        """Record one typed formula and its judged category; returns once it is committed."""
        rules.check_formula(text)
        if judged.verdict not in VERDICTS or len(judged.mistake) > MAX_MISTAKE:
            raise ValueError(f"not a judged category: {judged!r}")

        def check(current: Question) -> None:
            if current.asked.options:
                raise Refused("That question is answered by choosing, not with a formula.")

        category = {"verdict": judged.verdict, "mistake": judged.mistake}
        self._record(formula_answers, "formula", code, browser, (question_id, round_no), check,
                     ANSWERED, text=text, **category)  # fmt: skip

    def answers(self, code: str, secret: str, question_id: int) -> list[FormulaAnswer]:
        """The typed formulas of a question, for its instructor only, in the order given."""
        with self._read() as conn:
            class_id = self._own_class(conn, code, secret)
            rows = conn.execute(
                select(rounds.c.number, formula_answers)
                .join(formula_answers, formula_answers.c.round_id == rounds.c.id)
                .join(questions, questions.c.id == rounds.c.question_id)
                .where(questions.c.class_id == class_id, questions.c.id == question_id)
                .order_by(formula_answers.c.id)
            ).all()
        return [_formula_answer(r) for r in rows]

    # Retention.

    def purge(self, retention_s: float) -> int:
        """Delete classes ended more than `retention_s` ago, with all they hold; old attempts.

        Returns how many classes were deleted.
        """
        cutoff = self.clock() - retention_s
        with self._write() as conn:
            old = select(classes.c.id).where(classes.c.ended_at < cutoff)
            old_questions = select(questions.c.id).where(questions.c.class_id.in_(old))
            old_rounds = select(rounds.c.id).where(rounds.c.question_id.in_(old_questions))
            conn.execute(delete(votes).where(votes.c.round_id.in_(old_rounds)))
            conn.execute(delete(formula_answers).where(formula_answers.c.round_id.in_(old_rounds)))
            conn.execute(delete(derivations).where(derivations.c.question_id.in_(old_questions)))
            conn.execute(delete(rounds).where(rounds.c.question_id.in_(old_questions)))
            conn.execute(delete(questions).where(questions.c.class_id.in_(old)))
            conn.execute(delete(members).where(members.c.class_id.in_(old)))
            longest = max(self.limits.joins_failed_per_browser_s, self.limits.votes_per_browser_s)
            conn.execute(delete(attempts).where(attempts.c.at < self.clock() - longest))
            return conn.execute(delete(classes).where(classes.c.ended_at < cutoff)).rowcount


def _asked(row: Row) -> Asked:
    """A question's row as asked (`answer` NO_ANSWER: none is right)."""
    answer = None if row.answer == NO_ANSWER else row.answer
    options = tuple(json.loads(row.options))
    return Asked(row.title, row.prompt, options, answer, row.explanation, bool(row.own))


def _formula_answer(row: Row) -> FormulaAnswer:
    return FormulaAnswer(row.number, row.text, Judged(row.verdict, row.mistake))


def _typed_rows(number: int, row: Row, histogram: Histogram) -> list[dict[str, object]]:
    """A typed question's lines of the results: one per category, its answers per round."""
    return [
        {
            "question": number,
            "title": row.title,
            "prompt": row.prompt,
            "option": judged.label,
            "correct": judged.verdict == "correct",
            **{f"round {n}": histogram[n].get(judged, 0) for n in sorted(histogram)},
        }
        for judged in categories(histogram)
    ]


@contextmanager
def _reachable() -> Iterator[None]:
    try:
        yield
    except IntegrityError:
        raise
    except DBAPIError as err:
        said = str(err.orig or err).splitlines()[0][:200]
        if "locked" in said or "lock timeout" in said:
            said = f"its database stayed locked by another program for {BUSY_MS / 1000:g} s"
        raise StoreUnavailable(said) from err


def _add_missing_columns(conn: Connection) -> None:
    """Add the columns a database made by an older lab lacks (all such columns are nullable)."""
    found = inspect(conn)
    for table in metadata.sorted_tables:
        have = {column["name"] for column in found.get_columns(table.name)}
        for column in table.columns:
            if column.name not in have:
                kind = column.type.compile(dialect=conn.dialect)
                conn.execute(text(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}'))


def _sqlite_file(engine: Engine) -> Path | None:
    name = engine.url.database if engine.dialect.name == "sqlite" else None
    return Path(name).resolve() if name and name != ":memory:" else None


def _file_id(path: Path) -> tuple[int, int]:
    found = os.stat(path)
    return found.st_dev, found.st_ino


def _engine(url: str) -> Engine:
    if not url.startswith("sqlite"):
        # A database host that does not answer fails in seconds, not at the TCP timeout. An
        # app host that vanishes mid-transaction (a cut link) would hold its rows, a student's
        # vote among them, until the server noticed the dead connection (hours): the server
        # ends a transaction left idle IDLE_TRANSACTION_S. Ours last milliseconds.
        idle = f"-c idle_in_transaction_session_timeout={IDLE_TRANSACTION_S * 1000}"
        return create_engine(
            url, pool_pre_ping=True, pool_size=5, max_overflow=5,
            connect_args={"connect_timeout": 5, "options": f"-c lock_timeout={BUSY_MS} {idle}"},
        )  # fmt: skip
    engine = create_engine(url, connect_args={"timeout": BUSY_MS / 1000})

    @event.listens_for(engine, "connect")
    def _setup(dbapi_connection, _record) -> None:
        # The driver's own transaction handling off: BEGIN is emitted below instead.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in ("journal_mode=WAL", "synchronous=FULL", f"busy_timeout={BUSY_MS}"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        write = conn.get_execution_options().get(_WRITE)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine
