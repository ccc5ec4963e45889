"""Load test: many concurrent sessions against one local LayerNorm Lab server.

Starts its own `streamlit run app.py` on 127.0.0.1 and a free port, then speaks Streamlit's own
websocket protocol (/_stcore/stream, BackMsg / ForwardMsg protobufs) the way the browser does:
each simulated session sends a `rerun_script` BackMsg and waits for the ForwardMsg
`script_finished`. One interaction = one rerun that changes something: navigate to the Stepper,
click its Next button (or move its slider back to 1 at the last step), navigate to the Jacobian,
and round again, one interaction every --interval seconds per session.

For each session count in --sessions (default 1 and 30) it reports interaction latency
(send -> script_finished) p50 / p95 / max, errors (Exception elements, compile errors, a page not
found, a needed widget missing, an interaction without effect, disconnects, no script_finished
within --timeout s) and the server's peak RSS (its process and any children, sampled every second
from /proc) and CPU. Before the phases, one session visits every page a few times and every
stepper step once: that warms the server up and gives the cost of each page.

Not part of CI: run it by hand, `.venv/bin/python -m bench.bench_load --seconds 60`.
It only ever talks to 127.0.0.1, every loop is bounded, and it stops the server it started.
Writes bench/results/load.json and prints a markdown table. See bench/LOAD.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
HOST = "127.0.0.1"  # loopback only, always
PAGES = ["", "inputs", "stepper", "jacobian", "gradcheck", "audit", "residual", "batchnorm"]
N_STEPS = 20  # ui.steps.N_STEPS; read from the app when importable (see _n_steps)
TARGET_P95_MS = 500.0
TARGET_RSS_MB = 500.0
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- server process


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def start_server(port: int, log_path: Path, extra: list[str]) -> subprocess.Popen:
    cmd = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless=true",
        f"--server.port={port}",
        f"--server.address={HOST}",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
        *extra,
    ]  # fmt: skip
    # Own process group, so stop_server can end the server and anything it started, by id.
    with log_path.open("w") as log:
        return subprocess.Popen(
            cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def wait_healthy(port: int, proc: subprocess.Popen, limit_s: float = 90.0) -> float:
    """Seconds until /_stcore/health answers ok; raises if the server dies or never answers."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        if proc.poll() is not None:
            raise RuntimeError(
                f"streamlit exited with code {proc.returncode} before it was healthy"
            )
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200 and r.read().strip() == b"ok":
                    return time.monotonic() - start
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"server not healthy after {limit_s:.0f} s")


def http_get(port: int, path: str) -> int:
    with urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=10) as r:
        r.read()
        return r.status


def _descendants(pid: int) -> list[int]:
    """pid and every process below it, from /proc/*/stat parent ids."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(parents.get(current, []))
    return found


def tree_rss_bytes(pid: int) -> int:
    total = 0
    for p in _descendants(pid):
        try:
            fields = Path(f"/proc/{p}/statm").read_text().split()
        except OSError:
            continue
        total += int(fields[1]) * PAGE_SIZE
    return total


def tree_cpu_seconds(pid: int) -> float:
    total = 0
    for p in _descendants(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLK_TCK


class RssSampler:
    """Samples the server tree's RSS every `period` seconds while running (bounded by `limit_s`)."""

    def __init__(self, pid: int, period: float = 1.0, limit_s: float = 3600.0) -> None:
        self.pid, self.period, self.limit_s = pid, period, limit_s
        self.samples: list[tuple[float, int]] = []
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        start = time.monotonic()
        while time.monotonic() - start < self.limit_s:
            self.samples.append((time.monotonic() - start, tree_rss_bytes(self.pid)))
            await asyncio.sleep(self.period)

    def __enter__(self) -> RssSampler:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        self.samples.append(
            (self.samples[-1][0] if self.samples else 0.0, tree_rss_bytes(self.pid))
        )

    @property
    def peak_mb(self) -> float:
        return max(b for _, b in self.samples) / 2**20 if self.samples else float("nan")


# --------------------------------------------------------------------------- protocol client


# Errors raised after the run's script_finished arrived: the session can go on as it is.
IN_STEP_ERRORS = ("exception", "page_not_found", "compile_error", "missing_widget", "no_effect")


