"""Server memory while a class visits every page at its largest input: under a ceiling.

    python -m bench.bench_server_memory                        # 100 visitors, 5 at a time
    python -m bench.bench_server_memory --visitors 20 --idle 0
    python -m bench.bench_server_memory --profile              # one visit per page, alone

Starts a fresh `streamlit run app.py` (bench/local_server.py) and sends visitors over
Streamlit's websocket protocol (bench/ws_client.py), `--at-once` of them at a time. Each visitor
opens every page in turn, each in a tab of its own from a link (a tab reads its link once):
that page's largest input (its cap in ui/server/caps.py; the sidebar's largest shape,
8 x 16 x 1024, on the pages without one), with its heaviest view (the Stepper at its last step,
the Jacobian with its three paths) and seed 1000 + visitor, so no two visitors share a cached
result; a page that refuses its input counts as an error. The figures are

- idle: the server's resident memory (RSS) after its first run;
- peak: the kernel's high-water mark of RSS (VmHWM), so a peak between two readings counts;
- steady: the median RSS read every 0.2 s while visitors come and go;
- left: RSS when the last visitor has left, and every 30 s of the `--idle` seconds after
  (the server gives memory back after a pause);
- next visitor: RSS a pause after one more tab (a closed tab's session stays until another
  tab connects).

The ceiling is CEILING_MB (ui/server/server_memory.py). The exit status is 1 on an error or a
peak above it. `--profile` instead visits each page once, alone, and reports how far it raised
the high-water mark and what it left resident. Results go to bench/results/ (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path
from urllib.parse import urlencode

from bench.bench_pages import largest
from bench.lab_pages import AppPage, lab_pages
from bench.local_server import LocalServer
from bench.results import table, write_result
from bench.ws_client import ProtocolError, Session
from ui.server.server_memory import CEILING_MB, PAUSE_S

LINK_KEYS = {"shape_kind": "shape", "n": "n", "d": "d", "b": "b", "l": "l"}
# Each page's heaviest view a link can ask for, beyond its largest input.
HEAVIEST = {"stepper": {"step": 20}, "jacobian": {"paths": 1}}
SAMPLE_S = 0.2


def link(page: str, seed: int) -> str:
    """The query string of a link to `page` at its largest input and heaviest view."""
    controls = {LINK_KEYS[k]: v for k, v in largest(page).items()}
    return urlencode(controls | HEAVIEST.get(page, {}) | {"seed": seed})


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    raise KeyError(field)


def peak_mb(server: LocalServer) -> float:
    """The server's RSS high-water mark (VmHWM) in MiB."""
    return _status_mb(server.pid, "VmHWM")


def reset_peak(server: LocalServer) -> None:
    """Start the high-water mark again from the current RSS (Linux: clear_refs 5)."""
    Path(f"/proc/{server.pid}/clear_refs").write_text("5")


async def visit(port: int, page: AppPage, query: str) -> str | None:
    """Open `page` from its link in a tab of its own (a link is read once per tab), read the
    run to its end and leave: an error, or None."""
    try:
        async with Session(port, timeout=300.0) as session:
            result = await session.rerun(page.url_path, query_string=query)
    except ProtocolError as error:
        return f"/{page.url_path}: {error}"
    if result.page != page.url_path:
        return f"/{page.url_path} showed /{result.page}"
    refused = [alert for alert in result.alerts if "D up to" in alert]  # caps.refusal
    return f"/{page.url_path} refused its input: {refused[0]}" if refused else None


async def visitor(port: int, k: int, pages: list[AppPage]) -> list[str]:
    """Visitor k: every page in turn, each at its largest input from its link."""
    errors = [await visit(port, page, link(page.name, 1000 + k)) for page in pages]
    return [e for e in errors if e]


