"""This browser's place in a live class, kept in the session and restored from its cookies.

A student joins by opening a link with ?join=CODE (or typing the code); the instructor by
starting a class on the Class page. Both survive a reload: the class's code (and for the
instructor its secret) is read back from the browser's cookies on a session's first run,
checked against the store, and dropped with a message if the class is gone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from ui.entry.literal import literal
from ui.live import connect, wake
from ui.live.rules import Refused, show_code
from ui.live.store import StoreUnavailable

JOIN_PARAM = "join"
NOTHING = -1
# Where a class waits until its instructor opens a page: a joined student's lab is there, so
# the instructor's first move is a step like the later ones, not a whole page every phone must
# mount at once (13 to 26 s with twelve phones on two cores; issue 39).
WAITING_PAGE, WAITING_STEP = "stepper", 1


@dataclass(frozen=True)
class Membership:
    """The class this browser is in; `secret` is set only in the instructor's browser."""

    code: str
    secret: str = ""
    following: bool = True  # a student's lab shows the instructor's view
    # The last follow version shown (students); NOTHING: none, not even the class's waiting
    # place (version 0, before the instructor published a view: WAITING_PAGE).
    applied: int = NOTHING
    published: str = ""  # the last view sent to students (instructor)
    left: bool = False  # the student moved away from the instructor's step or page themselves

    @property
    def teaching(self) -> bool:
        return bool(self.secret)

    @property
    def shown_code(self) -> str:
        return show_code(self.code)


def current() -> Membership | None:
    return st.session_state.get("live")


def update(**changes: object) -> None:
    st.session_state["live"] = replace(st.session_state["live"], **changes)


def set_current(membership: Membership | None) -> None:
    st.session_state["live"] = membership
    if membership is None:
        wake.forget()
        connect.remember(connect.CLASS_COOKIE, "")
        connect.remember(connect.TEACH_COOKIE, "")
    elif membership.teaching:
        connect.remember(connect.TEACH_COOKIE, f"{membership.code}.{membership.secret}")
    else:
        connect.remember(connect.CLASS_COOKIE, membership.code)


def join(code_text: str) -> None:
    """Join the class with this code as a student; says why if refused."""
    try:
        code = connect.store().join(code_text, connect.browser_id())
    except Refused as err:
        st.session_state["live_problem"] = f"Could not join the class {literal(code_text)}: {err}"
        return
    except StoreUnavailable as err:
        st.session_state["live_problem"] = connect.unavailable(err)
        return
    st.session_state["live_problem"] = ""
    set_current(Membership(code))


def restore() -> None:
    """On a session's first run: join from the link, or take back this browser's class.

    Marked done only once it is: a first run cut short (a reconnecting tab's queued rerun
    stops it while the store opens) tries again on the next run, instead of leaving the
    student out of their class. Joining again is harmless: a member is known by browser.
    """
    s = st.session_state
    if not s.get("live_restored"):
        _restore()
        s["live_restored"] = True


def _restore() -> None:
    s = st.session_state
    linked = st.query_params.get_all(JOIN_PARAM)
    # A code given twice names two classes: the link's warning (share.py) says neither is used.
    if len(linked) == 1 and linked[0]:
        join(linked[0])
        return
    teach = connect.cookie(connect.TEACH_COOKIE)
    joined = connect.cookie(connect.CLASS_COOKIE)
    if not (teach or joined):
        return  # single-student use: the store is never opened
    try:
        if teach and "." in teach:
            code, secret = teach.split(".", 1)
            connect.store().check_instructor(code, secret)
            s["live"] = Membership(code, secret)
        elif joined:
            s["live"] = Membership(connect.store().join(joined, connect.browser_id()))
    except Refused as err:
        # The class ended or is gone (a right code is never refused by a limit, and its
        # students always get back in): nothing to take back, and the student is told.
        set_current(None)
        kept = teach.split(".", 1)[0] if teach else joined
        s["live_problem"] = f"You are no longer in the class {literal(kept)}: {err}"
    except StoreUnavailable as err:
        s["live_problem"] = connect.unavailable(err)
