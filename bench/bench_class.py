"""A live class over Streamlit's websocket protocol: N students, an instructor, R replicas.

    python -m bench.bench_class --students 100 --replicas 2

Fresh app processes behind HAProxy (deploy/replicas.py) share one SQLite store in a temporary
folder. The instructor (one websocket session, as a browser would drive it) starts a class on
the Class page and stays there while every student opens the join link (?join=CODE) at a
random moment within --join-window s of the first (their labs wait on the Stepper at step 1,
where a class starts, ui/live/follow.py); each then
does what a browser does: shows the runs the server starts (the live class's wake-ups,
ui/live/wake.py) and reruns the class bar's fragment every run_every seconds. The instructor
opens the Stepper (the first step: the class's first published view, which each lab takes),
then clicks Next every --step-every s (--steps times): a student has followed a step when a run
of theirs after the click shows the Stepper at it (the URL the app wrote carries step=N); the
delay is from the
instructor's click to that run's end, reported for the first step apart from the later ones.
Then the instructor asks the step's question; each student votes at a random moment within
--vote-window s (radio + Vote in the bar's fragment, as a click sends them) and one in
ten sends the same vote message again. A vote is acknowledged when the run it started shows
"Your vote is counted". At the end the store's counts are compared with the acknowledged votes:
lost (acknowledged, not counted) and double-counted votes must be 0. Results go to
bench/results/class_<R>.json; the exit status is 1 if a goal was missed.

A student whose websocket breaks reconnects as a browser does, its cookies naming its browser
and class (bench/ws_client.py), and shows its page again. The pieces (Student, start_class,
join_class, next_step, ask, counted_votes) are also what tests/live/test_cluster.py runs a class
with, across hosts made of network namespaces.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field

from sqlalchemy import create_engine, select

from bench.bench_load import percentile, tree_cpu_seconds
from bench.results import table, write_result
from bench.ws_client import ProtocolError, RunResult, Session, step_forward, widget_state
from deploy.replicas import Replicas
from ui.live.schema import classes, questions, rounds, votes

GOALS = {"follow p95": 1000.0, "first step p95": 1000.0, "vote ack p95": 500.0}
CODE = re.compile(r"Join code: `(\w{4})-(\w{4})`")
STEP = re.compile(r"(?:^|&)step=(\d+)")
HEADING = re.compile(r"^Step (\d+) of 20")
# What the class bar says of this browser's vote (ui/live/student.py), and of the answer.
COUNTED = re.compile(r"^Your vote is counted: (.*)\. Wait for the instructor\.$", re.DOTALL)
REVEALED = re.compile(r"^(Right: |You chose .*; the answer is |The answer: )", re.DOTALL)
RECONNECT_TRIES = 5


@dataclass(frozen=True)
class Options:
    students: int
    replicas: int
    steps: int
    step_every: float
    join_window: float
    vote_window: float
    timeout: float


@dataclass
class Tally:
    """Everything measured, in ms where a time."""

    joins_ms: list[float] = field(default_factory=list)
    join_spread_s: float = 0.0
    first_ms: list[float] = field(default_factory=list)  # step 1: the Stepper opened
    follow_ms: list[float] = field(default_factory=list)  # the Next clicks after it
    follow_missed: int = 0
    vote_ms: list[float] = field(default_factory=list)
    acknowledged: Counter[int] = field(default_factory=Counter)
    replays: int = 0
    replays_refused: int = 0
    reconnects: int = 0
    polls: int = 0
    woken: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    first_errors: list[str] = field(default_factory=list)

    def failed(self, exc: ProtocolError) -> None:
        self.errors[exc.kind] += 1
        if len(self.first_errors) < 5:
            self.first_errors.append(str(exc)[:300])


def parse_options(argv: list[str] | None = None) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--steps", type=int, default=6, help="step changes to follow")
    parser.add_argument("--step-every", type=float, default=5.0, help="s between steps")
    parser.add_argument("--join-window", type=float, default=10.0, help="s in which all join")
    parser.add_argument("--vote-window", type=float, default=10.0, help="s in which all vote")
    parser.add_argument("--timeout", type=float, default=30.0, help="a slower run is an error")
    args = parser.parse_args(argv)
    if not (1 <= args.students <= 500 and 1 <= args.replicas <= 16 and 1 <= args.steps <= 15):
        parser.error("--students 1..500, --replicas 1..16, --steps 1..15")
    return Options(args.students, args.replicas, args.steps, args.step_every, args.join_window,
                   args.vote_window, args.timeout)  # fmt: skip


class Student:
    """One student's tab: joins, polls the class bar like a browser, follows, votes once."""

    def __init__(self, port: int, rng: random.Random, options: Options, tally: Tally) -> None:
        self.session = Session(port, timeout=options.timeout)
        self.rng, self.options, self.tally = rng, options, tally
        self.bar = ""
        self.seen_steps: set[int] = set()
        self.vote_at: float | None = None
        self.voted = False
        self.options: tuple[str, ...] = ()  # the answers, as the question's radio shows them
        self.acknowledged: int | None = None  # the option the app said it counted
        self.shown_on_reconnect: list[int | None] = []  # the vote each reconnect showed
        self.revealed = False  # a run showed the answer

    async def join(self, code: str, delay: float) -> float:
        await asyncio.sleep(delay)
        await self.session.connect()
        result = await self.session.rerun("", query_string=f"join={code}")
        self.bar = next(iter(self.session.auto_reruns), "")
        if not self.bar:
            raise ProtocolError("no_class_bar", "the join run started no polling fragment")
        self.look(result, {})
        return result.latency_ms

    def look(self, result: RunResult, published: dict[int, float]) -> None:
        """What a run showed: the step the lab is on (a followed step), the question, the
        vote it says is counted (one whose acknowledgment was lost counts as acknowledged)."""
        # The walk's heading where the run drew the walk (a followed step's run leaves the
        # address to the browser, pages/stepper/walk.js), else the address the app wrote.
        found = next((HEADING.match(t) for t in result.texts if HEADING.match(t)), None)
        found = found or STEP.search(result.query_string)
        if found is not None and result.page == "stepper":
            number = int(found.group(1))
            # (Only after the click: a lab joined onto the Stepper shows step 1 before it.)
            if number in published and number not in self.seen_steps:
                delay = (time.monotonic() - published[number]) * 1000
                (self.tally.first_ms if number == 1 else self.tally.follow_ms).append(delay)
                self.seen_steps.add(number)
        radio = result.widgets.get("Your answer")
        if radio is not None:
            self.options = tuple(radio.proto.options)
        counted = self.counted(result)
        if counted is not None and self.acknowledged is None:
            self.acknowledged, self.voted = counted, True
            self.tally.acknowledged[counted] += 1
        self.revealed = self.revealed or any(REVEALED.match(t) for t in result.texts)

    def counted(self, result: RunResult) -> int | None:
        """The option the run says this browser's vote counts for, if it says so."""
        found = next((COUNTED.match(t) for t in result.texts if COUNTED.match(t)), None)
        if found is None or found.group(1) not in self.options:
            return None
        return self.options.index(found.group(1))

    async def reconnect(self, published: dict[int, float]) -> bool:
        """As a browser does when its websocket breaks: a new one, sent with its cookies, and
        its page again with its URL. False if that failed RECONNECT_TRIES times."""
        for attempt in range(RECONNECT_TRIES):
            await asyncio.sleep(attempt)  # a browser waits longer after each failure
            try:
                await self.session.connect()
                result = await self.session.rerun(None)
            except ProtocolError as exc:
                self.tally.failed(exc)
                continue
            self.tally.reconnects += 1
            self.look(result, published)
            self.shown_on_reconnect.append(self.counted(result))
            return True
        return False

    async def listen_until(self, stop: asyncio.Event, published: dict[int, float]) -> None:
        """The tab until `stop`: the server's runs as they come, the bar's timer, one vote."""
        interval = self.session.auto_reruns[self.bar]
        tick = time.monotonic() + interval
        while not stop.is_set():
            now = time.monotonic()
            try:
                due = self.vote_at is not None and not self.voted and now >= self.vote_at
                if due and "Your answer" in self.session.widgets:
                    await self.vote()
                    continue
                if now >= tick:
                    tick = now + interval
                    result = await self.session.rerun(fragment_id=self.bar)
                    self.tally.polls += 1
                else:
                    # Until the next thing to do (at most 1 s: the stop is not held up long).
                    voting = self.vote_at if self.vote_at is not None and not self.voted else tick
                    within = min(tick, max(voting, now), now + 1.0) - now
                    result = await self.session.wait_run(within=within)
                    if result is None:
                        continue
                    self.tally.woken += 1
                self.look(result, published)
            except ProtocolError as exc:
                self.tally.failed(exc)
                # A browser reconnects when its websocket closes; a run that never ends leaves
                # its tab waiting for good.
                if exc.kind == "timeout":
                    return
                if exc.kind == "disconnect" and not await self.reconnect(published):
                    return

    async def vote(self) -> None:
        radio = self.session.widgets["Your answer"]
        self.options = tuple(radio.proto.options)
        option = self.rng.randrange(len(radio.proto.options))
        choice = widget_state(radio, radio.proto.options[option])
        # As in a browser: choosing enables Vote (a rerun of the bar), then Vote is clicked.
        await self.session.rerun(fragment_id=self.bar, widget_states=[choice])
        states = [choice, widget_state(self.session.widgets["Vote"], True)]
        result = await self.session.rerun(fragment_id=self.bar, widget_states=states)
        if self.counted(result) != option:
            raise ProtocolError("vote_not_acknowledged", " | ".join(result.alerts)[:200])
        self.voted, self.acknowledged = True, option
        self.tally.vote_ms.append(result.latency_ms)
        self.tally.acknowledged[option] += 1
        if self.rng.random() < 0.1:  # the same message again, as a replaying client would
            self.tally.replays += 1
            again = await self.session.rerun(fragment_id=self.bar, widget_states=states)
            if any("already voted" in a or "counted" in a for a in again.texts):
                self.tally.replays_refused += 1


