"""Waking a class's students in this process when the class moves on, instead of each polling.

A student's class bar used to rerun every 0.5 s to look at the store: 100 students made 200
runs a second, two thirds of the app's CPU in a class spent finding nothing new, and each
followed step then reran the student's whole app. Now one thread per process looks at the
store for the classes whose students are connected here (one indexed query per class every
LOOK_S s) and, when a class has moved on, asks each session that has not shown it yet for one
run of what shows it:

- the instructor moved on the Stepper and the student is there: the fragment around
  follow.in_stepper, the Stepper's or (quiz off) its walk's alone (pages/stepper/browser.py);
  it takes the step, and reruns the whole app if more than the step changed;
- the instructor's view changed otherwise: the whole app (follow.catch_up switches page);
- only the question or the class's end: the class bar.

Streamlit has no public call that starts a run from the server. This asks the session for one
as a browser's message would, through AppSession.request_rerun, the call Streamlit's own
run-on-save makes when a file changes; on the server's event loop, since an AppSession is not
thread-safe. The fragment to rerun is named by its id, which Streamlit keeps per thread
(ThreadState); both are Streamlit's inner parts, pinned with it in constraints.txt, and
tests/server/test_class_wakeups.py fails if they change. What a session shows is told by its
own runs (listen_bar, listen_step); a wake-up that did not bring the change comes again
(AGAIN_S), and the bar keeps a slow timer (student.POLL_S) as a last resort.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ui.live import connect
from ui.live.rules import Refused
from ui.live.store import Glance, Question, Store, StoreUnavailable
from ui.streamlit_private import ClientState, Runtime, ThreadState, get_script_run_ctx

LOOK_S = 0.05  # s between the thread's looks at the store
AT_ONCE = 2  # woken runs going at a time in one process (see Waker)
BUSY_S = 0.5  # s after which a woken run that did not say it ended no longer holds its place
# s after which a session woken for a change it still does not show is woken again, whole:
# Streamlit drops a fragment's rerun if a full run has just replaced the fragment.
AGAIN_S = 2.0
STEPPER = "stepper"  # the page whose fragment can take a new step without the whole app
# s a step's run waits for a student whose walk asks the feed (pages/stepper/feed.py): the
# walk draws the step first, with the tab's whole attention, and the run's messages after.
FEED_FIRST_S = 0.3
_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class BarView:
    """What a student's class bar shows of the class: whether it ended, and its question."""

    ended: bool
    question: Question | None


@dataclass(frozen=True)
class Listener:
    """One student's session in this process, as its latest runs left it."""

    code: str
    following: bool
    rerun: ClientState  # what its browser would send to rerun its page (never changed)
    bar: str  # the class bar's fragment id
    step: str  # the id of the Stepper's fragment that takes a step (listen_step), else ""
    follow_shown: int  # the follow version its lab shows
    bar_shown: BarView  # what its bar last drew
    woken_for: Glance | None = None  # the glance it was last woken for
    woken_run: str = ""  # the fragment then asked to rerun ("": the whole app)
    woken_at: float = 0.0  # when (time.monotonic)


def bar_view(glance: Glance) -> BarView:
    """What of `glance` a student's class bar shows."""
    return BarView(glance.ended, glance.question)


def wanted(listener: Listener, glance: Glance, again: bool = False) -> ClientState | None:
    """The run that shows `glance` to this session (`again`: the whole app, for a wake-up
    that did not bring it), or None if it shows it already."""
    moved = listener.following and glance.follow.version > listener.follow_shown
    asked = bar_view(glance) != listener.bar_shown
    if not (moved or asked):
        return None
    if moved and not (asked or again) and listener.step and glance.follow.page == STEPPER:
        fragment = listener.step
    elif moved or again:
        fragment = ""  # the whole app
    else:
        fragment = listener.bar
    rerun = ClientState()
    rerun.CopyFrom(listener.rerun)
    rerun.fragment_id = fragment
    return rerun


def fed_first(listener: Listener, rerun: ClientState, feeding: bool, age_s: float) -> bool:
    """Whether `rerun` waits: a step alone, for a session whose walk asks the feed (`feeding`)
    and so draws the step from there, of a class's move seen `age_s` ago."""
    step_alone = bool(listener.step) and rerun.fragment_id == listener.step
    return step_alone and feeding and age_s < FEED_FIRST_S


