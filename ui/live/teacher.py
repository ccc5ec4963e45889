"""The Class page: start a class, show how to join, ask, count, reveal, vote again, end.

Only this browser holds the class's secret (in its session and a cookie), and every action
here sends it; the store refuses any action without it. While a round is open the page shows
how many answered and for how long, never which answers: the distribution appears only on
reveal, when the discussion is over.
"""

from __future__ import annotations

import time

import streamlit as st

from ui.export.download import download
from ui.live import asking, connect, membership, tally
from ui.live.rules import ROUNDS, Refused
from ui.live.store import MAX_CLASS, Asked, Status, StoreUnavailable
from ui.session import address, class_link, clicks

REFRESH_S = 1.0


def join_link(code: str, where: address.Address) -> str:
    return f"{where.base}/?{membership.JOIN_PARAM}={code}"


def _start() -> None:
    try:
        store = connect.store(fresh=True)
        store.purge(connect.retention_s())
        started = store.start_class()
    except StoreUnavailable as err:
        st.session_state["live_problem"] = connect.unavailable(err)
        return
    membership.set_current(membership.Membership(started.code, started.secret))


def _act(action: str, *args: int) -> None:
    """One instructor action on the store; a refusal is kept to show on the next run."""
    me = membership.current()
    store = connect.store()
    try:
        if action == "ask":
            title = st.session_state.get("live_ask")
            maker = asking.choices().get(title)
            if maker is None:
                raise Refused("Choose a question to ask first.")
            store.ask(me.code, me.secret, asking.asked(title, maker))
        elif action == "reveal":
            store.reveal(me.code, me.secret, *args)
        elif action == "again":
            store.vote_again(me.code, me.secret, *args)
        elif action == "size":
            expected = st.session_state.get("live_expected") or None
            store.size(me.code, me.secret, expected, bool(st.session_state.get("live_capped")))
        elif action == "end":
            store.end(me.code, me.secret)
            membership.set_current(None)
    except Refused as err:
        st.session_state["live_problem"] = str(err)
    except StoreUnavailable as err:
        st.session_state["live_problem"] = connect.unavailable(err)


def page() -> None:
    me = membership.current()
    if me is None or not me.teaching:
        _welcome(me)
        return
    where = address.current()
    link = join_link(me.code, where)
    left, right = st.columns([3, 2])
    with left:
        st.markdown(f"### Join code: `{me.shown_code}`")
        st.markdown("Open the link or scan the code; no names, no accounts.")
        st.code(link, language=None, wrap_lines=True)
        st.caption(
            "Your students' labs follow your inputs, page and step while you teach; each of "
            "them can stop following and rejoin. Keep this browser: it alone steers the class."
        )
    with right:
        st.html(class_link.qr_image(link, f"QR code of the join link, class {me.shown_code}"))
        st.caption("Scan to join")
    if where.warning:
        st.warning(where.warning, icon=":material/lan:")
    try:
        status = connect.store().status(me.code, me.secret)
    except (Refused, StoreUnavailable):
        status = None  # the counts below say what is wrong
    _size_controls(status)
    _ask_controls()
    asking_now = status is not None and status.question is not None
    if asking_now:
        _question(status.question.asked)
    _counts(me.code, me.secret)
    if asking_now:
        _round(status)
    st.button(
        "End the class", **clicks.once("live_end", _act, "end"), icon=":material/stop_circle:",
        help=f"Students keep their labs; the class's votes are deleted "
        f"{connect.retention_s() / 3600:g} h after it ends.",
    )  # fmt: skip


def _welcome(me: membership.Membership | None) -> None:
    st.markdown(
        "Run a live class: your students join from their own screens with a link or a QR "
        "code, their labs follow your steps, and they answer the lab's questions: everyone "
        "votes, you reveal the answers when the discussion is over, and they vote again."
    )
    if me is not None:
        st.info(f"This browser is in class {me.shown_code} as a student.")
    st.button(
        "Start a class",
        **clicks.once("live_start", _start),
        type="primary",
        icon=":material/groups:",
    )


# Only the counts and the results file (a download sends no click) here: this fragment's timer
# can deliver a click twice, so the buttons live outside it (ui/session/clicks.py).
@st.fragment(run_every=REFRESH_S)
def _counts(code: str, secret: str) -> None:
    try:
        status = connect.store().status(code, secret)
        results = tally.results_csv(connect.store().results(code, secret))
    except Refused as err:
        st.warning(str(err))
        return
    except StoreUnavailable as err:
        st.error(connect.unavailable(err))
        return
    box = st.container(border=True)
    cols = box.columns(3)
    expected = f" of {status.expected}" if status.expected else ""
    cols[0].metric("Students joined", f"{status.members}{expected}")
    question = status.question
    if question is not None:
        answered = sum(status.counts.get(question.round, ()))
        elapsed = int(time.time() - question.opened_at)
        cols[1].metric(f"Answered, round {question.round}", f"{answered} of {status.members}")
        cols[2].metric("Time", f"{elapsed // 60}:{elapsed % 60:02d}")
    if status.expected and status.members > status.expected:
        box.warning(
            f"{status.members} browsers joined, {status.expected} students expected: someone may "
            "have joined from several browsers (each can vote). Class size can admit no more.",
            icon=":material/group_off:",
        )
    # The file itself, not a function writing it on click: this part reruns every second and a
    # class keeps the server busy, and a file written on click is one no run holds (see
    # ui/export/download.py). Unchanged counts give the same file, so a click between two
    # refreshes still finds it.
    download(box, "Download the results (CSV)", results,
             f"class_{code}_results.csv", "text/csv", "download")  # fmt: skip


def _size_controls(status: Status | None) -> None:
    """The class size the instructor expects, and whether more browsers are refused."""
    if status is not None:
        st.session_state.setdefault("live_expected", status.expected or 0)
        st.session_state.setdefault("live_capped", status.capped)
    with st.popover("Class size", icon=":material/group_add:"):
        st.number_input("Students expected (0: not said)", min_value=0, max_value=MAX_CLASS,
                        step=1, key="live_expected", on_change=_act, args=("size",))  # fmt: skip
        st.toggle("Admit no more browsers than that", key="live_capped",
                  on_change=_act, args=("size",))  # fmt: skip


def _ask_controls() -> None:
    with st.container(border=True):
        options = list(asking.choices())
        st.selectbox("Ask the class", options, key="live_ask")
        st.button(
            "Ask",
            **clicks.once("live_ask_now", _act, "ask"),
            type="primary",
            icon=":material/quiz:",
        )


def _question(asked: Asked) -> None:
    st.markdown(f"#### {asked.title}\n\n{asked.prompt}")
    st.markdown("\n".join(f"- {option}" for option in asked.options))


def _round(status: Status) -> None:
    """The current round's buttons and, once revealed, its answers."""
    question = status.question
    asked = question.asked
    round_id = (question.id, question.round)
    buttons = st.container(horizontal=True)
    if not question.revealed:
        buttons.button(
            "Reveal",
            **clicks.once("live_reveal", _act, "reveal", *round_id),
            type="primary",
            icon=":material/visibility:",
        )
    if question.round < ROUNDS:
        buttons.button(
            "Discuss and vote again",
            **clicks.once("live_again", _act, "again", *round_id),
            icon=":material/forum:",
        )
    if question.revealed:
        st.plotly_chart(tally.chart(asked, status.counts), key="live_chart")
        st.success(f"The answer: {asked.options[asked.answer]}. {asked.explanation}")
        st.caption(tally.moved(status.counts, asked.answer))
