"""Predict, then reveal: a question whose answer (and whatever it guards) appears after a guess."""

from __future__ import annotations

import streamlit as st

from teaching.inputs import Inputs
from teaching.quiz import PAGE_QUESTIONS, STEP_QUESTIONS, Vector
from ui.server import compute


def _reveal(key: int | str) -> None:
    st.session_state["revealed"] = st.session_state["revealed"] | {key}


def predict(key: int | str, vector: Inputs) -> bool:
    """Ask the question `key` names about `vector` (one vector, x: (D,)) until its Reveal button
    is clicked, then show the verdict and why.

    `key` is a Stepper step's number (STEP_QUESTIONS) or a page question's name
    (PAGE_QUESTIONS), and names the question in the shared `revealed` set too. Returns True once
    revealed, so the caller draws the answer's numbers.
    """
    made = STEP_QUESTIONS[key] if isinstance(key, int) else PAGE_QUESTIONS[key]
    question = made(Vector(*compute.forward_backward(vector)))
    s = st.session_state
    guess_key = f"guess_{key}"
    if key not in s["revealed"]:
        st.markdown(f"**{question.prompt}**")
        # The question in bold above names what the choices answer: the radio's own label is
        # for a screen reader only, so the choices sit right under the question.
        st.radio(
            "Your prediction",
            question.options,
            index=None,
            key=guess_key,
            horizontal=True,
            label_visibility="collapsed",
        )
        st.button(
            "Reveal",
            key=f"reveal_{key}",
            on_click=_reveal,
            args=(key,),
            disabled=s.get(guess_key) is None,
            type="primary",
        )
        return False
    guess = s.get(guess_key)
    # The outcome first, the reasoning one click away beside it (issue 36): the answer takes
    # one row of the page, not a paragraph.
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        if question.undecided:
            # Round-off cannot tell these options apart here: none of them is marked wrong.
            fits = ", ".join(question.fits)
            verdict = f"these inputs cannot decide between {fits}: {question.undecided}"
            if guess is None or guess in question.fits:
                st.info(f"Cannot decide: {verdict}")
            else:
                st.error(f"Not quite: {guess} does not fit, and {verdict}")
        elif guess == question.answer:
            st.success(f"Right: {question.answer}.")
        elif guess is None:
            # The guess was a page widget, forgotten when another page was shown.
            st.info(f"The answer: {question.answer}.")
        else:
            st.error(f"Not quite: the answer is {question.answer}.")
        with st.popover("Why"):
            st.markdown(question.explanation)
    return True