async def teacher_click(teacher: Session, label: str) -> RunResult:
    widget = teacher.widgets.get(label)
    if widget is None:
        raise ProtocolError("missing_widget", f"{label!r} on {teacher.current_page!r}")
    return await teacher.rerun(None, [widget_state(widget, True)])


async def start_class(teacher: Session, open_stepper: bool = True) -> str:
    """The instructor starts a class on the Class page and opens the Stepper (which publishes
    step 1) unless told to stay; the class's join code."""
    await teacher.connect()
    await teacher.rerun("class", query_string="")
    started = await teacher_click(teacher, "Start a class")
    found = next((CODE.search(t) for t in started.texts if CODE.search(t)), None)
    if found is None:
        raise ProtocolError("no_class", " | ".join(started.alerts)[:300])
    if open_stepper:
        await teacher.rerun("stepper", query_string="")
    return found.group(1) + found.group(2)


async def join_class(students: list[Student], code: str, window: float) -> list[Student]:
    """Every student opens the join link at a random moment within `window` s; those whose lab
    joined (a failure is in the tally)."""
    delays = sorted(s.rng.uniform(0, window) for s in students)
    tally = students[0].tally
    began = time.monotonic()
    joined = await asyncio.gather(
        *(s.join(code, d) for s, d in zip(students, delays, strict=True)), return_exceptions=True
    )
    tally.join_spread_s = time.monotonic() - began
    for outcome in joined:
        if isinstance(outcome, ProtocolError):
            tally.failed(outcome)
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            tally.joins_ms.append(outcome)
    return [s for s in students if s.bar]


