"""The Class page: start a class, show how to join, ask, count, close voting (now or after a
countdown), reveal, vote again, end.

Only this browser holds the class's secret (in its session and a cookie), and every action
here sends it; the store refuses any action without it. While a round is open the page shows
how many answered and for how long, never which answers: the distribution appears only on
reveal, when the discussion is over.
"""

from __future__ import annotations

import time

import streamlit as st

from ui.export.download import download
from ui.live import asking, connect, formulas, membership, tally
from ui.live.rules import (
    MAX_OWN_OPTION,
    MAX_OWN_OPTIONS,
    MAX_OWN_PROMPT,
    MAX_OWN_TITLE,
    ROUNDS,
    Refused,
)
from ui.live.store import MAX_CLASS, Asked, Question, Status, StoreUnavailable, Sureness
from ui.session import address, class_link, clicks

REFRESH_S = 1.0
COUNTDOWNS = {0: "Close now", 30: "Close in 30 s", 60: "Close in 60 s"}  # s -> button


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
            target = formulas.choices().get(title)
            if target is not None:
                prompt, derivation = formulas.derivation(target)
                store.ask_derivation(me.code, me.secret, title, prompt, derivation)
            elif maker is None:
                raise Refused("Choose a question to ask first.")
            else:
                store.ask(me.code, me.secret, asking.asked(title, maker))
        elif action == "own":
            s = st.session_state
            options = [s.get(f"live_own_{n}", "") for n in range(MAX_OWN_OPTIONS)]
            typed = asking.own(s.get("live_own_title", ""), s.get("live_own_prompt", ""),
                               options, s.get("live_own_right"))  # fmt: skip
            store.ask(me.code, me.secret, typed)
        elif action == "redo":
            store.ask(me.code, me.secret, formulas.redo_question(me.code, me.secret))
        elif action == "close":
            store.close_voting(me.code, me.secret, *args)
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
    """One projector screen, presenter mode at 1024x768, no sidebar: the heading and the way to
    the lab; while students join, the code, link and QR; then the question beside the count and
    timer; the round's buttons; once revealed, the chart beside the answer."""
    me = membership.current()
    if me is None or not me.teaching:
        _welcome(me)
        return
    try:
        status = connect.store().status(me.code, me.secret)
    except (Refused, StoreUnavailable):
        status = None  # the counts below say what is wrong
    question = None if status is None else status.question
    _heading(me, question is not None)
    if question is None:
        _joining(me)
    else:
        typed = not question.asked.options  # a typed formula (ui/live/formulas.py)
        left, right = st.columns([3, 2], gap="medium")
        with left:
            _question(question.asked)
            if typed:
                formulas.instructor(me.code, me.secret, question)
            elif question.revealed:
                st.plotly_chart(tally.chart(question.asked, status.split), key="live_chart",
                                config={"displayModeBar": False})  # fmt: skip
        with right:
            _counts(me.code, me.secret)
            if question.revealed and typed:
                if formulas.common_slip(me.code, me.secret, question, status.histogram):
                    st.button("Ask the room to redo it", **clicks.once("live_redo", _act, "redo"),
                              icon=":material/how_to_vote:")  # fmt: skip
            if question.revealed and not typed:
                asked = question.asked
                # How the room moved first: the answer's explanation can run long in this
                # column, and the projector's screen ends at 768 px.
                st.caption(tally.moved(status.counts, asked.answer))
                if asked.answer is not None:
                    right = asking.shown(asked, asked.options[asked.answer])
                    st.success(f"The answer: {right}. {asked.explanation}")
                # Last: the chart shows the same split (this is it in words), and before the
                # answer it pushed the answer below the projector's 768 px.
                _sure(question, status.split)
    _controls(status)


def _sure(question: Question, split: Sureness) -> None:
    """How sure the last round's voters were, per option (only those who said so), in words:
    the chart's split for a reader who cannot see its colours."""
    if question.round in split:
        names = [asking.shown(question.asked, option) for option in question.asked.options]
        said = tally.sure(split[question.round], names)
        if said:
            st.caption(f"How sure, round {question.round}: {said}")


def _heading(me: membership.Membership, asking: bool) -> None:
    """The page's heading, with the code to read aloud once the join code's own block is gone,
    the way to the lab and back (students follow the instructor there), and End, which asks
    first."""
    row = st.container(horizontal=True, vertical_alignment="center", key="live_heading")
    row.markdown(f"## Live class `{me.shown_code}`" if asking else "## Live class")
    row.page_link("pages/stepper/stepper.py", label="Teach on the Stepper",
                  icon=":material/footprint:")  # fmt: skip
    with row.popover("End the class", icon=":material/stop_circle:"):
        st.markdown(
            f"End class {me.shown_code}? Students keep their labs and can no longer vote; the "
            f"class's votes are deleted {connect.retention_s() / 3600:g} h after it ends. "
            "Download the results first if you want them."
        )
        st.button("Yes, end the class", **clicks.once("live_end", _act, "end"), type="primary")


