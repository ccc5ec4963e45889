"""A class on the lab: many sessions at once over Streamlit's websocket protocol.

    python -m bench.bench_load                                      # pages: 30, 60, 100 sessions
    python -m bench.bench_load --scenario interactions --sessions 100
    python -m bench.bench_load --replicas 2 --sessions 100,160      # behind HAProxy
    python -m bench.bench_load --phases 2:100,0:60                  # issue 25's two targets

Each phase starts fresh servers (`python -m ui.server.launch` as `./run.sh` does, or N of them
behind HAProxy with --replicas), then every session sends its first request at the same moment, on a
page of its own (a class opening the link together: "cold burst, slowest first page"). Then
each session acts once every --interval s for --seconds, the sessions spread evenly over one
interval: `pages` re-runs a random page; `interactions` cycles through the Stepper's Next button,
a new seed in the sidebar and a switch to a random page. Latency is from sending the rerun to
its script_finished; the cold burst is from the moment every session starts connecting until
the last first page has finished. The driver's own CPU (it shares the machine with the servers)
is reported per wall second. The pages are app.py's own (bench/lab_pages.py). At the end a
Markdown table of every phase; results go to bench/results/load_*.json (BENCHMARKS.md); the exit
status is 1 if a phase saw an error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.lab_pages import lab_pages
from bench.results import table, write_result
from bench.ws_client import ProtocolError, RunResult, Session, step_forward, widget_state
from deploy.replicas import replica_count, usable_cores

CLK_TCK = os.sysconf("SC_CLK_TCK")
SCENARIOS = ("pages", "interactions")
# One session's cycle in the interactions scenario: two Next clicks, two seeds, two switches.
CYCLE = ("stepper", "next", "next", "seed", "page", "seed")
# Issue 25's targets for a class: what a student waits for a click, and for the first page.
TARGET_P95_MS = 500.0
TARGET_COLD_MS = 3000.0
MAX_REPLICAS = 16


@dataclass(frozen=True)
class Setup:
    """One phase's servers and class: `replicas` 0 is one plain server (`./run.sh`), N is N
    processes behind HAProxy (`./run.sh --replicas N`)."""

    replicas: int
    sessions: int


@dataclass(frozen=True)
class Options:
    phases: tuple[Setup, ...]
    scenario: str
    seconds: float
    interval: float
    timeout: float


@dataclass(frozen=True)
class Phase:
    """One phase's figures; latencies in ms."""

    sessions: int
    replicas: int
    scenario: str
    cold_slowest_ms: float  # from every session starting to connect to the last first page
    p50_ms: float
    p95_ms: float
    runs: int
    errors: int
    error_kinds: dict[str, int]
    first_errors: list[str]
    cpu_ms_per_run: float  # the app processes'
    # Sessions acting every interval that one process keeps busy all the time (one core): a
    # class's ceiling per process, whatever else the machine runs; answering fast needs less.
    sessions_per_core: float
    driver_cpu_per_s: float  # the load driver's CPU seconds per wall second of the phase
    load_average: float  # 1-minute, as the phase's sessions start

    @property
    def met(self) -> bool:
        """Issue 25's targets: p95 and cold burst within them, no error."""
        return (
            self.errors == 0
            and self.p95_ms < TARGET_P95_MS
            and self.cold_slowest_ms < TARGET_COLD_MS
        )


def parse_replicas(text: str, cores: int) -> int:
    """0 (one plain server), a count, or "auto" (one per core), as ./run.sh --replicas takes."""
    if text.strip() == "0":
        return 0
    count = replica_count(text, cores)
    if count > MAX_REPLICAS:
        raise ValueError(f"--replicas {count}: at most {MAX_REPLICAS}")
    return count


