"""A class on the lab: many sessions at once over Streamlit's websocket protocol.

    python -m bench.bench_load                                      # pages: 30, 60, 100 sessions
    python -m bench.bench_load --scenario interactions --sessions 100
    python -m bench.bench_load --replicas 2 --sessions 100,160      # behind HAProxy

Each phase starts fresh servers (`python -m ui.server.launch` as `./run.sh` does, or N of them
behind HAProxy with --replicas), then every session sends its first request at the same moment, on a
page of its own (a class opening the link together: "cold burst, slowest first page"). Then
each session acts once every --interval s for --seconds, the sessions spread evenly over one
interval: `pages` re-runs a random page; `interactions` cycles through the Stepper's Next button,
a new seed in the sidebar and a switch to a random page. Latency is from sending the rerun to
its script_finished. The pages are app.py's own (bench/lab_pages.py). Results go to
bench/results/load.json (BENCHMARKS.md); the exit status is 1 if a phase saw an error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.lab_pages import lab_pages
from bench.results import table, write_result
from bench.ws_client import ProtocolError, RunResult, Session, widget_state

CLK_TCK = os.sysconf("SC_CLK_TCK")
SCENARIOS = ("pages", "interactions")
# One session's cycle in the interactions scenario: two Next clicks, two seeds, two switches.
CYCLE = ("stepper", "next", "next", "seed", "page", "seed")


@dataclass(frozen=True)
class Options:
    sessions: tuple[int, ...]
    scenario: str
    seconds: float
    interval: float
    timeout: float
    replicas: int  # 0: one plain server, no balancer


@dataclass(frozen=True)
class Phase:
    """One phase's figures; latencies in ms."""

    sessions: int
    replicas: int
    scenario: str
    cold_slowest_ms: float
    p50_ms: float
    p95_ms: float
    runs: int
    errors: int
    error_kinds: dict[str, int]
    first_errors: list[str]
    cpu_ms_per_run: float


def parse_options(argv: list[str] | None = None) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="30,60,100", help="counts, one phase each")
    parser.add_argument("--scenario", choices=SCENARIOS, default="pages")
    parser.add_argument("--seconds", type=float, default=30.0, help="steady part of a phase")
    parser.add_argument("--interval", type=float, default=2.0, help="s between a session's acts")
    parser.add_argument("--timeout", type=float, default=30.0, help="a slower run is an error")
    parser.add_argument("--replicas", type=int, default=0, help="N processes behind HAProxy")
    args = parser.parse_args(argv)
    try:
        counts = tuple(int(part) for part in args.sessions.split(",") if part.strip())
    except ValueError:
        parser.error(f"--sessions takes comma-separated counts, not {args.sessions!r}")
    if not counts or min(counts) < 1 or max(counts) > 500:
        parser.error("--sessions takes counts from 1 to 500")
    if not (1 <= args.seconds <= 3600 and 0.1 <= args.interval <= 60 and args.timeout > 0):
        parser.error("--seconds takes 1..3600, --interval 0.1..60, --timeout more than 0")
    if not 0 <= args.replicas <= 16:
        parser.error("--replicas takes 0 (one plain server) to 16")
    return Options(counts, args.scenario, args.seconds, args.interval, args.timeout, args.replicas)


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
    label, value = ("Next", True) if action == "next" else ("Random seed", rng.randrange(10**6))
    widget = session.widgets.get(label)
    if widget is None:
        raise ProtocolError("missing_widget", f"{label!r} on {session.current_page!r}")
    return await session.rerun(None, [widget_state(widget, value)])