class ProtocolError(Exception):
    """Something a user would see as broken: the `kind` is the error's category."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


@dataclass
class RunResult:
    latency_ms: float
    messages: int
    nbytes: int
    widgets: dict[str, Any]  # widget label -> (element type, proto of the element)
    pages: dict[str, str]  # url path -> page script hash, from the navigation message


@dataclass
class Session:
    """One simulated browser tab: one websocket, one Streamlit session."""

    index: int
    port: int
    timeout: float
    ws: Any = None
    pages: dict[str, str] = field(default_factory=dict)
    current_page: str = ""
    widgets: dict[str, Any] = field(default_factory=dict)
    connects: int = 0

    async def connect(self) -> None:
        await self.close()
        self.connects += 1
        self.ws = await asyncio.wait_for(
            websockets.connect(
                f"ws://{HOST}:{self.port}/_stcore/stream",
                subprotocols=["streamlit"],  # what the browser sends (plus optional tokens)
                max_size=None,
                open_timeout=self.timeout,
                close_timeout=2,
            ),
            self.timeout,
        )

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 5)
            self.ws = None

    async def rerun(self, page: str, widget_states: list[WidgetState] = ()) -> RunResult:
        """Send one rerun_script BackMsg and read ForwardMsgs until the run has finished."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = ""
        if page in self.pages:
            state.page_script_hash = self.pages[page]
        else:
            state.page_name = page
        state.widget_states.widgets.extend(widget_states)
        state.context_info.timezone = "UTC"
        state.context_info.url = f"http://{HOST}:{self.port}/{page}"

        started = time.perf_counter()
        deadline = started + self.timeout
        await self.ws.send(msg.SerializeToString())
        widgets: dict[str, Any] = {}
        pages: dict[str, str] = {}
        # Raised only once the run has finished, so the stream stays in step with the runs.
        problems: list[ProtocolError] = []
        count = nbytes = 0
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise ProtocolError("timeout", f"no script_finished within {self.timeout:g} s")
            try:
                raw = await asyncio.wait_for(self.ws.recv(), remaining)
            except asyncio.TimeoutError:
                raise ProtocolError(
                    "timeout", f"no script_finished within {self.timeout:g} s"
                ) from None
            except websockets.ConnectionClosed as exc:
                raise ProtocolError("disconnect", f"websocket closed: {exc}") from None
            count += 1
            nbytes += len(raw)
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            kind = fwd.WhichOneof("type")
            if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element_type = fwd.delta.new_element.WhichOneof("type")
                element = getattr(fwd.delta.new_element, element_type)
                if element_type == "exception":
                    problems.append(
                        ProtocolError("exception", f"{element.type}: {element.message}"[:300])
                    )
                if getattr(element, "id", "") and getattr(element, "label", ""):
                    widgets[element.label] = (element_type, element)
            elif kind == "navigation":
                pages = {p.url_pathname: p.page_script_hash for p in fwd.navigation.app_pages}
            elif kind == "page_not_found":
                problems.append(ProtocolError("page_not_found", repr(page)))
            elif kind == "script_finished":
                status = fwd.script_finished
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise ProtocolError("compile_error", f"page {page!r}")
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # a callback asked for another run: the user waits for that one
                latency_ms = (time.perf_counter() - started) * 1000
                if pages:
                    self.pages = pages
                self.current_page, self.widgets = page, widgets
                if problems:
                    raise problems[0]
                return RunResult(latency_ms, count, nbytes, widgets, pages)


def shown_step(session: Session) -> int:
    """The step the Stepper's slider shows after the last run."""
    slider = session.widgets.get("Step")
    if slider is None or not slider[1].value:
        raise ProtocolError("missing_widget", "the Stepper shows no Step slider")
    return int(slider[1].value[0])


def stepper_action(session: Session) -> tuple[str, list[WidgetState], int]:
    """Click Next on the Stepper; at the last step (Next disabled), drag the slider back to 1.

    Returns the interaction's label, the widget states to send and the step it should show.
    """
    step_now = shown_step(session)
    nxt = session.widgets.get("Next")
    if nxt is not None and not nxt[1].disabled:
        return "stepper: click Next", [WidgetState(id=nxt[1].id, trigger_value=True)], step_now + 1
    state = WidgetState(id=session.widgets["Step"][1].id)
    state.double_array_value.data.append(1.0)
    return "stepper: slider to 1", [state], 1