def parse_counts(text: str) -> tuple[int, ...]:
    """ "30,60" -> (30, 60); ValueError with a message."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not all(part.isdecimal() for part in parts):
        raise ValueError(f"--sessions takes comma-separated counts, not {text!r}")
    return tuple(int(part) for part in parts)


def parse_phases(text: str, cores: int) -> tuple[Setup, ...]:
    """ "2:100,0:60" -> (Setup(2, 100), Setup(0, 60)); ValueError with a message."""
    phases = []
    for part in text.split(","):
        replicas, colon, sessions = part.strip().partition(":")
        if not colon or not sessions.strip().isdecimal():
            raise ValueError(
                f"--phases takes REPLICAS:SESSIONS pairs like 2:100,0:60, not {part!r}"
            )
        phases.append(Setup(parse_replicas(replicas, cores), int(sessions)))
    return tuple(phases)


def parse_options(argv: list[str] | None = None, cores: int | None = None) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="30,60,100", help="counts, one phase each")
    parser.add_argument("--scenario", choices=SCENARIOS, default="pages")
    parser.add_argument("--seconds", type=float, default=30.0, help="steady part of a phase")
    parser.add_argument("--interval", type=float, default=2.0, help="s between a session's acts")
    parser.add_argument("--timeout", type=float, default=30.0, help="a slower run is an error")
    parser.add_argument(
        "--replicas", default="0", help="0: one plain server; N or auto: behind HAProxy"
    )
    parser.add_argument(
        "--phases", help="REPLICAS:SESSIONS,... e.g. 2:100,0:60 (instead of the two above)"
    )
    args = parser.parse_args(argv)
    cores = cores or usable_cores()
    try:
        if args.phases:
            phases = parse_phases(args.phases, cores)
        else:
            replicas = parse_replicas(args.replicas, cores)
            phases = tuple(Setup(replicas, count) for count in parse_counts(args.sessions))
    except ValueError as err:
        parser.error(str(err))
    counts = [phase.sessions for phase in phases]
    if not counts or min(counts) < 1 or max(counts) > 500:
        parser.error("--sessions takes counts from 1 to 500")
    if not (1 <= args.seconds <= 3600 and 0.1 <= args.interval <= 60 and args.timeout > 0):
        parser.error("--seconds takes 1..3600, --interval 0.1..60, --timeout more than 0")
    return Options(phases, args.scenario, args.seconds, args.interval, args.timeout)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil without floats
    return ordered[int(rank) - 1]


def start_offsets(count: int, interval: float) -> list[float]:
    """When each of `count` sessions acts within one interval: spread evenly, in order."""
    return [interval * i / count for i in range(count)]


def next_action(scenario: str, turn: int, on_stepper: bool, next_enabled: bool) -> str:
    """What a session does on its `turn`-th act: "page", "stepper", "next" or "seed".

    A Next click needs the Stepper on screen with Next enabled; otherwise the session opens
    the Stepper (or, at its last step, another page) instead.
    """
    if scenario == "pages":
        return "page"
    action = CYCLE[turn % len(CYCLE)]
    if action == "next" and not on_stepper:
        return "stepper"
    if action == "next" and not next_enabled:
        return "page"
    return action


def tree_cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these processes so far (from /proc), in seconds."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLK_TCK


@contextlib.contextmanager
def servers(replicas: int) -> Iterator[tuple[int, list[int]]]:
    """A fresh server (or N behind HAProxy) for one phase: (the port to open, app pids)."""
    if replicas == 0:
        from bench.local_server import LocalServer

        with LocalServer(launcher=True) as server:
            yield server.port, [server.pid]
    else:
        from deploy.replicas import Replicas

        with Replicas(replicas) as group:
            yield group.port, group.app_pids


async def act(session: Session, action: str, pages: list[str], rng: random.Random) -> RunResult:
    if action == "page":
        return await session.rerun(rng.choice(pages), query_string="")
    if action == "stepper":
        return await session.rerun("stepper", query_string="")
    if action == "next":
        moved = step_forward(session)
        if moved is None:
            raise ProtocolError("missing_widget", f"no next step on {session.current_page!r}")
        return await session.rerun(None, [moved])
    label, value = "Random seed", rng.randrange(10**6)
    widget = session.widgets.get(label)
    if widget is None:
        raise ProtocolError("missing_widget", f"{label!r} on {session.current_page!r}")
    return await session.rerun(None, [widget_state(widget, value)])


async def run_phase(port: int, pids: list[int], setup: Setup, options: Options) -> Phase:
    pages = [p.url_path for p in lab_pages() if p.url_path]  # every page but the Overview
    count = setup.sessions
    sessions = [Session(port, timeout=options.timeout) for _ in range(count)]
    errors: Counter[str] = Counter()
    first_errors: list[str] = []

    def failed(exc: ProtocolError) -> None:
        errors[exc.kind] += 1
        if len(first_errors) < 5:
            first_errors.append(str(exc))

    steady: list[float] = []

    async def first(session: Session, rng: random.Random, burst: float) -> float:
        await session.connect()
        await session.rerun(rng.choice(pages))
        return (time.perf_counter() - burst) * 1000  # a student waits for the connection too

    async def user(session: Session, rng: random.Random, begin: float, end: float) -> None:
        for turn in range(int(options.seconds / options.interval) + 1):
            due = begin + turn * options.interval
            if due >= end:
                return
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            action = next_action(
                options.scenario,
                turn,
                session.current_page == "stepper",
                step_forward(session) is not None,
            )
            try:
                if session.ws is None:
                    await session.connect()  # a broken connection: reconnect, as a browser does
                steady.append((await act(session, action, pages, rng)).latency_ms)
            except ProtocolError as exc:
                failed(exc)
                if exc.kind in ("timeout", "disconnect"):
                    await session.close()

    load_average = os.getloadavg()[0]
    cpu_before, driver_before, wall_before = (
        tree_cpu_seconds(pids),
        time.process_time(),
        time.perf_counter(),
    )
    rngs = [random.Random(i) for i in range(count)]
    burst = time.perf_counter()
    cold = await asyncio.gather(
        *(first(s, r, burst) for s, r in zip(sessions, rngs, strict=True)),
        return_exceptions=True,
    )
    for outcome in cold:
        if isinstance(outcome, ProtocolError):
            failed(outcome)
        elif isinstance(outcome, BaseException):  # a driver bug must not pass as a quiet run
            failed(ProtocolError(type(outcome).__name__, str(outcome)))
    begin = time.monotonic() + options.interval
    end = begin + options.seconds
    offsets = start_offsets(count, options.interval)
    await asyncio.gather(
        *(user(s, r, begin + o, end) for s, r, o in zip(sessions, rngs, offsets, strict=True))
    )
    cpu = tree_cpu_seconds(pids) - cpu_before
    driver_per_s = (time.process_time() - driver_before) / (time.perf_counter() - wall_before)
    await asyncio.gather(*(s.close() for s in sessions))
    opened = [c for c in cold if isinstance(c, float)]
    runs = len(opened) + len(steady)
    return Phase(
        sessions=count,
        replicas=setup.replicas,
        scenario=options.scenario,
        cold_slowest_ms=max(opened, default=float("nan")),
        p50_ms=statistics.median(steady) if steady else float("nan"),
        p95_ms=percentile(steady, 95) if steady else float("nan"),
        runs=runs,
        errors=sum(errors.values()),
        error_kinds=dict(errors),
        first_errors=first_errors,
        cpu_ms_per_run=1000 * cpu / max(1, runs),
        sessions_per_core=options.interval * runs / cpu if cpu > 0 else float("nan"),
        driver_cpu_per_s=driver_per_s,
        load_average=load_average,
    )


COLUMNS = [
    "processes", "sessions", "cold burst (all first pages)", "steady p50", "steady p95",
    "errors", "app CPU ms per run", "sessions a core carries", "driver CPU s/s", "load avg",
    "targets met",
]  # fmt: skip


def row(phase: Phase) -> list[str]:
    kinds = ", ".join(f"{k} {n}" for k, n in phase.error_kinds.items())
    return [
        f"{phase.replicas} + HAProxy" if phase.replicas else "1 (no balancer)",
        str(phase.sessions),
        f"{phase.cold_slowest_ms / 1000:.1f} s",
        f"{phase.p50_ms:.0f} ms",
        f"{phase.p95_ms:.0f} ms",
        f"{phase.errors}" + (f" ({kinds})" if kinds else ""),
        f"{phase.cpu_ms_per_run:.1f}",
        f"{phase.sessions_per_core:.0f}",
        f"{phase.driver_cpu_per_s:.2f}",
        f"{phase.load_average:.1f}",
        "yes" if phase.met else "**no**",
    ]


def markdown(columns: list[str], rows: list[list[str]]) -> str:
    lines = [columns, ["---"] * len(columns), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    options = parse_options(argv)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    phases = []
    for setup in options.phases:
        with servers(setup.replicas) as (port, pids):
            phase = asyncio.run(run_phase(port, pids, setup, options))
        phases.append(phase)
        print(" | ".join(row(phase)), *phase.first_errors, sep="\n  ", flush=True)
    command = " ".join(["python -m bench.bench_load", *argv])
    rows = [row(p) for p in phases]
    print(f"\n`{command}`, {started}, {usable_cores()} cores\n\n{markdown(COLUMNS, rows)}")
    kinds = sorted({phase.replicas for phase in phases})
    write_result(
        f"load_{options.scenario}_" + "_".join(str(r) if r else "direct" for r in kinds),
        f"5c. A class on the lab: {options.scenario}",
        order=5.3,
        text=(
            f"`{command}` ({started}): every session acts once every {options.interval:g} s. "
            "Load avg is the 1-minute load average as the phase's sessions start. App CPU per "
            "run is the app processes' CPU over the phase divided by the runs they served; "
            "driver CPU is the load driver's own, per second of the phase (it shares the cores). "
            f"Targets: steady p95 < {TARGET_P95_MS:.0f} ms, cold burst < "
            f"{TARGET_COLD_MS / 1000:.0f} s, 0 errors."
        ),
        tables=[table(COLUMNS, rows)],
        raw={"options": asdict(options), "phases": [asdict(p) for p in phases]},
    )
    return 1 if any(p.errors for p in phases) else 0


if __name__ == "__main__":
    raise SystemExit(main())