async def run_phase(port: int, pids: list[int], count: int, options: Options) -> Phase:
    pages = [p.url_path for p in lab_pages() if p.url_path]  # every page but the Overview
    sessions = [Session(port, timeout=options.timeout) for _ in range(count)]
    errors: Counter[str] = Counter()
    first_errors: list[str] = []

    def failed(exc: ProtocolError) -> None:
        errors[exc.kind] += 1
        if len(first_errors) < 5:
            first_errors.append(str(exc))

    steady: list[float] = []

    async def first(session: Session, rng: random.Random) -> float:
        await session.connect()
        return (await session.rerun(rng.choice(pages))).latency_ms

    async def user(session: Session, rng: random.Random, begin: float, end: float) -> None:
        for turn in range(int(options.seconds / options.interval) + 1):
            due = begin + turn * options.interval
            if due >= end:
                return
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            nxt = session.widgets.get("Next")
            action = next_action(
                options.scenario,
                turn,
                session.current_page == "stepper",
                nxt is not None and not nxt.proto.disabled,
            )
            try:
                if session.ws is None:
                    await session.connect()  # a broken connection: reconnect, as a browser does
                steady.append((await act(session, action, pages, rng)).latency_ms)
            except ProtocolError as exc:
                failed(exc)
                if exc.kind in ("timeout", "disconnect"):
                    await session.close()

    cpu_before = tree_cpu_seconds(pids)
    rngs = [random.Random(i) for i in range(count)]
    cold = await asyncio.gather(
        *(first(s, r) for s, r in zip(sessions, rngs, strict=True)), return_exceptions=True
    )
    for outcome in cold:
        if isinstance(outcome, ProtocolError):
            failed(outcome)
    begin = time.monotonic() + options.interval
    end = begin + options.seconds
    offsets = start_offsets(count, options.interval)
    await asyncio.gather(
        *(user(s, r, begin + o, end) for s, r, o in zip(sessions, rngs, offsets, strict=True))
    )
    cpu = tree_cpu_seconds(pids) - cpu_before
    await asyncio.gather(*(s.close() for s in sessions))
    opened = [c for c in cold if isinstance(c, float)]
    runs = len(opened) + len(steady)
    return Phase(
        sessions=count,
        replicas=options.replicas,
        scenario=options.scenario,
        cold_slowest_ms=max(opened, default=float("nan")),
        p50_ms=statistics.median(steady) if steady else float("nan"),
        p95_ms=percentile(steady, 95) if steady else float("nan"),
        runs=runs,
        errors=sum(errors.values()),
        error_kinds=dict(errors),
        first_errors=first_errors,
        cpu_ms_per_run=1000 * cpu / max(1, runs),
    )


COLUMNS = [
    "sessions", "replicas", "cold burst, slowest first page", "steady p50", "steady p95",
    "errors", "CPU ms per run",
]  # fmt: skip


def row(phase: Phase) -> list[str]:
    kinds = ", ".join(f"{k} {n}" for k, n in phase.error_kinds.items())
    return [
        str(phase.sessions),
        str(phase.replicas or "1 (no balancer)"),
        f"{phase.cold_slowest_ms / 1000:.1f} s",
        f"{phase.p50_ms:.0f} ms",
        f"{phase.p95_ms:.0f} ms",
        f"{phase.errors}" + (f" ({kinds})" if kinds else ""),
        f"{phase.cpu_ms_per_run:.1f}",
    ]


def main(argv: list[str] | None = None) -> int:
    options = parse_options(argv)
    phases = []
    for count in options.sessions:
        with servers(options.replicas) as (port, pids):
            phase = asyncio.run(run_phase(port, pids, count, options))
        phases.append(phase)
        print(" | ".join(row(phase)), *phase.first_errors, sep="\n  ", flush=True)
    where = f"{options.replicas} behind HAProxy" if options.replicas else "one process"
    write_result(
        f"load_{options.scenario}_{options.replicas or 'direct'}",
        f"5c. A class on the lab: {options.scenario}, {where}",
        order=5.3,
        text=(
            f"`python -m bench.bench_load --scenario {options.scenario} --sessions "
            f"{','.join(map(str, options.sessions))} --seconds {options.seconds:g}"
            + (f" --replicas {options.replicas}`" if options.replicas else "`")
            + f": every session acts once every {options.interval:g} s; load average at the "
            f"start {os.getloadavg()[0]:.1f}. CPU per run is the app processes' CPU over the "
            "phase divided by the runs they served."
        ),
        tables=[table(COLUMNS, [row(p) for p in phases])],
        raw={"options": asdict(options), "phases": [asdict(p) for p in phases]},
    )
    return 1 if any(p.errors for p in phases) else 0


if __name__ == "__main__":
    raise SystemExit(main())