def check_step(session: Session, expected: int) -> None:
    shown = shown_step(session)
    if shown != expected:
        raise ProtocolError("no_effect", f"the Stepper shows step {shown}, not {expected}")


async def interaction(session: Session, k: int) -> tuple[str, RunResult]:
    """The k-th interaction of a session: Stepper, Next (or slider), Jacobian, and round again."""
    phase = k % 3
    if phase == 0:
        return "open Stepper", await session.rerun("stepper")
    if phase == 1:
        if session.current_page != "stepper":  # after a reconnect: go there first, untimed
            await session.rerun("stepper")
        label, states, expected = stepper_action(session)
        result = await session.rerun("stepper", states)
        check_step(session, expected)
        return label, result
    return "open Jacobian", await session.rerun("jacobian")


async def set_seed(session: Session, seed: int) -> None:
    """Type a seed of its own into the sidebar, so this session misses the shared caches."""
    widget = session.widgets.get("Random seed")
    if widget is None:
        raise ProtocolError("missing_widget", "no Random seed input in the sidebar")
    typed = WidgetState(id=widget[1].id, string_value=str(seed))
    await session.rerun(session.current_page, [typed])
    shown = session.widgets.get("Random seed")
    if shown is None or shown[1].value != str(seed):
        raise ProtocolError("no_effect", f"the seed input does not show {seed}")


# --------------------------------------------------------------------------- measurements


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); nan for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def summary(values: list[float]) -> dict[str, float | None]:
    """Count, p50, p95, max and mean in ms; None for each when there are no values."""
    if not values:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "max_ms": None, "mean_ms": None}
    return {
        "n": len(values),
        "p50_ms": round(pct(values, 50), 1),
        "p95_ms": round(pct(values, 95), 1),
        "max_ms": round(max(values), 1),
        "mean_ms": round(statistics.fmean(values), 1),
    }


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


PROFILE_PAUSE_S = 0.3  # a run sent the moment the last one finished waits for its cleanup


async def profile_pages(port: int, rounds: int, timeout: float) -> dict[str, Any]:
    """One session, alone: every page `rounds` times, then every stepper step once."""
    session = Session(-1, port, timeout)
    await session.connect()

    async def rerun(page: str, states: list[WidgetState] = ()) -> RunResult:
        await asyncio.sleep(PROFILE_PAUSE_S)
        return await session.rerun(page, states)

    try:
        per_page: dict[str, list[float]] = {page: [] for page in PAGES}
        sizes: dict[str, int] = {}
        for _ in range(rounds):
            for page in PAGES:
                result = await rerun(page)
                per_page[page].append(result.latency_ms)
                sizes[page] = result.nbytes
        pages = {
            (page or "home"): {
                "first_ms": round(times[0], 1),
                "median_after_first_ms": round(statistics.median(times[1:] or times), 1),
                "forward_msg_kb": round(sizes[page] / 1024, 1),
            }
            for page, times in per_page.items()
        }
        # Every stepper step: move the slider to it (the first visit of a step computes its
        # numerical checks), then rerun the same step (now served from st.cache_data).
        await session.rerun("stepper")
        steps = {}
        for number in range(1, N_STEPS + 1):
            state = WidgetState(id=session.widgets["Step"][1].id)
            state.double_array_value.data.append(float(number))
            first = (await rerun("stepper", [state])).latency_ms
            check_step(session, number)
            again = (await rerun("stepper")).latency_ms
            steps[number] = {"first_ms": round(first, 1), "again_ms": round(again, 1)}
        return {"pages": pages, "stepper_steps": steps}
    finally:
        await session.close()