async def teacher_step(teacher: Session) -> RunResult:
    """The instructor's Stepper moves on one step, as its browser part tells the server."""
    moved = step_forward(teacher)
    if moved is None:
        raise ProtocolError("missing_widget", f"no next step on {teacher.current_page!r}")
    return await teacher.rerun(None, [moved])


async def next_step(teacher: Session, step: int, published: dict[int, float]) -> None:
    """The instructor moves the Stepper on to `step` (its browser part tells the server)."""
    # Timed from the move: students may see the step before the instructor's run ends.
    published[step] = time.monotonic()
    result = await teacher_step(teacher)
    if STEP.search(result.query_string).group(1) != str(step):
        raise ProtocolError("no_effect", f"Next did not reach step {step}")


async def ask(teacher: Session, students: list[Student], window: float) -> None:
    """The instructor asks the step's question; each student will vote within `window` s."""
    await teacher.rerun("class", query_string="")
    asked = time.monotonic()
    await teacher_click(teacher, "Ask")
    for s in students:
        s.vote_at = asked + s.rng.uniform(0, window)


async def run_class(port: int, pids: list[int], db_url: str, options: Options) -> dict:
    tally = Tally()
    teacher = Session(port, timeout=options.timeout)
    code = await start_class(teacher, open_stepper=False)
    cpu_before, driver_before = tree_cpu_seconds(pids), time.process_time()
    students = [Student(port, random.Random(i), options, tally) for i in range(options.students)]
    polling = await join_class(students, code, options.join_window)
    stop = asyncio.Event()
    published: dict[int, float] = {}
    pollers = [asyncio.create_task(s.listen_until(stop, published)) for s in polling]
    await asyncio.sleep(2.0)  # every lab quiet on the Stepper
    published[1] = time.monotonic()  # the first step: the instructor opens the Stepper
    await teacher.rerun("stepper", query_string="")
    await asyncio.sleep(max(0.0, options.step_every - (time.monotonic() - published[1])))
    for step in range(2, options.steps + 2):
        await next_step(teacher, step, published)
        await asyncio.sleep(max(0.0, options.step_every - (time.monotonic() - published[step])))
    await ask(teacher, polling, options.vote_window)
    deadline = time.monotonic() + options.vote_window + options.timeout
    while time.monotonic() < deadline and not all(s.voted for s in polling):
        await asyncio.sleep(0.5)
    stop.set()
    await asyncio.gather(*pollers)
    cpu = tree_cpu_seconds(pids) - cpu_before
    driver_cpu = time.process_time() - driver_before
    await asyncio.gather(teacher.close(), *(s.session.close() for s in students))
    tally.follow_missed = sum(1 for s in polling for n in published if n not in s.seen_steps)
    counted = Counter(counted_votes(db_url, code).values())
    lost = sum(max(0, n - counted.get(k, 0)) for k, n in tally.acknowledged.items())
    double = sum(max(0, n - tally.acknowledged.get(k, 0)) for k, n in counted.items())
    return {"tally": tally, "lost": lost, "double": double, "counted": sum(counted.values()),
            "cpu_s": cpu, "driver_cpu_s": driver_cpu,
            "not_voted": sum(1 for s in polling if not s.voted)}  # fmt: skip


