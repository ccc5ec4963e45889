"""A following student's Stepper hears the class's step straight from the server, with no run
(the route deploy/asgi.py serves).

Every step the instructor takes used to reach a following student only as a run of the walk's
fragment (ui/live/wake.py): a dozen messages, each of which has the phone render its whole
page again; with twelve phones and the projector on two cores, the step showed up to 1.75 s
after the click at p95 (BENCHMARKS.md). Now walk.js also asks this route for the class's
next step and, when the instructor moved only the step, draws it at once, as it draws a
student's own key press. The woken run still comes, a moment later (wake.FEED_FIRST_S, so
that the tab draws the step first): it brings the step's typeset lines and tells Python the
step.

The browser holds one request open (HOLD_S) until the class moves past the version it knows;
the answer comes from the process's look at the store (wake.Waker), so a hundred students cost
no query each. The class and the student's session are named with a signature made with the
server's cookie secret (every replica has the same): the route is no way to guess codes, and it
tells a visitor nothing a following student's page does not show.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from urllib.parse import urlencode

import streamlit as st
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ui.live import follow, wake

HOLD_S = 20.0  # s a request waits for a step; HAProxy's server timeout is 60 s (deploy/)
PATH = "/api/class-step"  # where deploy/asgi.py serves `answer`
SECRET_OPTION = "server.cookieSecret"
VERSION = re.compile(r"[0-9]{1,12}")  # ASCII digits: str.isdigit and int() take other scripts'
# Requests held at once in one process: a few per student of a large class, and a bound on
# what a student's own script could make the server hold.
MAX_WAITING = 2000


def signed(code: str, session: str, secret: str) -> str:
    """The signature under `secret` that lets session `session`'s walk ask for the class's
    steps (`session` is its Streamlit session's id, "" where there is none)."""
    text = f"class-step:{code}:{session}".encode()
    return hmac.new(secret.encode(), text, hashlib.sha256).hexdigest()[:32]


def signature(code: str, session: str) -> str:
    """The signature under this server's cookie secret."""
    return signed(code, session, str(st.config.get_option(SECRET_OPTION)))


def address(code: str) -> str:
    """Where this session's walk asks for the class's next step (before `&after=`)."""
    session = wake.session_id()
    query = {"class": code, "session": session, "sig": signature(code, session)}
    return f"{PATH}?{urlencode(query)}"


async def answer(request: Request) -> Response:
    """The class's page, view and step once its version passes `after`: JSON
    {"version", "page", "view", "step"}, {"version": null} when nothing moved within HOLD_S;
    204 when this process does not look at the class (its runs still bring every step), 503
    when it already holds MAX_WAITING requests."""
    code, session, sig, after = (
        request.query_params.get(name, "") for name in ("class", "session", "sig", "after")
    )
    # As bytes: compare_digest refuses a text with other than ASCII in it.
    if not (code and hmac.compare_digest(sig.encode(), signature(code, session).encode())):
        return Response(status_code=403)
    if not VERSION.fullmatch(after):
        return Response(status_code=400)
    waker = wake.watcher(code)
    if waker is None:
        return Response(status_code=204)
    if waker.waiting_count() >= MAX_WAITING:
        return Response(status_code=503)
    glance = await waker.moved_past(code, int(after), HOLD_S, session)
    if glance is None:
        return JSONResponse({"version": None})
    moved = glance.follow
    return JSONResponse(
        {
            "version": moved.version,
            "page": moved.page,
            "view": follow.step_free(follow.view_of(moved.query)),
            "step": follow.instructors_step(moved.query),
        }
    )
