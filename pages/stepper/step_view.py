"""The Stepper's parts drawn by Streamlit: each step's forward line and local derivative
(typeset by the page's KaTeX, shown with the step the browser is on), and the last step's
why Σ dx = 0 and result (`result_panel`). "index" is the part of a batch on screen: () for a
vector or rows (every row is shown), (b, t) for one token of a (B, L, D) batch.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

import ln_core
from pages.stepper.formulas import BACKWARD, BACKWARD_NOTE, FORWARD, FORWARD_NOTE
from teaching.steps import N_STEPS, Step, step
from teaching.verdicts import rounding_agreement
from ui.draw.tables import numbers_table, vectors_frame
from ui.draw.verdict_metric import verdict_metric

__all__ = ["lines", "step_lines", "why_dx_sums_to_zero"]


# Each step's lines are drawn once per run, each part hidden but its step's: the session's
# step (a rule keyed to the page, written by each run), and once walk.js moves, the step the
# browser shows (walk.js sets every part's wrapper's own style, which wins over the rule).
# The rules hide Streamlit's wrapper of each part, which would otherwise keep its gap on the
# page.
_HIDDEN = (
    '[data-testid="stLayoutWrapper"]'
    ':has(> [class*="st-key-step_lines_"], > [class*="st-key-step_only_"])'
)


def _first(n: int) -> str:
    return ", ".join(
        f'html [data-testid="stLayoutWrapper"]:has(> .st-key-step_{kind}_{n})'
        for kind in ("lines", "only")
    )


def step_lines(number: int, answered: Callable[[int], bool], alone: bool = False) -> None:
    """Every step's forward line (and on the way back its local derivative), each shown only
    with its step (`number`: the session's step). Before a quiz question is `answered`, only
    the forward line shows: the notes and the local derivative would give its answer away
    (step 8's "just under 1", step 17's "· 1"). `alone`: step `number`'s lines only (a
    following student's tab, which the class redraws for every step: a phone renders its
    whole page again for each message of a step, and the twenty steps' lines were most of
    it)."""
    if alone:
        # Under its step's number, as every step's are: walk.js hides it when the class's
        # next step is drawn before the run that brings that step's lines (pages/stepper/feed.py).
        with st.container(key=f"step_lines_{number}"):
            lines(step(number), answered(number))
        return
    st.html(f"<style>{_HIDDEN} {{ display: none; }}\n{_first(number)} {{ display: flex; }}</style>")
    for n in range(1, N_STEPS + 1):
        with st.container(key=f"step_lines_{n}"):
            lines(step(n), answered(n))


def lines(current: Step, answered: bool) -> None:
    """The node's forward line and, on the way back, the local derivative used, side by side."""
    node = current.node
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("**Forward line**")
        st.latex(FORWARD[node])
        if node in FORWARD_NOTE and answered:
            st.caption(FORWARD_NOTE[node])
    if current.backward and answered:
        with right:
            st.markdown("**Local derivative used**")
            st.latex(BACKWARD[node])
            if node in BACKWARD_NOTE:
                st.caption(BACKWARD_NOTE[node])


def why_dx_sums_to_zero(
    result: ln_core.DxSum, dtype: str, hint: str, index: tuple[int, ...], jacobian_shown: bool
) -> None:
    """The last step: Σ dx for the vectors on screen (`result`), why it is 0, and (if the
    lesson shows that page) where the Jacobian page shows the same fact as J · 1 = 0."""
    st.markdown("**Why the entries of dx add up to 0**")
    st.markdown(
        "x reaches the loss through `x_sm` and through `sample_mean`. The `sample_mean` path "
        "hands every entry −(1/D) Σ `dx_sm`, which cancels the `x_sm` path's sum exactly. In "
        "words: moving every x_j by the same amount moves the mean by that amount and changes "
        "nothing after it, so the loss cannot change and the gradient has no component along "
        "(1, 1, …, 1)."
    )
    sums = vectors_frame(result.sums[index])
    sums.columns = ["Σ dx"]
    left, right = st.columns([2, 3], gap="large")
    with left:
        numbers_table(sums)
    verdict = rounding_agreement(
        "Σ dx over each vector against 0, next to Σ |dx| (the entries it adds)",
        result.judgement,
        dtype,
        hint,
    )
    verdict_metric("largest |Σ dx| / Σ |dx|", f"{result.relative:.1e}", verdict, right)
    if jacobian_shown:
        st.page_link(
            "pages/jacobian/jacobian.py",
            label="The same fact on the Jacobian page: J · 1 = 0 (a shift of x moves no output), "
            "so Σ dx = doutᵀ J 1 = 0",
            icon=":material/grid_on:",
        )
