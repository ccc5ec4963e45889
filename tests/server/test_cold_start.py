"""A class opens the lab on a server that has just started: every first request at once.

Thirty sessions connect, then all send their first run in the same instant, each on a page of
its own (every lab page in turn). On a cold server their script threads import the
heavy libraries together; none of them may see an error or another page than the one its URL
names. Started by the launcher (./run.sh), none may see a "Page not found" notice either; under
plain `streamlit run app.py` the first wave gets that notice once (ui/server/launch.py says why), so
there only the page shown is checked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.local_server import LocalServer
from bench.ws_client import ProtocolError, RunResult, Session, run_blocking

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = 30
# Every page by its url path; the default page (home) is the root.
PAGES = sorted(
    "" if p.stem == "home" else p.stem
    for p in (ROOT / "pages").glob("*/*.py")
    if p.stem == p.parent.name
)


async def _first_runs(port: int, pages: list[str], strict: bool) -> list[RunResult | ProtocolError]:
    sessions = [Session(port, timeout=180.0, page_not_found_is_error=strict) for _ in pages]
    await asyncio.gather(*(s.connect() for s in sessions))
    try:
        return await asyncio.gather(
            *(s.rerun(page) for s, page in zip(sessions, pages, strict=True)),
            return_exceptions=True,
        )
    finally:
        await asyncio.gather(*(s.close() for s in sessions))


def test_thirty_first_requests_at_once_on_a_fresh_server(fresh_server: LocalServer) -> None:
    wanted = [PAGES[i % len(PAGES)] for i in range(SESSIONS)]
    results = run_blocking(_first_runs(fresh_server.port, wanted, strict=fresh_server.launcher))
    failures = [
        f"session {i} on /{page}: {result!r}"
        for i, (page, result) in enumerate(zip(wanted, results, strict=True))
        if not isinstance(result, RunResult)
    ]
    assert not failures, "\n".join(failures) + "\n\nserver log:\n" + fresh_server.log()[-3000:]
    shown = [result.page for result in results]
    assert shown == wanted, "a session was shown another page than its URL names"
    assert all(result.texts for result in results), "a page rendered no text"
    assert "Traceback" not in fresh_server.log(), fresh_server.log()[-3000:]
