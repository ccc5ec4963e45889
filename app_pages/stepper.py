"""Stepper: the ten nodes forward, then their gradients backward, one step at a time."""

import streamlit as st

from ln_core.forward import NODE_NAMES
from teaching.quiz import Question, dominance_question, sign_question
from ui import caps, compute, graph, presenter, state
from ui.errors import stops_on_error
from ui.formulas import BACKWARD, BACKWARD_NOTE, FORWARD, FORWARD_NOTE, MERGES
from ui.inputs import Inputs
from ui.picker import pick_vector
from ui.steps import N_STEPS, step
from ui.tables import contributions_frame, vectors_frame

s = st.session_state


def _go(delta: int) -> None:
    s["step"] = min(N_STEPS, max(1, s["step"] + delta))


def _shown(array):
    """The part of an array on screen: every row, or the chosen token of a (B, L, D) batch."""
    return array[shown] if array.ndim == 3 else array


def _table(array, caption: str) -> None:
    st.caption(caption)
    st.dataframe(vectors_frame(_shown(array)), width="stretch")


def _check(inputs: Inputs, node: str) -> None:
    """The numerical check of one node's gradient, as three metrics and the numbers."""
    result = compute.node_check(inputs, node)
    verdict = {"exact": "exact", "good": "close"}.get(result.verdict, result.verdict)
    metrics = st.columns(3)
    metrics[0].metric(f"d{node}: analytic vs numerical", verdict)
    metrics[1].metric("max |difference|", f"{result.max_abs_diff:.2e}")
    metrics[2].metric("relative error", f"{result.rel_error:.2e}")
    if result.verdict in ("suspicious", "wrong"):
        st.warning(
            f"d{node} differs from its numerical estimate by more than rounding explains in "
            f"{inputs.dtype}."
        )
    _table(result.numerical, f"numerical d{node} (step h scaled to each entry)")


def _first(array) -> float:
    """The first entry of the part of an array on screen."""
    return float(_shown(array).reshape(-1)[0])


def _question(grads, node: str) -> Question:
    if node in MERGES:
        (label_a, field_a), (label_b, field_b), (_, total) = MERGES[node]
        return dominance_question(
            total,
            (label_a, _first(getattr(grads, field_a))),
            (label_b, _first(getattr(grads, field_b))),
        )
    gradient = grads.of(node)
    return sign_question(f"d{node}", _first(gradient), float(abs(gradient).max()))


def _reveal() -> None:
    s["revealed"] = s["revealed"] | {s["step"]}


def _ask(question: Question) -> None:
    """Predict, then reveal: the answer and the numbers appear only after a guess."""
    key = f"guess_{s['step']}"
    if s["step"] not in s["revealed"]:
        st.markdown(f"**{question.prompt}**")
        st.radio("Your prediction", question.options, index=None, key=key, horizontal=True)
        st.button("Reveal", on_click=_reveal, disabled=s.get(key) is None, type="primary")
        return
    guess = s.get(key)
    if guess == question.answer:
        st.success(f"Right: {question.answer}. {question.explanation}")
    else:
        st.error(f"Not quite: the answer is {question.answer}. {question.explanation}")


caps.enforce("stepper")

current = step(s["step"])
direction = "backward" if current.backward else "forward"
st.subheader(
    f"Step {current.number} of {N_STEPS} · {direction} · node {current.index}: "
    f"{'d' if current.backward else ''}{current.node}"
    + (" and dx" if current.backward and current.index == 1 else "")
)
nav = st.container(key="stepper_nav").columns([1, 1, 4, 3], vertical_alignment="bottom")
nav[0].button(
    "Prev",
    on_click=_go,
    args=(-1,),
    disabled=s["step"] == 1,
    width="stretch",
    icon=":material/arrow_back:",
)
nav[1].button(
    "Next",
    on_click=_go,
    args=(1,),
    disabled=s["step"] == N_STEPS,
    width="stretch",
    icon=":material/arrow_forward:",
    type="primary",
)
nav[2].slider("Step", 1, N_STEPS, **state.bound("step", widget="slider"))
nav[3].selectbox(
    "Jump to",
    list(range(1, N_STEPS + 1)),
    format_func=lambda n: step(n).label,
    **state.bound("step", widget="jump"),
)
presenter.keyboard()

st.toggle(
    "Predict before reveal",
    help="On backward steps, guess the sign of a gradient (or which path dominates) first.",
    **state.bound("quiz"),
)

with stops_on_error():
    inputs = state.inputs()
    cache, grads = compute.forward_backward(inputs)
    node = current.node
    graph.draw(current, {n: getattr(cache, n).shape for n in NODE_NAMES})
    shown = pick_vector(s["x"].shape, rows=False)

    value = getattr(cache, node)
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("**Forward line**")
        st.latex(FORWARD[node])
        if node in FORWARD_NOTE:
            st.caption(FORWARD_NOTE[node])
    if current.backward:
        with right:
            st.markdown("**Local derivative used**")
            st.latex(BACKWARD[node])
            if node in BACKWARD_NOTE:
                st.caption(BACKWARD_NOTE[node])

    if not current.backward:
        _table(value, f"{node}: shape {value.shape} (keepdims)")
    elif s["quiz"] and current.number not in s["revealed"]:
        _ask(_question(grads, node))
    else:
        if s["quiz"]:
            _ask(_question(grads, node))
        if node in MERGES:
            st.caption("Both contributions and their sum, vector by vector")
            parts = [(label, _shown(getattr(grads, field))) for label, field in MERGES[node]]
            st.dataframe(contributions_frame(parts), width="stretch")
        _table(grads.of(node), f"d{node}: shape {grads.of(node).shape}")
        if node == "normalized_x":
            _table(grads.dgamma, "dgamma: summed over every vector")
        if node == "gx":
            _table(grads.dbeta, "dbeta: summed over every vector")
        with st.expander(f"{node} itself (its forward value)"):
            _table(value, f"{node}: shape {value.shape}")

    if current.backward and (not s["quiz"] or current.number in s["revealed"]):
        # In presenter mode the check folds away: one idea per screen, the node itself first.
        check = st.expander("Check this step numerically", expanded=not s["presenter"])
        with check:
            st.caption(
                f"Each entry of {node} is moved by a small step h both ways, only the nodes "
                "after it are re-run, and the change in the loss sum(dout * out) is divided "
                "by 2h."
            )
            for checked in (node, "x") if node == "sample_mean" else (node,):
                _check(inputs, checked)
