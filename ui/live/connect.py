"""Where the live class's store is, and how a browser is known to it (the Streamlit side).

LNLAB_CLASS_DB is a SQLAlchemy database URL (e.g. postgresql+psycopg://user:pw@host/db, what
every replica of a cluster is given); without it the store is a SQLite file in data/ next to
the app, shared by every process on this machine. Nothing here runs until a class is started
or joined: a student using the lab alone never opens the store.

A browser keeps its opaque id, the class it joined, and (for the instructor) the class's secret
in cookies set by the page itself, so a reload or a reconnect to another replica keeps them;
the secret never goes into a link. Ended classes are deleted LNLAB_CLASS_RETENTION_HOURS
(default 24) after they end.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import streamlit as st

from ui.live import rules
from ui.live.store import Store, StoreUnavailable

ROOT = Path(__file__).resolve().parents[2]
DB_ENV = "LNLAB_CLASS_DB"
RETENTION_ENV = "LNLAB_CLASS_RETENTION_HOURS"
BROWSER_COOKIE = "lnlab_browser"
CLASS_COOKIE = "lnlab_class"  # the code of the class this browser joined
TEACH_COOKIE = "lnlab_teach"  # "<code>.<secret>" in the instructor's browser only
COOKIE_DAYS = 1
T = TypeVar("T")


def database_url() -> str:
    url = os.environ.get(DB_ENV, "").strip()
    if url:
        return url
    data = ROOT / "data"
    data.mkdir(exist_ok=True)
    return f"sqlite:///{data / 'classes.sqlite3'}"


def retention_s() -> float:
    try:
        hours = float(os.environ.get(RETENTION_ENV, "24"))
    except ValueError:
        hours = 24.0
    return max(0.0, hours) * 3600


# One store per database URL (a process has one; tests open a few). Reopened once a day, which
# also runs the retention purge again.
@st.cache_resource(show_spinner=False, max_entries=4, ttl=24 * 3600)
def _open(url: str) -> Store:
    # A failure raises and is not cached: the next action tries again.
    opened = Store(url)
    opened.purge(retention_s())
    return opened


def store(fresh: bool = False) -> Store:
    """The process's store, opened (and its schema created) on first use. `fresh` (starting a
    class): a SQLite file deleted or replaced under the server is opened anew; every other use
    keeps saying what happened to it, so no class silently vanishes into an empty file."""
    try:
        if fresh and _open(database_url()).replaced:
            _open.clear()
        return _open(database_url())
    except StoreUnavailable:
        raise
    except Exception as err:  # a malformed URL or a missing driver: still only a message
        raise StoreUnavailable(f"{type(err).__name__}: {str(err)[:200]}") from err


UNAVAILABLE = (
    "The class server cannot be reached right now ({}). The lab itself keeps working; "
    "try again in a moment, or ask whoever runs the lab to check its database ({})."
)


def unavailable(err: StoreUnavailable) -> str:
    return UNAVAILABLE.format(err, DB_ENV)


def shown(read: Callable[[], T]) -> T | None:
    """What `read` gets from the store, or None with what stopped it shown in its place."""
    try:
        return read()
    except rules.Refused as err:
        st.warning(str(err))
    except StoreUnavailable as err:
        st.error(unavailable(err))
    return None


def cookie(name: str) -> str:
    value = st.context.cookies.get(name)
    return value if isinstance(value, str) else ""


def remember(name: str, value: str) -> None:
    """Keep a cookie in this browser ("" deletes it; values here are our own tokens and codes).

    write_cookies sets it on every full run of the session, not once: a run cut short by a
    rerun (a student who joins and follows the instructor to another page at once) never
    delivers its elements, and without the cookie a reconnect would lose the class and vote.
    """
    st.session_state["cookies"] = {**st.session_state["cookies"], name: value}


def write_cookies() -> None:
    """Set the cookies this session keeps that its browser did not send when it connected."""
    script = "".join(
        f"document.cookie = {json.dumps(f'{name}={value}')} + "
        f"'; path=/; max-age={COOKIE_DAYS * 86400 if value else 0}; SameSite=Strict';"
        for name, value in st.session_state["cookies"].items()
        if cookie(name) != value
    )
    if script:
        st.html(f"<script>{script}</script>", unsafe_allow_javascript=True)


def browser_id() -> str:
    """This browser's opaque id: from its cookie, or new (and saved) on its first visit."""
    s = st.session_state
    if not s.get("browser_id"):
        known = cookie(BROWSER_COOKIE)
        try:
            s["browser_id"] = rules.check_browser_id(known)
        except rules.Refused:
            s["browser_id"] = rules.new_browser_id()
            remember(BROWSER_COOKIE, s["browser_id"])
    return s["browser_id"]