class Waker:
    """The process's listeners and the thread that looks at the store for them.

    At most AT_ONCE woken runs go at a time: fifty started together share the interpreter
    with the event loop that sends their results, which then reach the browsers only when
    nearly all have finished (measured: the first student's step arrived after 0.6 s). A run
    makes room when it ends (woken_run) or after BUSY_S at most."""

    def __init__(self, store: Store, loop: asyncio.AbstractEventLoop) -> None:
        self.store, self.loop = store, loop
        self.lock = threading.Lock()
        self.listeners: dict[str, Listener] = {}  # session id -> Listener
        self.busy: dict[str, float] = {}  # session id -> when it was woken (time.monotonic)
        self.room = threading.Event()  # a woken run ended: look again without waiting
        self.glances: dict[str, Glance] = {}  # class code -> its latest glance
        self.glanced = 0.0  # when (time.monotonic)
        # Browsers waiting for a class to move past a follow version (pages/stepper/feed.py):
        # class code -> (version, answer, session id); changed on the loop, read by the thread.
        self.waiting: dict[str, list[tuple[int, asyncio.Future[Glance], str]]] = {}
        self.seen: dict[str, tuple[int, float]] = {}  # code -> follow version, first seen
        threading.Thread(target=self._look_forever, name="class-waker", daemon=True).start()

    def _look_forever(self) -> None:
        while True:
            self.room.wait(LOOK_S)
            self.room.clear()
            try:
                self.look()
            except Exception:  # the thread must outlive any one look; the bar's timer covers
                _LOGGER.exception("looking at the live classes failed")

    def look(self) -> None:
        now = time.monotonic()
        with self.lock:
            listeners = dict(self.listeners)
            self.busy = {sid: at for sid, at in self.busy.items() if now - at < BUSY_S}
            free = AT_ONCE - len(self.busy)
        # A look for room only (a run ended) wakes the next with what the store last said.
        # The store is looked at even with no room for a run: the browsers waiting on the
        # feed are answered at once, whatever the runs do.
        if now - self.glanced >= LOOK_S:
            glances = {}
            for code in {listener.code for listener in listeners.values()}:
                try:
                    glances[code] = self.store.glance(code)
                except (Refused, StoreUnavailable):
                    continue  # the bar says what is wrong on its next run
            self.glances, self.glanced = glances, now  # read by sessions' runs (latest)
            self.loop.call_soon_threadsafe(self._answer_waiting, glances)
            for code, glance in glances.items():
                if self.seen.get(code, (-1, 0.0))[0] != glance.follow.version:
                    self.seen[code] = (glance.follow.version, now)
        if free <= 0:
            return
        glances = self.glances
        with self.lock:
            feeding = {session for held in self.waiting.values() for _, _, session in held}
        runtime = Runtime.instance()
        for session_id, listener in listeners.items():
            glance = glances.get(listener.code)
            if free <= 0 or glance is None:
                continue
            rerun = wanted(listener, glance)
            if rerun is None:
                continue
            if fed_first(listener, rerun, session_id in feeding, now - self.seen[listener.code][1]):
                continue
            # The same run again for the same glance: the last did not bring it.
            if (glance, rerun.fragment_id) == (listener.woken_for, listener.woken_run):
                if now - listener.woken_at < AGAIN_S:
                    continue
                rerun = wanted(listener, glance, again=True)
            session = runtime.get_app_session(session_id)
            if session is None:  # closed, or waiting for its browser to reconnect
                self.forget(session_id)
                continue
            self.loop.call_soon_threadsafe(session.request_rerun, rerun)
            free -= 1
            with self.lock:
                self.busy[session_id] = now
                latest = self.listeners.get(session_id)
                if latest is not None:
                    self.listeners[session_id] = replace(
                        latest, woken_for=glance, woken_run=rerun.fragment_id, woken_at=now
                    )

    def _answer_waiting(self, glances: dict[str, Glance]) -> None:
        """On the loop: answer the browsers whose class moved past the version they hold."""
        with self.lock:
            waiting = {code: list(held) for code, held in self.waiting.items()}
        for code, held in waiting.items():
            glance = glances.get(code)
            for after, future, _ in held:
                if glance is not None and glance.follow.version > after and not future.done():
                    future.set_result(glance)

    def waiting_count(self) -> int:
        """How many browsers' requests wait here."""
        with self.lock:
            return sum(len(held) for held in self.waiting.values())

    async def moved_past(
        self, code: str, after: int, hold_s: float, session_id: str
    ) -> Glance | None:
        """On the loop: the class's glance once its follow version passes `after`, or None
        after `hold_s`, for the walk of session `session_id`. Only a class with a student
        connected to this process is looked at."""
        known = self.glances.get(code)
        if known is not None and known.follow.version > after:
            return known
        future: asyncio.Future[Glance] = self.loop.create_future()
        held = (after, future, session_id)
        with self.lock:
            self.waiting.setdefault(code, []).append(held)
        try:
            return await asyncio.wait_for(future, hold_s)
        except TimeoutError:
            return None
        finally:
            with self.lock:
                self.waiting[code].remove(held)
                if not self.waiting[code]:
                    del self.waiting[code]

    def heard(self, session_id: str, listener: Listener) -> None:
        """A run of the session's class bar: what it shows now. What only the waker knows
        stays, and so does the Stepper's fragment while the session stays on its page."""
        with self.lock:
            old = self.listeners.get(session_id)
            if old is not None:
                same_page = old.rerun.page_script_hash == listener.rerun.page_script_hash
                listener = replace(listener, step=old.step if same_page else "",
                                   woken_for=old.woken_for, woken_run=old.woken_run,
                                   woken_at=old.woken_at)  # fmt: skip
            self.listeners[session_id] = listener

    def heard_step(self, session_id: str, fragment: str, follow_shown: int) -> None:
        """A run of the session's Stepper fragment, showing follow version `follow_shown`."""
        with self.lock:
            old = self.listeners.get(session_id)
            if old is not None:
                self.listeners[session_id] = replace(old, step=fragment, follow_shown=follow_shown)

    def ran(self, session_id: str) -> None:
        with self.lock:
            woken = self.busy.pop(session_id, None) is not None
        if woken:
            self.room.set()

    def forget(self, session_id: str) -> None:
        with self.lock:
            self.listeners.pop(session_id, None)
            self.busy.pop(session_id, None)