async def run_phase(
    port: int,
    pid: int,
    n: int,
    seconds: float,
    interval: float,
    timeout: float,
    distinct_seeds: bool,
) -> dict[str, Any]:
    """n sessions at once, each interacting every `interval` s for `seconds` s."""
    latencies: list[float] = []
    by_kind: dict[str, list[float]] = {}
    loads: list[float] = []
    errors: list[dict[str, Any]] = []
    lags: list[float] = []
    counts = {"scheduled": 0, "time_up": 0, "interactions": 0, "messages": 0, "bytes": 0}
    rss_idle = tree_rss_bytes(pid) / 2**20
    cpu_before = tree_cpu_seconds(pid)
    own_before = time.process_time()

    def error(session: Session, kind: str, detail: str, what: str) -> None:
        errors.append(
            {"session": session.index, "kind": kind, "detail": detail, "during": what,
             "t_s": round(time.monotonic() - t0, 2)}
        )  # fmt: skip

    async def open_session(session: Session) -> bool:
        try:
            await session.connect()
            result = await session.rerun("")
            loads.append(result.latency_ms)
            if distinct_seeds:
                await set_seed(session, 1000 + session.index)
            return True
        except (ProtocolError, OSError, asyncio.TimeoutError, websockets.WebSocketException) as exc:
            error(session, getattr(exc, "kind", "connect"), str(exc), "open")
            await session.close()
            return False

    async def user(session: Session, start_at: float, end_at: float, ok: bool) -> None:
        for k in range(int(seconds / interval) + 2):  # bounded in count as well as in time
            due = start_at + k * interval
            if due >= end_at:
                break
            counts["scheduled"] += 1
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            if time.monotonic() >= end_at:  # so far behind that time is up: not sent
                counts["time_up"] += 1
                continue
            lags.append(max(0.0, time.monotonic() - due) * 1000)
            if not ok:  # the last interaction broke the connection: reconnect, as a browser does
                ok = await open_session(session)
                if not ok:
                    continue
            what = f"interaction {k}"
            try:
                label, result = await interaction(session, k)
            except (ProtocolError, OSError, websockets.WebSocketException) as exc:
                kind = getattr(exc, "kind", type(exc).__name__)
                error(session, kind, str(exc), what)
                counts["interactions"] += 1
                # A timeout or a disconnect leaves the stream out of step: reconnect next time.
                ok = kind in IN_STEP_ERRORS
                if not ok:
                    await session.close()
                continue
            counts["interactions"] += 1
            counts["messages"] += result.messages
            counts["bytes"] += result.nbytes
            latencies.append(result.latency_ms)
            by_kind.setdefault(label, []).append(result.latency_ms)

    sessions = [Session(i, port, timeout) for i in range(n)]
    t0 = time.monotonic()
    with RssSampler(pid) as sampler:
        # Everyone opens the app at the same moment (the worst case), then the timed part.
        opened = await asyncio.wait_for(
            asyncio.gather(*(open_session(s) for s in sessions)), timeout * 4 + 30
        )
        load_s = time.monotonic() - t0
        begin = time.monotonic() + 0.5
        end = begin + seconds
        users = [user(s, begin + i * interval / n, end, opened[i]) for i, s in enumerate(sessions)]
        # Hard bound: the last interaction starts before `end` and ends within `timeout`.
        await asyncio.wait_for(asyncio.gather(*users), seconds + 2 * interval + 2 * timeout + 30)
        elapsed = time.monotonic() - begin
        await asyncio.gather(*(s.close() for s in sessions))
        await asyncio.sleep(1.0)
    cpu_s = tree_cpu_seconds(pid) - cpu_before
    total_s = time.monotonic() - t0
    stats = summary(latencies)
    return {
        "sessions": n,
        "seconds": seconds,
        "interval_s": interval,
        "distinct_seeds": distinct_seeds,
        "interactions": counts["interactions"],
        "scheduled": counts["scheduled"],
        "not_sent_time_up": counts["time_up"],
        "offered_per_s": round(n / interval, 2),
        "interactions_per_s": round(counts["interactions"] / max(elapsed, seconds), 2),
        "errors": len(errors),
        "error_list": errors[:50],
        "latency": stats,
        "latency_by_interaction": {k: summary(v) for k, v in sorted(by_kind.items())},
        "open_app": {**summary(loads), "all_sessions_open_s": round(load_s, 2)},
        "schedule_lag_ms": {
            "p50": round(pct(lags, 50), 1) if lags else None,
            "max": round(max(lags), 1) if lags else 0,
        },
        "forward_msgs": counts["messages"],
        "forward_mb": round(counts["bytes"] / 2**20, 2),
        "reconnects": sum(max(0, s.connects - 1) for s in sessions),
        "server_rss_mb": {
            "before": round(rss_idle, 1),
            "peak": round(sampler.peak_mb, 1),
            "after": round(sampler.samples[-1][1] / 2**20, 1),
            "samples": len(sampler.samples),
        },
        "server_cpu_percent_of_one_core": round(100 * cpu_s / total_s, 1),
        # Script runs hold the GIL, so about 1000 / this many runs a second is the ceiling.
        "server_cpu_ms_per_run": round(
            1000
            * cpu_s
            / max(1, counts["interactions"] + len(loads) * (2 if distinct_seeds else 1)),
            1,
        ),
        "load_generator_cpu_percent": round(100 * (time.process_time() - own_before) / total_s, 1),
        "targets_met": bool(
            not errors
            and stats["p95_ms"] is not None
            and stats["p95_ms"] < TARGET_P95_MS
            and sampler.peak_mb < TARGET_RSS_MB
        ),
    }


