"""A small client for Streamlit's websocket protocol: one simulated browser tab per Session.

Speaks what the browser speaks on /_stcore/stream: BackMsg protobufs out (a `rerun_script`
carrying the page, the query string and widget states), ForwardMsg protobufs in, until the
run's `script_finished`. Used by the load and memory benchmarks and by tests/server.

API:
    session = Session(port, timeout=30.0)       # host is always 127.0.0.1
    await session.connect()                      # or: async with Session(port) as session:
    result = await session.rerun("inputs", query_string="d=16&seed=3")
    result.widgets["Random seed"]                # label -> Widget(type, proto)
    result.alerts, result.texts                  # alert bodies; markdown / alert text
    result.query_string                          # what the app wrote into the URL
    result.page                                  # url path of the page that ran ("" = home)
    session.cookies                              # name -> value, kept and sent as a browser does
    await session.rerun("inputs", [widget_state(w, 7)])   # change a widget
    session.auto_reruns                          # fragment id -> interval s (st.fragment run_every)
    await session.rerun(fragment_id=fid)         # what the browser sends every interval
    await session.wait_run(within=0.5)           # a run the server started itself, or None
    await session.close()
    run_blocking(main())                         # from code that may sit in an event loop

`rerun` raises ProtocolError (its `kind` says what a user would have seen) for an exception
element, a "page not found" notice, a compile error, a disconnect, or no script_finished within
`timeout` s. Problems seen inside a run are raised only after its script_finished, so the
session stays in step and can go on.

Like a browser, a Session keeps cookies and sends them with every new websocket: those a
balancer sets on the websocket's upgrade (HAProxy's affinity cookie, deploy/replicas.py) and
those the page sets with `document.cookie = "name=value" + '; ...max-age=N...'` in an st.html
script (the live class's browser id and class, ui/live/connect.py), so a reconnect is the
same browser again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from pages.stepper.browser import CHANNEL_LABEL as STEP_CONTROL
from teaching.steps import N_STEPS

HOST = "127.0.0.1"  # loopback only, always
STREAM_PATH = "/_stcore/stream"
# A cookie set by a page's script, as ui/live/connect.py writes it (max-age=0 deletes it).
PAGE_COOKIE = re.compile(r'document\.cookie = "([^"=;]+)=([^";]*)" \+ \'[^\']*max-age=(\d+)')
T = TypeVar("T")


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(coroutine) on a thread of its own.

    Callers may already be inside a running event loop (pytest with Playwright's sync API open
    keeps one in the main thread), where asyncio.run refuses to start another.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class ProtocolError(Exception):
    """Something a user would see as broken; `kind` names its category.

    Kinds: exception, page_not_found, compile_error, disconnect, timeout (and, from callers
    checking a run's content, any kind of their own such as missing_widget or no_effect).
    """

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


@dataclass(frozen=True)
class Widget:
    """One widget element of a run: its element type ("slider", "number_input", ...) and proto."""

    type: str
    proto: Any


@dataclass(frozen=True)
class RunResult:
    """What one rerun sent back."""

    latency_ms: float  # from sending the BackMsg to its script_finished
    messages: int
    nbytes: int
    widgets: dict[str, Widget]  # by label
    alerts: list[str]  # bodies of st.error / st.warning / st.info / st.success
    texts: list[str]  # markdown, headings and alert bodies, in order
    page: str  # url path of the page that ran ("" for the default page)
    query_string: str  # the URL's query string as the app left it


def widget_state(widget: Widget, value: Any) -> WidgetState:
    """A WidgetState setting `widget` to `value` (ints, floats, strings, bools, slider values).

    Buttons take value=True (a trigger). Sliders take a number or a list of numbers; radios
    and selectboxes the option's text.
    """
    state = WidgetState(id=widget.proto.id)
    if widget.type in ("button", "form_submit_button"):
        state.trigger_value = bool(value)
    elif widget.type == "slider":
        values = value if isinstance(value, list | tuple) else [value]
        state.double_array_value.data.extend(float(v) for v in values)
    elif widget.type in ("radio", "selectbox"):
        state.string_value = str(value)  # the chosen option as shown (Streamlit >= 1.50)
    elif widget.type == "checkbox":
        state.bool_value = bool(value)
    elif widget.type == "number_input" and isinstance(value, int):
        state.int_value = value
    elif widget.type == "number_input":
        state.double_value = float(value)
    elif widget.type in ("text_input", "text_area"):
        state.string_value = str(value)
    elif widget.type == "button_group":
        state.string_array_value.data.append(str(value))  # one chosen option, as shown
    else:
        raise ValueError(f"widget_state does not know how to set a {widget.type}")
    return state


STEP = re.compile(r"(?:^|&)step=(\d+)")


def step_forward(session: Session) -> WidgetState | None:
    """What a browser sends when its Stepper moves on one step (pages/stepper/browser.py): the
    hidden step control holding the next step; None where there is no next step."""
    control = session.widgets.get(STEP_CONTROL)
    found = STEP.search(session.query_string or "")
    if control is None or found is None or int(found.group(1)) >= N_STEPS:
        return None
    return widget_state(control, int(found.group(1)) + 1)


@dataclass
class Session:
    """One simulated browser tab: one websocket, one Streamlit session on 127.0.0.1:`port`."""

    port: int
    timeout: float = 30.0
    # False where the "Page not found" notice is known and harmless (a fresh server started by
    # plain `streamlit run`, see ui/server/launch.py): the run still has to show the page asked for.
    page_not_found_is_error: bool = True
    ws: Any = None
    pages: dict[str, str] = field(default_factory=dict)  # url path -> page script hash
    current_page: str = ""
    widgets: dict[str, Widget] = field(default_factory=dict)
    query_string: str = ""
    connects: int = 0
    cookies: dict[str, str] = field(default_factory=dict)
    auto_reruns: dict[str, float] = field(default_factory=dict)  # fragment id -> interval s

    async def __aenter__(self) -> Session:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Open a new websocket (a new server session); closes any previous one first."""
        await self.close()
        self.connects += 1
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        try:
            self.ws = await asyncio.wait_for(
                websockets.connect(
                    f"ws://{HOST}:{self.port}{STREAM_PATH}",
                    subprotocols=["streamlit"],  # what the browser sends (plus optional tokens)
                    additional_headers={"Cookie": cookie} if cookie else None,
                    max_size=None,
                    open_timeout=self.timeout,
                    close_timeout=2,
                    # A browser sends no pings: it learns of a dead server only when its
                    # websocket is closed (on a cluster, by the balancer: deploy/replicas.py).
                    ping_interval=None,
                ),
                self.timeout,
            )
        except (TimeoutError, OSError, websockets.WebSocketException) as exc:
            raise ProtocolError("disconnect", f"cannot connect: {exc!r}") from None
        for header in self.ws.response.headers.get_all("Set-Cookie"):
            name, _, value = header.split(";", 1)[0].partition("=")
            self.cookies[name.strip()] = value.strip()

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 5)
            self.ws = None

    async def rerun(
        self,
        page: str | None = None,
        widget_states: list[WidgetState] | tuple[()] = (),
        query_string: str | None = None,
        fragment_id: str = "",
    ) -> RunResult:
        """Run `page` (url path, "" = default; None = the current page) and read to its end.

        query_string None sends the one the app last wrote, as a browser keeps its URL;
        pass "" to drop it (a page switch from the navigation does) or a string of your own.
        fragment_id reruns only that fragment of the current page (a run_every tick, or a
        widget inside the fragment); the run may turn into a full one (st.rerun).
        """
        if self.ws is None:
            raise ProtocolError("disconnect", "not connected")
        page = self.current_page if page is None else page
        query = self.query_string if query_string is None else query_string
        msg = BackMsg()
        client = msg.rerun_script
        client.query_string = query
        if page in self.pages:
            client.page_script_hash = self.pages[page]
        else:
            client.page_name = page
        client.widget_states.widgets.extend(widget_states)
        if fragment_id:
            client.fragment_id = fragment_id
            client.is_auto_rerun = not widget_states
        client.context_info.timezone = "UTC"
        client.context_info.url = f"http://{HOST}:{self.port}/{page}" + (
            f"?{query}" if query else ""
        )
        started = time.perf_counter()
        await self._send(msg)
        return await self._read_run(page, query, started)

    async def wait_run(self, within: float) -> RunResult | None:
        """A run the server started without being asked (a live class's wake-up), read to its
        end; None if none began within `within` s. Its latency counts from its first message."""
        if self.ws is None:
            raise ProtocolError("disconnect", "not connected")
        deadline = time.perf_counter() + within
        while True:
            remaining = deadline - time.perf_counter()
            try:
                async with asyncio.timeout(max(0.0, remaining)):
                    raw = await self.ws.recv()
            except TimeoutError:
                return None
            except websockets.ConnectionClosed as exc:
                raise ProtocolError("disconnect", f"websocket closed: {exc}") from None
            first = ForwardMsg()
            first.ParseFromString(raw)
            # Between runs the server only reports its status; a run opens with new_session.
            if first.WhichOneof("type") == "new_session":
                started = time.perf_counter()
                page, query = self.current_page, self.query_string
                return await self._read_run(page, query, started, (first, len(raw)))

    async def _send(self, msg: BackMsg) -> None:
        try:
            await self.ws.send(msg.SerializeToString())
        except websockets.ConnectionClosed as exc:
            raise ProtocolError("disconnect", f"websocket closed: {exc}") from None

    async def _receive(self, deadline: float) -> tuple[ForwardMsg, int]:
        """The next ForwardMsg and its size in bytes."""
        remaining = deadline - time.perf_counter()
        try:
            if remaining <= 0:
                raise TimeoutError
            # asyncio.timeout, not wait_for: no task per message (a class's driver reads
            # tens of thousands of them on the machine it measures).
            async with asyncio.timeout(remaining):
                raw = await self.ws.recv()
        except TimeoutError:
            raise ProtocolError(
                "timeout", f"no script_finished within {self.timeout:g} s"
            ) from None
        except websockets.ConnectionClosed as exc:
            raise ProtocolError("disconnect", f"websocket closed: {exc}") from None
        fwd = ForwardMsg()
        fwd.ParseFromString(raw)
        return fwd, len(raw)

    async def _read_run(
        self, page: str, query: str, started: float, first: tuple[ForwardMsg, int] | None = None
    ) -> RunResult:
        deadline = started + self.timeout
        widgets: dict[str, Widget] = {}
        alerts: list[str] = []
        texts: list[str] = []
        problems: list[ProtocolError] = []
        ran_hash = ""
        count = nbytes = 0
        while True:
            fwd, size = first or await self._receive(deadline)
            first = None
            count += 1
            nbytes += size
            kind = fwd.WhichOneof("type")
            if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._read_element(fwd.delta.new_element, widgets, alerts, texts, problems)
                if fwd.delta.new_element.WhichOneof("type") == "html":
                    self._run_cookie_scripts(fwd.delta.new_element.html.body)
            elif kind == "navigation":
                nav = fwd.navigation
                self.pages = {p.url_pathname: p.page_script_hash for p in nav.app_pages}
                ran_hash = nav.page_script_hash
            elif kind == "auto_rerun":
                self.auto_reruns[fwd.auto_rerun.fragment_id] = fwd.auto_rerun.interval
            elif kind == "page_info_changed":
                query = fwd.page_info_changed.query_string
            elif kind == "page_not_found" and self.page_not_found_is_error:
                problems.append(ProtocolError("page_not_found", repr(page)))
            elif kind == "script_finished":
                status = fwd.script_finished
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise ProtocolError("compile_error", f"page {page!r}")
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # a callback asked for another run: the user waits for that one
                ran = next((p for p, h in self.pages.items() if h == ran_hash), page)
                self.current_page, self.widgets, self.query_string = ran, widgets, query
                if problems:
                    raise problems[0]
                latency_ms = (time.perf_counter() - started) * 1000
                return RunResult(latency_ms, count, nbytes, widgets, alerts, texts, ran, query)

    def _run_cookie_scripts(self, html: str) -> None:
        for name, value, max_age in PAGE_COOKIE.findall(html):
            if int(max_age) > 0:
                self.cookies[name] = value
            else:
                self.cookies.pop(name, None)

    @staticmethod
    def _read_element(
        element: Any,
        widgets: dict[str, Widget],
        alerts: list[str],
        texts: list[str],
        problems: list[ProtocolError],
    ) -> None:
        element_type = element.WhichOneof("type")
        body = getattr(element, element_type)
        if element_type == "exception":
            problems.append(ProtocolError("exception", f"{body.type}: {body.message}"[:300]))
        elif element_type == "alert":
            alerts.append(body.body)
            texts.append(body.body)
        elif element_type in ("markdown", "heading"):
            texts.append(body.body)
        elif element_type == "bidi_component" and body.WhichOneof("data") == "json":
            # The Stepper's browser part: the heading of the step it opens on.
            walk = json.loads(body.json)
            if isinstance(walk, dict) and "walk" in walk:
                steps = json.loads(walk["walk"])["steps"]  # (as text, pages/stepper/browser.py)
                texts.append(steps[walk["step"] - 1]["heading"])
        if getattr(body, "id", "") and getattr(body, "label", ""):
            widgets[body.label] = Widget(element_type, body)
