"""What a student's tab costs a real server, run by run, over Streamlit's websocket protocol.

One server (ui.server.launch) on a SQLite store; the instructor acts through the store itself,
the student is a websocket session that runs the watcher's timer as a browser does. A look that
finds nothing new must draw nothing (a hundred students look twice a second); news reruns the
app, which shows it; a vote reruns only the class bar.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.local_server import LocalServer  # noqa: E402
from bench.ws_client import RunResult, Session, run_blocking, widget_state  # noqa: E402
from ui.live.store import Asked, Store  # noqa: E402
from ui.live.student import GLANCE_S  # noqa: E402

ASKED = Asked("Step 1", "What is sample_mean?", ("0.5", "1.0", "-2"), 1, "It is the mean: 1.0.")
HEADING = re.compile(r"Step (\d+) of 20")


def _step(result: RunResult) -> int | None:
    found = next((m for m in map(HEADING.match, result.texts) if m), None)
    return int(found.group(1)) if found else None


async def _look(student: Session, watcher: str) -> RunResult:
    # The watchers of one process share a glance for GLANCE_S: news waits at most that long.
    await asyncio.sleep(GLANCE_S * 1.5)
    return await student.rerun(fragment_id=watcher)


async def _a_student(port: int, store: Store) -> dict[str, Any]:
    """Each run the student's tab made, by what it was; and the class's counts at the end."""
    started = store.start_class()
    code, secret = started.code, started.secret
    seen: dict[str, Any] = {}
    async with Session(port, timeout=120.0) as student:
        await student.rerun("", query_string=f"join={code}")
        student.auto_reruns.clear()
        await student.rerun("stepper")
        (watcher,) = student.auto_reruns  # the one timed fragment of the page's last run
        seen["quiet"] = await _look(student, watcher)
        store.publish(code, secret, "stepper", "step=3")
        seen["followed"] = await _look(student, watcher)
        seen["quiet again"] = await _look(student, watcher)
        store.ask(code, secret, ASKED)
        seen["asked"] = await _look(student, watcher)
        radio = student.shown["Your answer"]
        choice = widget_state(radio, "1.0")
        seen["chosen"] = await student.rerun(fragment_id=radio.fragment_id, widget_states=[choice])
        button = student.shown["Vote"]
        states = [choice, widget_state(button, True)]
        seen["voted"] = await student.rerun(fragment_id=button.fragment_id, widget_states=states)
        seen["replayed"] = await student.rerun(fragment_id=button.fragment_id, widget_states=states)
        seen["after the vote"] = await _look(student, watcher)
    seen["counts"] = store.status(code, secret).counts
    return seen


def test_a_look_draws_nothing_news_reruns_the_app_and_a_vote_only_the_bar(tmp_path):
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    store = Store(url)
    try:
        with LocalServer(launcher=True, env={"LNLAB_CLASS_DB": url}) as server:
            seen = run_blocking(_a_student(server.port, store))
    finally:
        store.close()
    for quiet in ("quiet", "quiet again", "after the vote"):
        look = seen[quiet]
        assert look.fragment_run and not look.texts and not look.widgets, (quiet, look.texts)
    # The instructor's step: the whole app ran and the lab shows it.
    assert not seen["followed"].fragment_run and _step(seen["followed"]) == 3
    assert "Random seed" in seen["followed"].widgets  # a whole run draws the sidebar
    # A question: the whole app ran, the bar shows it (the lab stays on its step).
    asked = seen["asked"]
    assert not asked.fragment_run and "Your answer" in asked.widgets and _step(asked) == 3
    # Choosing and voting rerun the bar alone: no step heading, no sidebar.
    for run in ("chosen", "voted", "replayed"):
        assert seen[run].fragment_run and _step(seen[run]) is None, run
        assert "Random seed" not in seen[run].widgets, run
    assert any("Your vote is counted: 1.0" in t for t in seen["voted"].texts)
    assert any("Your vote is counted" in t for t in seen["replayed"].texts)
    assert seen["counts"] == {1: (0, 1, 0)}  # the replayed click counted once