# --------------------------------------------------------------------------- report


COLUMNS = [
    "sessions", "interactions", "errors", "p50 ms", "p95 ms", "max ms",
    "server peak RSS MB", "targets met",
]  # fmt: skip


def row(phase: dict[str, Any]) -> list[str]:
    lat = phase["latency"]
    return [
        str(phase["sessions"]),
        str(phase["interactions"]),
        str(phase["errors"]),
        ms(lat["p50_ms"]),
        ms(lat["p95_ms"]),
        ms(lat["max_ms"]),
        f"{phase['server_rss_mb']['peak']:.0f}",
        "yes" if phase["targets_met"] else "no",
    ]


def note(phase: dict[str, Any]) -> str:
    return (
        f"{phase['sessions']} session(s): offered {phase['offered_per_s']:g} interactions/s, "
        f"done {phase['interactions_per_s']:g}/s, {phase['not_sent_time_up']} not sent (time up); "
        f"opening the app: p95 {ms(phase['open_app']['p95_ms'])} ms; server CPU "
        f"{phase['server_cpu_percent_of_one_core']:.0f}% of one core, "
        f"{phase['server_cpu_ms_per_run']:.0f} ms per run; RSS "
        f"{phase['server_rss_mb']['before']:.0f} MB before"
    )


def markdown(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _n_steps() -> int:
    sys.path.insert(0, str(ROOT))
    try:
        from ui.steps import N_STEPS as n  # the app's own count, if importable

        return int(n)
    except Exception:
        return N_STEPS
    finally:
        sys.path.remove(str(ROOT))


def _git_commit() -> str:
    try:  # read-only
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
            timeout=10,
        )  # fmt: skip
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