def _joining(me: membership.Membership) -> None:
    """How to join, large: before the first question, the screen is the join code and its QR."""
    where = address.current()
    link = join_link(me.code, where)
    left, right = st.columns([3, 2])
    with left:
        st.markdown(f"### Join code: `{me.shown_code}`")
        st.markdown(
            "Scan the code, open the link, or type the code on the lab's Overview page; no "
            "names, no accounts."
        )
        st.code(link, language=None, wrap_lines=True)
        st.caption(
            "Students' labs follow your inputs, page and step; each can stop following and "
            "come back. Keep this browser: it alone steers the class."
        )
    with right:
        st.html(class_link.qr_image(link, f"QR code of the join link, class {me.shown_code}"))
        _counts(me.code, me.secret)
    if where.warning:
        st.warning(where.warning, icon=":material/lan:")


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
    found = connect.shown(
        lambda: (
            connect.store().status(code, secret),
            tally.results_csv(connect.store().results(code, secret)),
        )
    )
    if found is None:
        return
    status, results = found
    box = st.container(border=True)
    row = box.container(horizontal=True, gap="medium")
    expected = f" of {status.expected}" if status.expected else ""
    row.metric("Students joined", f"{status.members}{expected}", width="content")
    question = status.question
    if question is not None:
        answered = sum(status.counts.get(question.round, ())) + sum(
            status.histogram.get(question.round, {}).values()
        )
        row.metric(f"Answered, round {question.round}", f"{answered} of {status.members}",
                   width="content")  # fmt: skip
        row.metric(*_clock(question), width="content")
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


def _clock(question: Question) -> tuple[str, str]:
    """The round's clock: the time since it opened, the countdown to its close, or closed."""
    now = time.time()
    if question.closes_at is not None and not question.revealed:
        if not question.round_open:
            return "Voting", "closed"
        return "Closes in", _minutes(question.closes_at - now)
    return "Time", _minutes(now - question.opened_at)


def _minutes(seconds: float) -> str:
    whole = max(0, int(seconds + 0.5))
    return f"{whole // 60}:{whole % 60:02d}"


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


def _controls(status: Status | None) -> None:
    """One row: the round's buttons, then what to ask next, and the class size."""
    question = None if status is None else status.question
    row = st.container(horizontal=True, vertical_alignment="bottom", key="live_controls")
    with row:
        if question is not None:
            _round_buttons(question)
        options = [*asking.choices(), *formulas.choices()]
        st.selectbox("Ask the class", options, key="live_ask", width=300)
        st.button(
            "Ask" if question is None else "Next question",
            **clicks.once("live_ask_now", _act, "ask"),
            type="primary" if question is None or question.revealed else "secondary",
            icon=":material/quiz:",
        )
        _own_form()
        _size_controls(status)


def _own_form() -> None:
    """The instructor's own multiple-choice question, asked like the lab's; its text is shown
    to the class exactly as typed."""
    with st.popover("Your own question", icon=":material/edit:"):
        st.text_input("Title", key="live_own_title", max_chars=MAX_OWN_TITLE)
        st.text_input("Question", key="live_own_prompt", max_chars=MAX_OWN_PROMPT)
        for n in range(MAX_OWN_OPTIONS):
            st.text_input(f"Choice {n + 1}" + ("" if n < 2 else " (optional)"),
                          key=f"live_own_{n}", max_chars=MAX_OWN_OPTION)  # fmt: skip
        st.selectbox("Right answer", [None, *range(MAX_OWN_OPTIONS)], key="live_own_right",
                     format_func=lambda n: "none (an opinion poll)" if n is None
                     else f"choice {n + 1}")  # fmt: skip
        st.button("Ask your question", **clicks.once("live_own_ask", _act, "own"),
                  type="primary")  # fmt: skip


def _question(asked: Asked) -> None:
    st.markdown(f"#### {asking.shown(asked, asked.title)}\n\n{asking.shown(asked, asked.prompt)}")
    if asked.options:
        st.markdown("\n".join(f"- {asking.shown(asked, option)}" for option in asked.options))


def _round_buttons(question: Question) -> None:
    """The current round's buttons: Reveal while it is hidden, Vote again while a round is left."""
    round_id = (question.id, question.round)
    if question.round_open and question.closes_at is None:
        with st.popover("Close voting", icon=":material/timer_off:"):
            st.caption("Votes after the close are refused; the answer stays hidden.")
            for after_s, label in COUNTDOWNS.items():
                st.button(label, **clicks.once(f"live_close_{after_s}", _act, "close",
                                               *round_id, after_s))  # fmt: skip
    if not question.revealed:
        st.button(
            "Reveal",
            **clicks.once("live_reveal", _act, "reveal", *round_id),
            type="primary",
            icon=":material/visibility:",
        )
    if question.round < ROUNDS:
        st.button(
            "Discuss and vote again",
            **clicks.once("live_again", _act, "again", *round_id),
            icon=":material/forum:",
        )
