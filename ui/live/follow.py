"""Students follow the instructor: the instructor's view is published, students' labs catch up.

The instructor's page and view (the query string a share link would carry, ui/share.py) go to
the store whenever they change: on every full run, from the Stepper's fragments at once (its
buttons rerun only those), and on the other pages from a small fragment that looks once a
second for their fragments. Each process's watcher (ui/live/wake.py) then wakes its following
students: on the Stepper, when only the step moved, the fragment around in_stepper takes the
step (the Stepper's, or the walk's alone where it is a fragment of its own); otherwise the whole
app reruns, and its first step (catch_up) applies the view through the share link's own strict
parser and switches page.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from ui.live import connect, membership, student, wake
from ui.live.rules import Refused
from ui.live.store import StoreUnavailable
from ui.session import share

CLASS_PAGE = "class"
# How the instructor's screen looks is not the class's view: a projector's large type stays
# off the students' phones.
PERSONAL = "presenter"
WAITING_KEY = "class_waiting"  # walk.js's WAITING


def catch_up(pages: Sequence[st.Page], shown: st.Page) -> None:
    """A following student's lab takes the instructor's latest view and page."""
    me = membership.current()
    if me is None or me.teaching or not me.following:
        return
    try:
        follow = connect.store().poll(me.code, connect.browser_id()).glance.follow
    except (Refused, StoreUnavailable):
        return  # the class bar says what is wrong
    if follow.version <= me.applied:
        # Judged on the view this lab took only (a stale look says nothing of the student).
        if me.applied == follow.version and follow.page and follow.page != shown.url_path:
            _left()  # the student opened another page themselves
        return
    membership.update(applied=follow.version)
    page = follow.page
    if follow.query:
        link = share.parse(view_of(follow.query))
        share.apply(link, st.session_state)
    elif not follow.version:  # nothing published yet
        page = membership.WAITING_PAGE
        st.session_state["step"] = membership.WAITING_STEP
    target = next((p for p in pages if p.url_path == page), None)
    if target is not None and target.url_path != shown.url_path:
        st.switch_page(target)


@contextmanager
def in_stepper(page_path: str) -> Iterator[None]:
    """Around the Stepper's fragment: the instructor's step goes to the class at once; a
    following student's lab takes the instructor's newer step here, or reruns whole for
    anything more, and the fragment's end makes room for the next woken student (wake.py)."""
    me = membership.current()
    if me is not None and me.teaching:
        publish(page_path)
    if me is None or me.teaching or not me.following:
        yield
        return
    _take_step(me, page_path)
    with wake.woken_run():
        yield


def _take_step(me: membership.Membership, page_path: str) -> None:
    try:
        follow = (wake.latest(me.code) or connect.store().glance(me.code)).follow
    except (Refused, StoreUnavailable):
        return  # the class bar says what is wrong
    if follow.version > me.applied:
        step = instructors_step(follow.query)
        theirs = step_free(view_of(follow.query))
        if follow.page != page_path or theirs != own_view() or step is None:
            st.rerun()  # more than the step: the whole app catches up
        st.session_state["step"] = step
        membership.update(applied=follow.version)
    elif me.applied == follow.version and instructors_step(follow.query) not in (
        None,
        st.session_state["step"],
    ):
        # (Only against the view this lab took: the process's look at the store, wake.latest,
        # can be older than what catch_up just applied, and would read as a step left.)
        _left()  # the student pressed Next or Back themselves
        st.rerun(scope="app")  # the class bar, outside this fragment, says so
    wake.listen_step(membership.current().applied)


def led() -> bool:
    """Whether this lab follows an instructor now: a joined student's, until they stop."""
    me = membership.current()
    return me is not None and me.following and not me.teaching