async def run_all(args: argparse.Namespace, port: int, pid: int) -> dict[str, Any]:
    profile = None
    if args.profile_rounds > 0:
        print(f"profiling every page ({args.profile_rounds} rounds) and every stepper step ...")
        profile = await asyncio.wait_for(
            profile_pages(port, args.profile_rounds, args.timeout), 600
        )
    phases = []
    for n in args.sessions:
        print(f"phase: {n} session(s), one interaction every {args.interval:g} s for "
              f"{args.seconds:g} s ...", flush=True)  # fmt: skip
        phase = await run_phase(
            port, pid, n, args.seconds, args.interval, args.timeout, args.distinct_seeds
        )
        phases.append(phase)
        print("  " + " | ".join(row(phase)), flush=True)
        print("  " + note(phase), flush=True)
        await asyncio.sleep(2)
    return {"profile": profile, "phases": phases}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each phase")
    parser.add_argument(
        "--sessions", default="1,30", help="comma-separated session counts, one phase each"
    )
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between interactions")
    parser.add_argument("--timeout", type=float, default=10.0, help="a run slower than this fails")
    parser.add_argument(
        "--distinct-seeds", action="store_true",
        help="each session types its own random seed first, so it misses the shared st.cache_data",
    )  # fmt: skip
    parser.add_argument(
        "--profile-rounds", type=int, default=3, help="visits of each page alone first (0: skip)"
    )
    parser.add_argument(
        "--server-arg", action="append", default=[], metavar="--SECTION.OPTION=VALUE",
        help="extra `streamlit run` option, e.g. --server-arg=--runner.postScriptGC=false "
        "(repeatable; the address and port stay the test's own)",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "load.json")
    args = parser.parse_args(argv)
    for extra in args.server_arg:
        if not extra.startswith("--") or extra.split("=")[0] in (
            "--server.address",
            "--server.port",
        ):
            parser.error(f"--server-arg {extra!r}: give --section.option=value, not address/port")
    load_at_start = os.getloadavg()
    args.sessions = [int(x) for x in str(args.sessions).split(",") if x.strip()]
    if not args.sessions or min(args.sessions) < 1 or max(args.sessions) > 200:
        parser.error("--sessions takes counts from 1 to 200")
    if not 1 <= args.seconds <= 3600 or not 0.1 <= args.interval <= 60:
        parser.error("--seconds must be 1..3600 and --interval 0.1..60")
    global N_STEPS
    N_STEPS = _n_steps()

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    log_path = args.out.with_name(args.out.stem + "_server.log")
    proc = start_server(port, log_path, args.server_arg)
    try:
        ready_s = wait_healthy(port, proc)
        print(
            f"server pid {proc.pid} on {HOST}:{port}, healthy after {ready_s:.1f} s; log {log_path}"
        )
        http_get(port, "/")  # warm-up: the page shell, as a browser's first request
        rss_start = tree_rss_bytes(proc.pid) / 2**20
        results = asyncio.run(run_all(args, port, proc.pid))
        if proc.poll() is not None:
            raise RuntimeError(f"the server died during the test (exit {proc.returncode})")
    finally:
        stop_server(proc)

    phases = results["phases"]
    rows = [row(p) for p in phases]
    by_kind_rows = [
        [str(p["sessions"]), kind, str(s["n"]), ms(s["p50_ms"]), ms(s["p95_ms"]),
         ms(s["max_ms"])]
        for p in phases for kind, s in p["latency_by_interaction"].items()
    ]  # fmt: skip
    by_kind_columns = ["sessions", "interaction", "n", "p50 ms", "p95 ms", "max ms"]
    tables = [
        {"columns": COLUMNS, "rows": rows},
        {"columns": by_kind_columns, "rows": by_kind_rows},
    ]
    page_rows = []
    if results["profile"]:
        page_rows = [
            [page, f"{v['first_ms']:.0f}", f"{v['median_after_first_ms']:.0f}",
             f"{v['forward_msg_kb']:.0f}"]
            for page, v in results["profile"]["pages"].items()
        ]  # fmt: skip
        tables.append(
            {"columns": ["page (alone)", "first run ms", "median ms", "ForwardMsgs KB"],
             "rows": page_rows}
        )  # fmt: skip
    text = (
        f"{', '.join(str(n) for n in args.sessions)} concurrent sessions on one local server, "
        f"each interacting every {args.interval:g} s for {args.seconds:g} s over Streamlit's "
        f"websocket protocol (Stepper, Next, Jacobian, ...). Latency: rerun sent to "
        f"script_finished. Targets: 0 errors, p95 < {TARGET_P95_MS:.0f} ms, "
        f"RSS < {TARGET_RSS_MB:.0f} MB."
        + (f" Server options: {' '.join(args.server_arg)}." if args.server_arg else "")
    )
    payload = {
        "name": "load",
        "title": "5b. Server: latency and memory with 1 and 30 sessions",
        "order": 5.5,
        "text": text,
        "tables": tables,
        "raw": {
            "meta": {
                "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "commit": _git_commit(),
                "python": platform.python_version(),
                "streamlit": _version("streamlit"),
                "websockets": websockets.__version__,
                "cpus": os.cpu_count(),
                "load_average_at_start": load_at_start,
                "load_average_at_end": os.getloadavg(),
                "server_rss_mb_at_start": round(rss_start, 1),
                "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                "targets": {"errors": 0, "p95_ms": TARGET_P95_MS, "rss_mb": TARGET_RSS_MB},
            },
            **results,
        },
        "load_average": os.getloadavg(),
    }
    args.out.write_text(json.dumps(payload, indent=2) + "\n")

    print()
    print(markdown(COLUMNS, rows))
    print()
    for phase in phases:
        print("- " + note(phase))
    print()
    print(markdown(by_kind_columns, by_kind_rows))
    if page_rows:
        print()
        print(markdown(tables[2]["columns"], page_rows))
        steps = results["profile"]["stepper_steps"]
        slowest = max(steps, key=lambda k: steps[k]["first_ms"])
        firsts = [v["first_ms"] for v in steps.values()]
        print(
            f"\nstepper steps alone: median {statistics.median(firsts):.0f} ms on the first visit, "
            f"slowest step {slowest} ({steps[slowest]['first_ms']:.0f} ms)"
        )
    print(f"\nwrote {args.out}")
    return 0 if all(p["targets_met"] for p in phases) else 1


def _version(dist: str) -> str:
    from importlib.metadata import version

    try:
        return version(dist)
    except Exception:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
