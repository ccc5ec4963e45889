"""Server memory under a stream of visitors with distinct inputs: it must stay under a ceiling.

    python -m bench.bench_server_memory                  # 100 visitors, 10 at a time
    python -m bench.bench_server_memory --visitors 40

Starts a fresh `streamlit run app.py` (bench/local_server.py), visits the Overview once, then
sends visitors in waves over Streamlit's websocket protocol (bench/ws_client.py). Visitor k opens
page k mod 9 from a link of its own: that page's largest input (its cap in ui/server/caps.py; the
sidebar's largest shape, 8 x 16 x 1024, on the Overview) and seed 1000 + k, so no two visitors
share a cached result. The server's resident memory (RSS) is read after every wave; the
figures are the idle RSS, the peak, and the RSS once every visitor has left.

The ceiling is CEILING_MB (ui/server/server_memory.py): the idle server, the cache budget
(ui/server/compute.py), the shared figures, and the sessions a class keeps open. The exit status
is 1 if the peak passes it. Results go to bench/results/server_memory.json (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from urllib.parse import urlencode

from bench.bench_pages import largest
from bench.lab_pages import lab_pages
from bench.local_server import LocalServer
from bench.results import table, write_result
from bench.ws_client import ProtocolError, Session
from ui.server.server_memory import CEILING_MB

LINK_KEYS = {"shape_kind": "shape", "n": "n", "d": "d", "b": "b", "l": "l"}


def link(page: str, seed: int) -> str:
    """The query string of a link to `page` at its largest input, with this seed."""
    controls = largest(page)
    return urlencode({LINK_KEYS[k]: v for k, v in controls.items()} | {"seed": seed})


async def visit(port: int, url_path: str, query: str) -> str | None:
    """One visitor: open the page from its link, read the run to its end, leave. An error's
    description, or None."""
    try:
        async with Session(port, timeout=300.0) as session:
            result = await session.rerun(url_path, query_string=query)
            if result.page != url_path:
                return f"/{url_path} showed /{result.page}"
    except ProtocolError as error:
        return f"/{url_path}: {error}"
    return None


async def run(server: LocalServer, visitors: int, wave: int) -> dict:
    pages = lab_pages()
    errors = [e for e in [await visit(server.port, "", "")] if e]
    idle = server.rss_mb()
    started = time.monotonic()
    after_wave = []
    for first in range(0, visitors, wave):
        tasks = []
        for k in range(first, min(first + wave, visitors)):
            page = pages[k % len(pages)]
            tasks.append(visit(server.port, page.url_path, link(page.name, 1000 + k)))
        errors += [e for e in await asyncio.gather(*tasks) if e]
        after_wave.append(round(server.rss_mb(), 1))
    return {
        "visitors": visitors,
        "wave": wave,
        "seconds": round(time.monotonic() - started, 1),
        "idle_mb": round(idle, 1),
        "after_wave_mb": after_wave,
        "peak_mb": max(after_wave),
        "final_mb": after_wave[-1],
        "ceiling_mb": CEILING_MB,
        "errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--visitors", type=int, default=100)
    parser.add_argument("--wave", type=int, default=10, help="visitors at the same time")
    options = parser.parse_args()
    with LocalServer() as server:
        raw = asyncio.run(run(server, options.visitors, options.wave))
    print(raw)
    rows = [[f"after {min((i + 1) * raw['wave'], raw['visitors'])}", mb]
            for i, mb in enumerate(raw["after_wave_mb"])]  # fmt: skip
    write_result(
        "server_memory",
        "5d. Server memory: visitors with distinct inputs at each page's largest size",
        5.4,
        f"`python -m bench.bench_server_memory --visitors {raw['visitors']} --wave "
        f"{raw['wave']}`: idle {raw['idle_mb']} MB, peak {raw['peak_mb']} MB, after every "
        f"visitor {raw['final_mb']} MB; ceiling {CEILING_MB} MB. Errors: {len(raw['errors'])}.",
        [table(["visitors so far", "server RSS (MB)"], [["idle", raw["idle_mb"]], *rows])],
        raw,
    )
    if raw["errors"] or raw["peak_mb"] > CEILING_MB:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
