"""A student's class bar: following on or off, the question asked, their vote, the reveal.

Two fragments, so that a hundred students looking at the class twice a second cost little. The
watcher looks every POLL_S seconds and draws nothing: a look that finds nothing new (nearly
every look) is one small query, shared by the students of a process. When the instructor's view
moved on and the student follows, it reruns the whole app, whose first step (follow.catch_up)
takes that view; when the class's question moved on (asked, a new round, revealed, the class
ended) it reruns the app too, so the bar shows it. The bar is a fragment without a timer:
following on and off and the vote rerun only the bar. A student sees the question, their own
vote and, once revealed, the answer and why; never anything another student entered (there is
no free text), nor the distribution.
"""

from __future__ import annotations

import streamlit as st

from ui.live import connect, membership
from ui.live.rules import Refused
from ui.live.store import Poll, Stage, StoreUnavailable

# s between a student's looks at the class. A step the instructor moves shows within POLL_S +
# GLANCE_S + the catch-up run (the Stepper publishes at once; other views within
# follow.PUBLISH_S). Each look costs the server about 4 ms however little it does (Streamlit's
# own work per run): 100 students at 0.5 s are 200 looks and most of a core every second.
POLL_S = 0.5
# s a glance at a class is shared by the students of one process (Store.glance): their
# watchers look many times a second between them, and the class changes a few times a minute.
GLANCE_S = 0.1
UNAVAILABLE, GONE = "unavailable", "gone"  # what the bar shows instead of a stage


def class_bar() -> None:
    """The bar, and the watcher that keeps it (and a following lab) up to date."""
    _bar()
    # In the sidebar: in the main area even an empty fragment adds a gap to the page.
    with st.sidebar:
        _watch()


def _set_following(on: bool) -> None:
    # Rejoining shows the instructor's current view at once: the whole app runs.
    membership.update(following=on, applied=0 if on else membership.current().applied)
    if on:
        st.rerun()


def _leave() -> None:
    membership.set_current(None)


def _out_of_date(seen: Stage | str, shown: Stage | str) -> bool:
    if isinstance(seen, Stage) and isinstance(shown, Stage):
        # Stages only move forward, and a shared glance may be older than the bar's own look.
        return seen > shown
    return seen != shown


@st.fragment(run_every=POLL_S)
def _watch() -> None:
    me = membership.current()
    if me is None or me.teaching:
        return
    try:
        glance = connect.store().glance(me.code, max_age=GLANCE_S)
    except StoreUnavailable:
        seen: Stage | str = UNAVAILABLE
    except Refused:
        seen = GONE
    else:
        seen = glance.stage
        if me.following and glance.follow.version > me.applied:
            st.rerun()  # the whole app catches up (follow.catch_up)
    if _out_of_date(seen, me.shown):
        st.rerun()


@st.fragment
def _bar() -> None:
    me = membership.current()
    if me is None or me.teaching:
        return
    try:
        poll = connect.store().poll(me.code, connect.browser_id())
    except StoreUnavailable as err:
        membership.update(shown=UNAVAILABLE)
        st.warning(connect.unavailable(err), icon=":material/wifi_off:")
        return
    except Refused as err:
        membership.update(shown=GONE)
        st.info(f"{err} Your lab works on its own.")
        st.button("Leave the class", key="live_leave", on_click=_leave)
        return
    membership.update(shown=poll.stage)
    with st.container(border=True, key="live_bar"):
        if poll.ended:
            st.info("The class has ended. Your lab stays as it is.")
            st.button("Leave the class", key="live_leave", on_click=_leave)
            return
        left, right = st.columns([3, 1], vertical_alignment="center")
        if me.following:
            left.caption(f"Class {me.shown_code} · your lab follows the instructor.")
            right.button("Stop following", key="live_unfollow", on_click=_set_following,
                         args=(False,), width="stretch")  # fmt: skip
        else:
            left.caption(f"Class {me.shown_code} · you are exploring on your own.")
            right.button("Follow the instructor", key="live_follow", on_click=_set_following,
                         args=(True,), type="primary", width="stretch")  # fmt: skip
        _question(me.code, poll)


def _question(code: str, poll: Poll) -> None:
    question = poll.question
    if question is None:
        return
    asked = question.asked
    mine = poll.my_votes.get(question.round)
    st.markdown(f"**{asked.title}.** {asked.prompt}")
    if question.revealed:
        answer = asked.options[asked.answer]
        if mine is None:
            st.info(f"The answer: {answer}. {asked.explanation}")
        elif mine == asked.answer:
            st.success(f"Right: {answer}. {asked.explanation}")
        else:
            st.error(
                f"You chose {asked.options[mine]}; the answer is {answer}. {asked.explanation}"
            )
        return
    if mine is not None:
        st.success(f"Your vote is counted: {asked.options[mine]}. Wait for the instructor.")
        return
    if not question.round_open:
        st.info("Voting is closed; wait for the instructor.")
        return
    if question.round > 1:
        st.caption("Discuss with your neighbours, then vote again.")
    key = f"live_choice_{question.id}_{question.round}"
    choice = st.radio("Your answer", asked.options, index=None, key=key, horizontal=True)
    st.button("Vote", key=f"live_vote_{question.id}_{question.round}", type="primary",
              disabled=choice is None, on_click=_vote,
              args=(code, question.id, question.round, asked.options, key))  # fmt: skip
    problem = st.session_state.pop("live_vote_problem", "")
    if problem:
        st.error(problem)


def _vote(code: str, question_id: int, round_no: int, options: tuple[str, ...], key: str) -> None:
    choice = st.session_state.get(key)
    try:
        option = options.index(choice)
        connect.store().vote(code, connect.browser_id(), question_id, round_no, option)
    except ValueError:
        st.session_state["live_vote_problem"] = "Choose one of the answers first."
    except Refused as err:
        st.session_state["live_vote_problem"] = str(err)
    except StoreUnavailable as err:
        st.session_state["live_vote_problem"] = (
            f"Your vote was not counted. {connect.unavailable(err)}"
        )