async def sample(server: LocalServer, into: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        into.append(server.rss_mb())
        await asyncio.sleep(SAMPLE_S)


async def run(server: LocalServer, visitors: int, at_once: int, idle_s: int) -> dict:
    pages = lab_pages()
    errors = [e for e in [await visit(server.port, pages[0], "")] if e]
    idle = server.rss_mb()
    reset_peak(server)
    started = time.monotonic()
    readings: list[float] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample(server, readings, stop))
    gate = asyncio.Semaphore(at_once)

    async def one(k: int) -> list[str]:
        async with gate:
            return await visitor(server.port, k, pages)

    for found in await asyncio.gather(*(one(k) for k in range(visitors))):
        errors += found
    stop.set()
    await sampler
    seconds = time.monotonic() - started
    left = server.rss_mb()
    idle_readings = []
    for waited in range(0, idle_s + 1, 30):
        await asyncio.sleep(30 if waited else 0)
        idle_readings.append([waited, round(server.rss_mb(), 1)])
    # The next class's first tab: Streamlit then drops the sessions that left over 2 minutes
    # ago, and a pause later the server gives their memory back.
    errors += [e for e in [await visit(server.port, pages[0], "")] if e]
    await asyncio.sleep(PAUSE_S + 5)
    return {
        "visitors": visitors,
        "at_once": at_once,
        "pages": [p.name for p in pages],
        "page_runs": visitors * len(pages),
        "seconds": round(seconds, 1),
        "idle_mb": round(idle, 1),
        "peak_mb": round(peak_mb(server), 1),
        "steady_mb": round(statistics.median(readings), 1),
        "highest_reading_mb": round(max(readings), 1),
        "left_mb": round(left, 1),
        "after_idle_mb": idle_readings,
        "next_visitor_mb": round(server.rss_mb(), 1),
        "ceiling_mb": CEILING_MB,
        "errors": errors,
    }


async def profile(server: LocalServer) -> dict:
    """Each page once, alone, in a tab of its own: how far it raised the peak, what it left."""
    pages = lab_pages()
    await visit(server.port, pages[0], "")
    rows = []
    for k, page in enumerate(pages):
        before = server.rss_mb()
        reset_peak(server)
        error = await visit(server.port, page, link(page.name, 1000 + k))
        rows.append(
            {
                "page": page.name,
                "link": link(page.name, 1000 + k),
                "before_mb": round(before, 1),
                "peak_above_mb": round(peak_mb(server) - before, 1),
                "left_above_mb": round(server.rss_mb() - before, 1),
                "error": error,
            }
        )
    return {"pages": rows}


def report(raw: dict) -> None:
    idle_s, idle_mb = raw["after_idle_mb"][-1]
    text = (
        f"`nice -n 10 python -m bench.bench_server_memory --visitors {raw['visitors']} "
        f"--at-once {raw['at_once']} --idle {idle_s}`: {raw['visitors']} visitors, "
        f"{raw['at_once']} at a time, each opening all {len(raw['pages'])} pages at their "
        f"largest input ({raw['page_runs']:,} page runs, {raw['seconds']} s). Idle server "
        f"{raw['idle_mb']} MB; peak (VmHWM) {raw['peak_mb']} MB against a ceiling of "
        f"{raw['ceiling_mb']} MB; steady (median RSS while visiting) {raw['steady_mb']} MB; "
        f"{raw['left_mb']} MB when the last visitor left and {idle_mb} MB after {idle_s} s with "
        f"nobody there; {raw['next_visitor_mb']} MB a pause after one more tab opened the "
        f"Overview (it lets Streamlit drop the sessions that left). Errors: {len(raw['errors'])}."
    )
    rows = [
        ["idle server", raw["idle_mb"]],
        ["peak (VmHWM)", raw["peak_mb"]],
        ["steady (median while visiting)", raw["steady_mb"]],
        ["last visitor left", raw["left_mb"]],
        *[[f"idle {s} s later", mb] for s, mb in raw["after_idle_mb"][1:]],
        [f"one more tab, {PAUSE_S + 5:.0f} s later", raw["next_visitor_mb"]],
    ]
    write_result(
        "server_memory",
        "5d. Server memory: a class of visitors at each page's largest input",
        5.4,
        text,
        [table(["moment", "server RSS (MB)"], rows)],
        raw,
    )


def report_profile(raw: dict) -> None:
    rows = [
        [r["page"], r["link"], r["peak_above_mb"], r["left_above_mb"], r["error"] or ""]
        for r in raw["pages"]
    ]
    write_result(
        "server_memory_pages",
        "5e. Server memory: each page alone at its largest input",
        5.45,
        "`nice -n 10 python -m bench.bench_server_memory --profile`: each page opened once, "
        "alone, in a tab of its own from its link; how far its run raised the server's "
        "high-water mark of RSS (VmHWM) above the RSS before it, and what it left resident.",
        [table(["page", "link", "peak above (MB)", "left (MB)", "error"], rows)],
        raw,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--visitors", type=int, default=100)
    parser.add_argument("--at-once", type=int, default=5, help="visitors at the same time")
    parser.add_argument("--idle", type=int, default=180, help="seconds to wait after them")
    parser.add_argument("--profile", action="store_true", help="each page once, alone")
    options = parser.parse_args()
    with LocalServer() as server:
        if options.profile:
            report_profile(asyncio.run(profile(server)))
            return
        raw = asyncio.run(run(server, options.visitors, options.at_once, options.idle))
    print(raw)
    report(raw)
    if raw["errors"] or raw["peak_mb"] > CEILING_MB:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