def waiting_note() -> None:
    """Above a following student's steps while the instructor has not opened a page: why
    the lab stays here. In the fragment the class's first step reruns (in_stepper), so that
    step changes the student's page in one run, as every later step does."""
    me = membership.current()
    if led() and me.applied == 0:  # the class's waiting place (catch_up), nothing published
        # In a box of its own, which walk.js hides when it draws the class's first step from
        # the server's route (pages/stepper/feed.py), before this run comes to remove it.
        with st.container(key=WAITING_KEY):
            st.caption(
                "The instructor has not opened a page yet: your lab waits here at step "
                f"{membership.WAITING_STEP}."
            )


def controls_note() -> None:
    """In a following student's sidebar, where the menu and the controls go: whose they are,
    and the way to explore (here too: the class bar, when the store cannot be reached, has
    no button)."""
    with st.sidebar:
        st.caption("While you follow the class, the instructor chooses the page and the inputs.")
        st.button("Stop following to explore", key="live_unfollow_controls",
                  on_click=student.set_following, args=(False,))  # fmt: skip


def view_of(query: str) -> dict[str, str]:
    """The instructor's published view, blanks kept: an empty typed formula is part of the view
    (dropped, the instructor's cleared formula would leave the student's in place)."""
    return dict(parse_qsl(query, keep_blank_values=True))


def instructors_step(query: str) -> int | None:
    """The step of the instructor's published view, if it is one."""
    return share.parse({"step": view_of(query).get("step", "")}).values.get("step")


def step_free(view: dict[str, str]) -> str:
    """A view without its step and the personal look: two views with the same text differ in
    the step alone (then a following student's lab takes the step without a whole run)."""
    kept = {key: value for key, value in view.items() if key not in ("step", PERSONAL)}
    return urlencode(sorted(kept.items()))


def own_view() -> str:
    """This session's view as step_free writes it."""
    return step_free(share.encode(st.session_state.to_dict()))


def _left() -> None:
    """The following student moved away from the instructor's view: their lab stops following
    (so the next step does not pull it back unasked), and the class bar says so, with the way
    back."""
    membership.update(following=False, left=True)


def publish(page_path: str) -> None:
    """Send the instructor's view to the class if it changed (not while on the Class page)."""
    me = membership.current()
    if me is None or not me.teaching or page_path == CLASS_PAGE:
        return
    view = share.encode(st.session_state)
    view.pop(PERSONAL, None)
    query = urlencode(view)
    if f"{page_path}?{query}" == me.published:
        return
    try:
        connect.store().publish(me.code, me.secret, page_path, query)
    except Refused as err:
        st.sidebar.warning(str(err))
        membership.set_current(None)
        return
    except StoreUnavailable as err:
        st.sidebar.warning(connect.unavailable(err))
        return
    membership.update(published=f"{page_path}?{query}")


@st.fragment(run_every=1.0)
def _keep_publishing(page_path: str) -> None:
    me = membership.current()
    if me is None or not me.teaching:
        return
    publish(page_path)
    _class_note(me)


def _class_note(me: membership.Membership) -> None:
    st.caption(f"Class {me.shown_code}: students follow this view.")
    st.page_link("pages/teach/class.py", label="Class controls", icon=":material/groups:")


def bar(page_path: str) -> None:
    """The class's strip on every page: the student's bar, or the instructor's reminder."""
    me = membership.current()
    problem = st.session_state.get("live_problem")
    if problem:
        st.warning(problem, icon=":material/wifi_off:")
        st.button("Dismiss", key="live_dismiss", on_click=st.session_state.update,
                  kwargs={"live_problem": ""})  # fmt: skip
    if me is None:
        return
    if me.teaching:
        publish(page_path)
        if page_path != CLASS_PAGE:
            # In the main area: a projector in presenter mode shows no sidebar.
            st.page_link("pages/teach/class.py", label=f"Class {me.shown_code}: back to the "
                         "class controls", icon=":material/groups:")  # fmt: skip
        with st.sidebar:
            if page_path == wake.STEPPER:
                # Every fragment of the Stepper publishes as it runs (in_stepper): no timer
                # renders the projector's page again every second.
                _class_note(me)
            else:
                _keep_publishing(page_path)
    else:
        student.bar()
