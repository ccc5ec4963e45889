"""A live class on a real server: the server starts the students' runs (ui/live/wake.py).

Over Streamlit's websocket protocol, as a browser would speak it: the instructor's Next reaches
a following student as a run the student's tab did not ask for (the Stepper's walk alone),
a student exploring on their own is left where they are, and a question reaches everyone's
class bar; the instructor's publishing timer, carrying the Stepper's hidden step control as
the browser last drew it, does not send the class back a step. One process and a SQLite
store in the test's folder.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from urllib.parse import urlencode

from bench.bench_class import CODE, teacher_click, teacher_step
from bench.local_server import LocalServer
from bench.ws_client import RunResult, Session, run_blocking, widget_state
from pages.stepper import feed
from ui.live.store import Store

STEP = re.compile(r"(?:^|&)step=(\d+)")
FOLLOWING_CONTROLS = "Stop following to explore"
SIDEBAR_WIDGET = "Random seed"
SECRET = "the cookie secret of the test's server"
SESSION = "a session id"  # the route takes any the server signed
WAIT_S = 20.0  # generous for a loaded machine; bench/bench_class.py measures the delay


async def _woken(session: Session, within: float) -> RunResult | None:
    return await session.wait_run(within=within)


async def _class(port: int, store: Store) -> None:
    teacher = Session(port)
    await teacher.connect()
    await teacher.rerun("class", query_string="")
    started = await teacher_click(teacher, "Start a class")
    found = next(CODE.search(t) for t in started.texts if CODE.search(t))
    code = found.group(1) + found.group(2)
    teacher.auto_reruns.clear()  # the Class page's timer stops with the page, as in a browser
    await teacher.rerun("stepper", query_string="")
    follower, explorer = Session(port), Session(port)
    for student in (follower, explorer):
        await student.connect()
        joined = await student.rerun("", query_string=f"join={code}")
        assert joined.page == "stepper" and STEP.search(joined.query_string).group(1) == "1"
        # A whole run: the sidebar, where a following student's menu and controls give way
        # to the way to explore (the instructor's next step would change them back).
        assert FOLLOWING_CONTROLS in joined.widgets and SIDEBAR_WIDGET not in joined.widgets
        # A following student's page holds its step's lines alone, not the twenty steps' a
        # phone would render again for every message of every step.
        assert _lines(joined) == 1, _lines(joined)
    bar = next(iter(explorer.auto_reruns))
    stop = widget_state(explorer.widgets["Stop following"], True)
    stopped = await explorer.rerun(fragment_id=bar, widget_states=[stop])
    assert any("exploring on your own" in t for t in stopped.texts)
    assert SIDEBAR_WIDGET in stopped.widgets, "the student's controls did not come back"

    # The follower's walk asks the server for the class's next step (pages/stepper/feed.py): the
    # request waits until the instructor moves, then says the step.
    shown_version = store.glance(code).follow.version
    asked = asyncio.create_task(asyncio.to_thread(_ask_feed, port, code, shown_version))
    await asyncio.sleep(0.5)
    assert not asked.done(), "the feed answered before the class moved"
    await teacher_step(teacher)
    assert "step=2" in store.glance(code).follow.query
    status, answer = await asyncio.wait_for(asked, WAIT_S)
    assert status == 200 and answer["step"] == 2 and answer["page"] == "stepper", answer
    assert answer["version"] > shown_version, answer
    _feed_refuses_strangers(port, code)
    # Every fragment of the Stepper publishes as it runs: no 1 s timer renders the projector's
    # page again every second there (with twelve phones, a tenth of a core).
    assert 1.0 not in teacher.auto_reruns.values(), teacher.auto_reruns
    woken = await _woken(follower, WAIT_S)
    assert woken is not None, "the following student's lab was not moved"
    assert any(t.startswith("Step 2 of 20") for t in woken.texts)
    assert FOLLOWING_CONTROLS not in woken.widgets  # the Stepper's walk alone ran
    # Its fragment's few messages, not the Stepper's whole fragment (about 230: every step's
    # lines and folds), which a phone renders one message at a time: the run's start, its
    # status and end, the fragment's box, the walk and the hidden step control (not a box of
    # its own, and no new address: walk.js keeps the step in it), and the step's own lines
    # (their box, two columns, each with its heading, formula and note).
    assert _lines(woken) == 1, _lines(woken)
    assert woken.messages <= 16, woken.messages
    assert await _woken(explorer, 1.5) is None, "a student exploring was moved"

    await teacher.rerun("class", query_string="")
    await teacher_click(teacher, "Ask")
    for student in (follower, explorer):
        shown = await _woken(student, WAIT_S)
        assert shown is not None and "Your answer" in shown.widgets
    await asyncio.gather(teacher.close(), follower.close(), explorer.close())


def _ask_feed(port: int, code: str, after: object, sig: str | None = None) -> tuple[int, dict]:
    """The feed's status and JSON answer (or {}) for a request as walk.js sends it."""
    signed = feed.signed(code, SESSION, SECRET)
    params = {"class": code, "session": SESSION, "sig": signed if sig is None else sig}
    url = f"http://127.0.0.1:{port}{feed.PATH}?{urlencode({**params, 'after': after})}"
    try:
        with urllib.request.urlopen(url, timeout=WAIT_S + feed.HOLD_S) as response:
            body = response.read()
            return response.status, json.loads(body) if body else {}
    except urllib.error.HTTPError as err:
        return err.code, {}


def _feed_refuses_strangers(port: int, code: str) -> None:
    # A request without the class's signature learns nothing, not even whether the code is a
    # class's (the route is no way around the join codes' limits); a signed one with a bad
    # version is refused; a class no student of is connected to this process gets no wait.
    forged = (
        "", "0" * 32, "é" * 32, feed.signed(code, SESSION, "another secret"),
        feed.signed("ZZZZZZZZ", SESSION, SECRET), feed.signed(code, "another session", SECRET),
    )  # fmt: skip
    for sig in forged:
        assert _ask_feed(port, code, 0, sig)[0] == 403, sig
    for stranger in ("", "é", "\u202e" + code, "x" * 4000):
        assert _ask_feed(port, stranger, 0, feed.signed(code, SESSION, SECRET))[0] == 403, stranger
    for after in ("", "-1", "1.5", "x", "9" * 13, "١"):
        assert _ask_feed(port, code, after)[0] == 400, after
    assert _ask_feed(port, "ZZZZZZZZ", 0) == (204, {})
    # What the class has shown already comes back at once.
    status, answer = _ask_feed(port, code, 0)
    assert status == 200 and answer["step"] == 2, answer


def _lines(run: RunResult) -> int:
    """How many steps' forward lines a run drew."""
    return sum("Forward line" in text for text in run.texts)


def test_the_server_moves_following_students_and_shows_everyone_the_question(tmp_path):
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    env = {"LNLAB_CLASS_DB": url, "STREAMLIT_SERVER_COOKIE_SECRET": SECRET}
    with LocalServer(launcher=True, env=env) as server:
        run_blocking(_class(server.port, Store(url)))
