"""What a server serves: Streamlit's app for app.py, plus one route of the lab's own, where a
following student's Stepper asks for the class's next step (pages/stepper/feed.py, fetched by
pages/stepper/walk.js). ui/server/launch.py (what ./run.sh starts) has `streamlit run` serve
this file, which Streamlit runs as an st.App; any ASGI server can serve `deploy.asgi:app`."""

from pathlib import Path

import streamlit as st
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

APP_SCRIPT = Path(__file__).resolve().parents[1] / "app.py"
# pages/stepper/feed.py's PATH (not imported from there: see class_step); the requests of
# tests/server/test_class_wakeups.py go to that PATH.
CLASS_STEP = "/api/class-step"


async def class_step(request: Request) -> Response:
    # The live class is imported at the first request, not with this file: its modules declare
    # Streamlit caches, which warn when declared before Streamlit's runtime exists.
    from pages.stepper import feed

    return await feed.answer(request)


app = st.App(APP_SCRIPT, routes=[Route(CLASS_STEP, class_step)])
