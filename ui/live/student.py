"""A student's class bar: following on or off, the question asked, their vote, the reveal.

It is a fragment, woken by the process's watcher when the class moves on (ui/live/wake.py); the
rest of the page reruns only when the instructor's view changed (to catch up) or the student
switches following.
A student sees the question, their own vote and, once revealed, the answer and why; never
anything another student entered (there is no free text), nor the class's distribution.
"""

from __future__ import annotations

import streamlit as st

from ui.live import connect, membership, wake
from ui.live.rules import Refused
from ui.live.store import Poll, StoreUnavailable
from ui.session import clicks

# s between a student's own looks at the class, a last resort should wake-ups stop (they bring
# the news within tenths of a second, and come again if one did not).
POLL_S = 30.0


def _set_following(on: bool) -> None:
    # Rejoining shows the instructor's current view at once.
    membership.update(following=on, applied=0 if on else membership.current().applied)


def _leave() -> None:
    membership.set_current(None)


@st.fragment(run_every=POLL_S)
def class_bar() -> None:
    with wake.woken_run():
        _bar()


def _bar() -> None:
    me = membership.current()
    if me is None or me.teaching:
        return
    try:
        poll = connect.store().poll(me.code, connect.browser_id())
    except StoreUnavailable as err:
        st.warning(connect.unavailable(err), icon=":material/wifi_off:")
        return
    except Refused as err:
        st.info(f"{err} Your lab works on its own.")
        st.button("Leave the class", key="live_leave", on_click=_leave)
        return
    glance = poll.glance
    if me.following and glance.follow.version > me.applied:
        st.rerun()  # the whole app catches up (follow.catch_up)
    wake.listen_bar(me.code, me.following, me.applied, glance)
    with st.container(border=True, key="live_bar"):
        if glance.ended:
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
    question = poll.glance.question
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
    # The bar's timer can deliver this click twice (ui/session/clicks.py); the run of the first
    # delivery draws no Vote button, so the second finds this drawing already acted on.
    vote = clicks.once(f"live_vote_{question.id}_{question.round}", _vote, code, question.id,
                       question.round, asked.options, key)  # fmt: skip
    st.button("Vote", **vote, type="primary", disabled=choice is None)
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
