"""Students follow the instructor: the instructor's view is published, students' labs catch up.

The instructor's page and view (the query string a share link would carry, ui/share.py) go to
the store whenever they change: on every full run, and from a small fragment that looks every
PUBLISH_S seconds (a page fragment's controls rerun only that fragment; the Stepper's fragment
publishes its step itself). Each student's watcher (student.py) looks at the store every
POLL_S seconds; when a newer view is there it reruns the whole app, whose first step
(catch_up) applies the view through the share link's own strict parser and switches page.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from ui.live import connect, membership, student
from ui.live.rules import Refused
from ui.live.store import StoreUnavailable
from ui.session import share

CLASS_PAGE = "class"
# How the instructor's screen looks is not the class's view: a projector's large type stays
# off the students' phones.
PERSONAL = "presenter"
# s between the instructor's looks at their own view: a control inside a page's fragment
# reruns only that fragment, so its change reaches the store then (the Stepper's fragment
# publishes at once). Not faster: the instructor's tab would never be still for a moment.
PUBLISH_S = 1.0


def catch_up(pages: Sequence[st.Page], shown: st.Page) -> None:
    """A following student's lab takes the instructor's latest view and page."""
    me = membership.current()
    if me is None or me.teaching or not me.following:
        return
    try:
        follow = connect.store().glance(me.code).follow
    except (Refused, StoreUnavailable):
        return  # the class bar says what is wrong
    if follow.version <= me.applied:
        return
    membership.update(applied=follow.version)
    if follow.query:
        names = [p.url_path for p in pages if p.url_path]
        link = share.parse(dict(parse_qsl(follow.query)), names)
        share.apply(link, st.session_state)
    target = next((p for p in pages if p.url_path == follow.page), None)
    if target is not None and target.url_path != shown.url_path:
        st.switch_page(target)


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


@st.fragment(run_every=PUBLISH_S)
def _keep_publishing(page_path: str) -> None:
    me = membership.current()
    if me is None or not me.teaching:
        return
    publish(page_path)
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
        with st.sidebar:
            _keep_publishing(page_path)
    else:
        student.class_bar()
