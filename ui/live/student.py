"""A student's class bar: following on or off, the question asked, their vote, the reveal.

It is a fragment, woken by the process's watcher when the class moves on (ui/live/wake.py); the
rest of the page reruns only when the instructor's view changed (to catch up) or the student
switches following.
A student sees the question, their own vote and, once revealed, the answer and why, with the
class's votes per option (the instructor's chart); never anything another student entered
(a typed formula is shown to its student and the instructor only: ui/live/formulas.py), nor
the distribution before the reveal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import streamlit as st

from ui.live import asking, connect, formulas, membership, tally, wake
from ui.live.rules import CONFIDENCE, Refused
from ui.live.store import Asked, Poll, Question, StoreUnavailable
from ui.session import clicks

SAID = "live_vote_said"
DRAWN = "live_vote_drawn"  # the vote forms (radio keys) this session has drawn
# Set when following changes: the class bar, if it runs alone (a fragment), reruns the whole
# app first; a whole run (bar) has nothing left to do for it.
WHOLE_APP = "live_whole_app"
LOST_FORMS = "live_vote_lost"  # the forms whose choice came from a session that is gone
LOST = (
    "Your vote did not arrive: the lab's connection dropped while it was sent. "
    "Your choice is kept: press Vote again."
)
# s between a student's own looks at the class, a last resort should wake-ups stop (they bring
# the news within tenths of a second, and come again if one did not).
POLL_S = 30.0


def set_following(on: bool) -> None:
    """A student's lab follows the instructor again, or stops (a button's callback)."""
    # Rejoining shows the instructor's current view at once.
    applied = membership.NOTHING if on else membership.current().applied
    membership.update(following=on, applied=applied, left=False)
    # The sidebar's controls come back, or give way, outside this fragment (app.py).
    st.session_state[WHOLE_APP] = True


def _leave() -> None:
    membership.set_current(None)


def join_box() -> None:
    """On the Overview: a student types the code the instructor reads aloud (not only a link or
    a QR); an instructor finds the Class page."""
    me = membership.current()
    with st.container(border=True, key="live_join_box"):
        row = st.container(horizontal=True, vertical_alignment="bottom")
        if me is None:
            row.text_input("In a live class? Type its join code", key="live_join_code",
                           placeholder="ABCD-2345", max_chars=20, width=260)  # fmt: skip
            row.button("Join", key="live_join", on_click=_join_typed, icon=":material/login:")
        row.page_link("pages/teach/class.py", label="Teach with this lab",
                      icon=":material/co_present:")  # fmt: skip


def _join_typed() -> None:
    typed = st.session_state.get("live_join_code", "")
    if typed.strip():
        membership.join(typed)


def bar() -> None:
    """The class bar, drawn by a whole run of the app."""
    st.session_state.pop(WHOLE_APP, None)
    class_bar()


@st.fragment(run_every=POLL_S)
def class_bar() -> None:
    with wake.woken_run():
        _bar()


def _bar() -> None:
    me = membership.current()
    if me is None or me.teaching:
        return
    if st.session_state.pop(WHOLE_APP, False):
        st.rerun(scope="app")
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
            if me.following:  # nothing more to follow: the student's controls come back
                set_following(False)
                st.rerun(scope="app")
            st.info("The class has ended. Your lab stays as it is.")
            st.button("Leave the class", key="live_leave", on_click=_leave)
            return
        left, right = st.columns([3, 1], vertical_alignment="center")
        if me.following:
            left.caption(f"Class {me.shown_code} · your lab follows the instructor.")
            right.button("Stop following", key="live_unfollow", on_click=set_following,
                         args=(False,), width="stretch")  # fmt: skip
        else:
            left.caption(
                f"Class {me.shown_code} · you left the instructor's step: your lab is on its own."
                if me.left
                else f"Class {me.shown_code} · you are exploring on your own."
            )
            label = "Back to the instructor" if me.left else "Follow the instructor"
            right.button(label, key="live_follow", on_click=set_following,
                         args=(True,), type="primary", width="stretch")  # fmt: skip
        _question(me.code, poll)


@dataclass(frozen=True)
class Said:
    """What this tab was told about its own vote, and the question and round it was for: shown
    only under that round, dropped once the class moves on."""

    question: int
    round: int
    text: str


def _said(question: Question) -> str:
    """The message about this tab's vote in the question's current round, if any."""
    said = st.session_state.get(SAID)
    if said is None or (said.question, said.round) != (question.id, question.round):
        st.session_state[SAID] = None
        return ""
    return said.text


def _question(code: str, poll: Poll) -> None:
    question = poll.glance.question
    if question is None:
        st.session_state[SAID] = None
        return
    asked = question.asked
    typed = not asked.options  # a formula to type (ui/live/formulas.py), not a choice
    mine = poll.my_votes.get(question.round)
    sent = poll.my_formulas.get(question.round)
    said = _said(question)
    st.markdown(f"**{asking.shown(asked, asked.title)}.** {asking.shown(asked, asked.prompt)}")
    if said:
        st.warning(said, icon=":material/block:")
    if question.revealed:
        if typed:
            formulas.revealed(code, question, poll.histogram, sent)
        else:
            _revealed(question, poll, mine)
        return
    if sent is not None:
        formulas.sent(code, question, sent)
        return
    if mine is not None:
        counted = asking.shown(asked, asked.options[mine])
        st.success(f"Your vote is counted: {counted}. Wait for the instructor.")
        return
    if not question.round_open:
        st.info(f"{'Answers are' if typed else 'Voting is'} closed; wait for the instructor.")
        return
    if question.closes_at is not None:
        # As it stands when drawn; when it runs out, the bar is woken to say answers closed.
        left = max(1, round(question.closes_at - time.time()))
        st.caption(f"The instructor closes answers in {left} s: answer before then.")
    if question.round > 1:
        again = "send your formula again" if typed else "vote again"
        st.caption(f"Discuss with your neighbours, then {again}.")
    if typed:
        formulas.box(code, question, _tell)
        return
    key = f"live_choice_{question.id}_{question.round}"
    drawn = st.session_state.setdefault(DRAWN, set())
    lost = st.session_state.setdefault(LOST_FORMS, set())
    choice = st.radio("Your answer", asked.options, index=None, key=key, horizontal=True,
                      format_func=lambda option: asking.shown(asked, option))  # fmt: skip
    if choice is not None and key not in drawn and not said:
        # A choice this session never drew came with the browser from a session that is gone
        # (its server process stopped): a Vote pressed there did not reach the class. Said
        # until the vote is in: the browser's reconnection brings more runs than one.
        lost.add(key)
    if key in lost and not said:
        st.warning(LOST, icon=":material/wifi_off:")
    drawn.add(key)
    st.radio(
        "How sure are you? (optional)",
        CONFIDENCE,
        index=None,
        horizontal=True,
        key=f"live_sure_{question.id}_{question.round}",
    )
    # The bar's timer can deliver this click twice (ui/session/clicks.py); the run of the first
    # delivery draws no Vote button, so the second finds this drawing already acted on.
    vote = clicks.once(f"live_vote_{question.id}_{question.round}", _vote, code, question.id,
                       question.round, asked, key)  # fmt: skip
    st.button("Vote", **vote, type="primary", disabled=choice is None)


def _revealed(question: Question, poll: Poll, mine: int | None) -> None:
    asked = question.asked
    if poll.split:
        st.plotly_chart(tally.chart(asked, poll.split, height=240), key="live_class_chart",
                        config={"displayModeBar": False})  # fmt: skip
    if asked.answer is None:
        chose = "" if mine is None else f"You chose {asking.shown(asked, asked.options[mine])}. "
        st.info(f"{chose}This question has no one right answer: the class's votes are above.")
        return
    answer = asking.shown(asked, asked.options[asked.answer])
    if mine is None:
        st.info(f"The answer: {answer}. {asked.explanation}")
    elif mine == asked.answer:
        st.success(f"Right: {answer}. {asked.explanation}")
    else:
        chose = asking.shown(asked, asked.options[mine])
        st.error(f"You chose {chose}; the answer is {answer}. {asked.explanation}")


def _tell(question: Question, text: str) -> None:
    """Keep what this tab was told about its own answer to the question's current round."""
    st.session_state[SAID] = Said(question.id, question.round, text) if text else None


def _vote(code: str, question_id: int, round_no: int, asked: Asked, key: str) -> None:
    picked = st.session_state.get(key)
    choice = asking.shown(asked, str(picked))
    text = ""
    sure = st.session_state.get(f"live_sure_{question_id}_{round_no}")
    try:
        option = asked.options.index(picked)
        confidence = CONFIDENCE.index(sure) if sure in CONFIDENCE else None
        connect.store().vote(code, connect.browser_id(), question_id, round_no, option, confidence)
    except ValueError:
        text = "Choose one of the answers first."
    except Refused as err:
        text = f"Your click on Vote ({choice}) was refused: {err}"
        if "already voted" in str(err):
            text = (
                f"Your click on Vote ({choice}) in this tab was refused: this browser had "
                "already voted in this round, in another tab. The vote counted is below."
            )
    except StoreUnavailable as err:
        text = f"Your vote ({choice}) was not counted. {connect.unavailable(err)}"
    st.session_state[SAID] = Said(question_id, round_no, text) if text else None