def counted_votes(db_url: str, code: str) -> dict[str, int]:
    """Browser id -> the option its vote counts for in the store, for the class's question,
    round 1 (read directly; one vote per browser and round is a database constraint)."""
    engine = create_engine(db_url)
    query = (
        select(votes.c.browser, votes.c.option)
        .join(rounds, votes.c.round_id == rounds.c.id)
        .join(questions, rounds.c.question_id == questions.c.id)
        .join(classes, questions.c.class_id == classes.c.id)
        .where(classes.c.code == code, rounds.c.number == 1)
    )
    with engine.connect() as conn:
        found = dict(conn.execute(query).all())
    engine.dispose()
    return found


def main(argv: list[str] | None = None) -> int:
    options = parse_options(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="lnlab-class-") as folder:
        db_url = f"sqlite:///{folder}/classes.sqlite3"
        with Replicas(options.replicas, env={"LNLAB_CLASS_DB": db_url}) as group:
            out = asyncio.run(run_class(group.port, group.app_pids, db_url, options))
    tally: Tally = out["tally"]
    errors = sum(tally.errors.values())
    if not (tally.first_ms and tally.follow_ms and tally.vote_ms and tally.joins_ms):
        print("nothing to measure:", tally.errors, *tally.first_errors, sep="\n  ")
        return 1
    follow_p95 = percentile(tally.follow_ms, 95) if tally.follow_ms else float("nan")
    first_p95 = percentile(tally.first_ms, 95) if tally.first_ms else float("nan")
    vote_p95 = percentile(tally.vote_ms, 95) if tally.vote_ms else float("nan")
    met = (
        out["lost"] == 0 and out["double"] == 0 and errors == 0 and tally.follow_missed == 0
        and out["not_voted"] == 0 and follow_p95 < GOALS["follow p95"]
        and first_p95 < GOALS["first step p95"]
        and vote_p95 < GOALS["vote ack p95"]
    )  # fmt: skip
    columns = ["measure", "value", "goal"]
    rows = [
        ["students joined", f"{len(tally.joins_ms)} of {options.students}, within "
         f"{tally.join_spread_s:.1f} s (slowest first page {max(tally.joins_ms) / 1000:.1f} s)",
         "all within 10 s of each other"],
        ["first step (the Stepper opened) p50 / p95", f"{statistics.median(tally.first_ms):.0f}"
         f" / {first_p95:.0f} ms ({len(tally.first_ms)} students)", "p95 < 1000 ms"],
        ["follow delay p50 / p95", f"{statistics.median(tally.follow_ms):.0f} / "
         f"{follow_p95:.0f} ms ({len(tally.follow_ms)} updates, {tally.follow_missed} missed)",
         "p95 < 1000 ms"],
        ["vote acknowledged p50 / p95", f"{statistics.median(tally.vote_ms):.0f} / "
         f"{vote_p95:.0f} ms ({len(tally.vote_ms)} votes)", "p95 < 500 ms"],
        ["votes lost / double-counted", f"{out['lost']} / {out['double']} "
         f"(counted {out['counted']}, acknowledged {sum(tally.acknowledged.values())}; "
         f"{tally.replays} replayed, {tally.replays_refused} refused)", "0 / 0"],
        ["errors", f"{errors}" + "".join(f", {k} {n}" for k, n in tally.errors.items()), "0"],
        ["runs: woken; the bar's timer. CPU: app; this driver",
         f"{tally.woken}; {tally.polls}. {out['cpu_s']:.0f} s; {out['driver_cpu_s']:.1f} s", ""],
    ]  # fmt: skip
    for line in rows:
        print(" | ".join(line))
    print(*tally.first_errors, sep="\n  ")
    write_result(
        f"class_{options.replicas}",
        f"5e. A live class: {options.students} students, {options.replicas} replicas",
        order=5.4,
        text=(
            f"`python -m bench.bench_class --students {options.students} --replicas "
            f"{options.replicas}`: the students join within {options.join_window:g} s while the "
            f"instructor is on the Class page, follow the Stepper's opening and "
            f"{options.steps} step changes {options.step_every:g} s apart and vote within "
            f"{options.vote_window:g} s of the question, over Streamlit's websocket protocol "
            f"through HAProxy, one SQLite store. Load average at the start {load:.1f}."
        ),
        tables=[table(columns, rows)],
        raw={"options": asdict(options), "tally": {k: (dict(v) if isinstance(v, Counter) else v)
             for k, v in vars(tally).items()}, **{k: v for k, v in out.items() if k != "tally"}},
    )  # fmt: skip
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
