"""Stepper: the ten nodes forward, then their gradients backward, one step at a time.

Reads as the lesson: what it teaches, the controls (step, quiz, vector), the step's result,
then how it was computed and its numerical check; the last step ends with dx, dgamma, dbeta.
"""

import streamlit as st

from ln_core.forward import NODE_NAMES
from teaching.quiz import STEP_QUESTIONS, Vector
from ui import affine_control, caps, compute, presenter, share, state, step_view
from ui.errors import stops_on_error
from ui.glossary import glossary_expander
from ui.picker import pick_vector
from ui.predict import predict
from ui.result_panel import result_panel
from ui.steps import N_STEPS

s = st.session_state

st.caption(
    "LayerNorm one small line at a time: ten nodes forward, then each node's gradient on the "
    "way back, with the local derivative it uses and a numerical check of every gradient."
)
glossary_expander((*NODE_NAMES, "x", "gamma", "beta", "eps", "dout"))
caps.enforce("stepper")


@st.fragment
def stepper() -> None:
    """One step. Its controls rerun only this part of the page, not the sidebar."""
    # A rerun of this fragment alone skips app.py, which writes the link on full runs.
    share.write_link()
    current = step_view.navigation()
    presenter.keyboard()
    with stops_on_error():
        layer = state.inputs()
        inputs = affine_control.applied(layer)
        cache, grads = compute.forward_backward(inputs)
        # The graph comes straight after the navigation: on a 1024 x 768 projector it is what
        # the room sees first; the switches below it change what it shows.
        step_view.graph(current, cache)
        st.toggle(
            "Predict before reveal",
            help="Each step first asks a question you can reason out from the steps before it; "
            "its numbers appear after your guess.",
            **state.bound("quiz"),
        )
        affine_control.draw()
        index = pick_vector(inputs.x.shape, rows=False)
        answered = not s["quiz"] or current.number in s["revealed"]
        step_view.lines(current, cache, answered)

        # Questions are about one vector of the full layer (they ask about gamma and beta):
        # the token on screen, or the first row.
        asked = index or (0,) * (inputs.x.ndim - 1)
        revealed = not s["quiz"] or predict(
            STEP_QUESTIONS[current.number](Vector(*compute.forward_backward(layer.vector(asked)))),
            current.number,
        )
        if len(cache.axis) == 2:
            index = index[:1]  # per sequence: the chosen sequence, all its tokens, is one group
        if not revealed:
            return
        if current.backward:
            step_view.gradient(current, cache, grads, index)
            # In presenter mode the check folds away: one idea per screen, the node first.
            step_view.numerical_check(current, inputs, index, folded=s["presenter"])
        else:
            step_view.node_value(current, cache, index)
        if current.number == N_STEPS:
            step_view.why_dx_sums_to_zero(inputs, index)
            result_panel(inputs, index)


stepper()