# One per process and database, for the life of the process (not a cache: one that expired
# would leave its thread running and its listeners unwoken).
_WAKERS: dict[str, Waker] = {}
_STARTING = threading.Lock()


def _waker(url: str) -> Waker:
    with _STARTING:
        if url not in _WAKERS:
            # Runtime.stopped is a future of the server's event loop, where sessions take
            # requests.
            loop = Runtime.instance().stopped.get_loop()
            _WAKERS[url] = Waker(connect.store(), loop)
        return _WAKERS[url]


def watcher(code: str) -> Waker | None:
    """For a browser's request (pages/stepper/feed.py): this process's waker if it looks at
    the class (a student of it is connected here), else None."""
    waker = _WAKERS.get(connect.database_url())
    if waker is None:
        return None
    with waker.lock:
        watched = any(listener.code == code for listener in waker.listeners.values())
    return waker if watched else None


def _here() -> tuple[Waker, str, str, ClientState] | None:
    """The waker, this run's session id and fragment, and how its browser reruns its page;
    None where no server holds the session (AppTest) or the store cannot be opened."""
    ctx = get_script_run_ctx()
    # AppTest runs scripts with a mock in the runtime's place (one that passes isinstance),
    # and no browser to wake.
    if ctx is None or not Runtime.exists() or type(Runtime.instance()) is not Runtime:
        return None
    if Runtime.instance().get_app_session(ctx.session_id) is None:
        return None
    try:
        waker = _waker(connect.database_url())
    except StoreUnavailable:
        return None
    rerun = ClientState(page_script_hash=ctx.page_script_hash, query_string=ctx.query_string)
    if ctx.context_info is not None:
        rerun.context_info.CopyFrom(ctx.context_info)
    return waker, ctx.session_id, ThreadState.get().fragment_id or "", rerun


def listen_bar(code: str, following: bool, follow_shown: int, glance: Glance) -> None:
    """From a run of the class bar: this session shows `glance` and follow version
    `follow_shown`; wake it when the class moves past them."""
    here = _here()
    if here is not None:
        waker, session_id, fragment, rerun = here
        shown = bar_view(glance)
        waker.heard(session_id, Listener(code, following, rerun, fragment, "", follow_shown, shown))


def session_id() -> str:
    """This run's session id ("" where no server holds the session: AppTest)."""
    here = _here()
    return "" if here is None else here[1]


def latest(code: str) -> Glance | None:
    """What this process last saw of the class (what a woken run was woken for), if known."""
    here = _here()
    return None if here is None else here[0].glances.get(code)


def listen_step(follow_shown: int) -> None:
    """From a run of the Stepper's fragment: wake this fragment alone for a new step."""
    here = _here()
    if here is not None:
        waker, session_id, fragment, _ = here
        waker.heard_step(session_id, fragment, follow_shown)


@contextmanager
def woken_run() -> Iterator[None]:
    """Around a run that shows the class (the class bar, the Stepper's fragment): its end
    makes room for the next woken session."""
    try:
        yield
    finally:
        here = _here()
        if here is not None:
            here[0].ran(here[1])


def forget() -> None:
    """This session left its class (or its class is gone): nothing to wake it for."""
    here = _here()
    if here is not None:
        here[0].forget(here[1])
