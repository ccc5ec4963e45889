"""Stepper: the ten nodes forward, then their gradients backward, one step at a time.

Reads as the lesson: what it teaches, the controls (step, quiz, vector), the step's result,
then how it was computed and its numerical check; the last step ends with dx, dgamma, dbeta.
"""

import streamlit as st

import ln_core
from ln_core.defined_nodes import BEFORE_THE_ROOT
from ln_core.forward import NODE_NAMES
from teaching.quiz import STEP_QUESTIONS, Vector
from teaching.steps import N_STEPS, Step
from teaching.verdicts import resolving_inputs
from ui.draw import step_view
from ui.draw.result_panel import result_panel
from ui.entry.errors import shown_errors
from ui.entry.inputs import Inputs
from ui.export.notebook import View
from ui.export.notebook_download import notebook_expander
from ui.lesson.glossary import glossary_expander
from ui.lesson.predict import predict
from ui.live import follow
from ui.server import caps, compute
from ui.session import affine_control, presenter, share, state, step_nav
from ui.session.picker import pick_vector

s = st.session_state

# The page's h1; on a projector it steps out of sight for the step's own heading.
st.container(key="stepper_title").title("Stepper")
caps.enforce("stepper")
# On a projector the step itself opens the screen; the introduction waits below it.
introduction = st.container() if not s["presenter"] else None


@st.fragment
def stepper() -> None:
    """One step. Its controls rerun only this part of the page, not the sidebar; in a live
    class the instructor's Next reruns it for the students who follow (ui/live/wake.py)."""
    with follow.in_stepper("stepper"):
        one_step()


def one_step() -> None:
    # A rerun of the fragment alone skips app.py, which writes the link on full runs. The
    # widgets below change the state only through callbacks, which run before this: the view
    # stays the same through the run, for the notebooks' link too.
    view = share.write_link()
    current = step_nav.navigation()
    presenter.keyboard()
    # An error ends this step only: the guide at the foot of the page stays.
    with shown_errors():
        layer = state.inputs()
        inputs = affine_control.applied(layer)
        try:
            cache, grads = compute.forward_backward(inputs)
        except ValueError as err:
            undefined_output(current, inputs, err)
            return
        # On a 1024 x 768 projector one screen holds the step: the current node's part of the
        # graph beside its line and its value, the switches below. Elsewhere the whole graph
        # comes straight after the navigation, then the switches, then the step.
        if s["presenter"]:
            graph_area, step_area = st.container(key="presenter_step").columns([2, 3], gap="medium")
            settings, after = st.container(), st.container()
        else:
            graph_area, settings = st.container(), st.container()
            step_area = after = st.container()
        with graph_area:
            step_view.graph(current, cache, focused=s["presenter"])
        with settings:
            st.caption(presenter.KEYS_NOTE)
            st.toggle(
                "Predict before reveal",
                help="Each step first asks a question you can reason out from the steps before "
                "it; its numbers appear after your guess.",
                **state.bound("quiz"),
            )
            affine_control.draw()
            index = pick_vector(inputs.x.shape, rows=False)
        with step_area:
            answered = not s["quiz"] or current.number in s["revealed"]
            # On a projector the line, the local derivative and the value stand beside the graph.
            step_view.lines(
                current, cache, answered, (step_area, step_area) if s["presenter"] else None
            )
            # Questions are about one vector (the token on screen, or the first row) as the
            # layer computes it with the chosen affine option; they name gamma and beta, so a
            # skipped one is asked about as the ones or zeros that change nothing.
            asked = inputs.affine_as_numbers().vector(index or (0,) * (inputs.x.ndim - 1))
            question = STEP_QUESTIONS[current.number]
            revealed = not s["quiz"] or predict(
                question(Vector(*compute.forward_backward(asked))), current.number
            )
            if len(cache.axis) == 2:
                index = index[:1]  # per sequence: the chosen sequence, all its tokens, is one group
            if revealed:
                if current.backward:
                    step_view.gradient(current, cache, grads, index)
                else:
                    step_view.node_value(current, cache, index)
        with after:
            if revealed:
                revealed_checks(current, inputs, cache, grads, index)
            notebook_expander(
                "jupyter_stepper",
                lambda: View(inputs, s["preset"], share.current_link(view=view)),
            )


def revealed_checks(
    current: Step,
    inputs: Inputs,
    cache: ln_core.Cache,
    grads: ln_core.StagedGrads,
    index: tuple[int, ...],
) -> None:
    """After the step's value: its numerical check, and on the last step why Σ dx = 0 and the
    whole result beside the closed form (`cache`, `grads`: the pass of `inputs`, as computed
    above; a second cache read would copy them again)."""
    hint = resolving_inputs(cache, inputs.dout)
    if current.backward:
        # In presenter mode the check folds away: one idea per screen, the node first.
        checks = {node: compute.node_check(inputs, node) for node in current.checked}
        step_view.numerical_check(current, checks, inputs.dtype, hint, index, folded=s["presenter"])
    if current.number == N_STEPS:
        jacobian_shown = "jacobian" not in s["hidden"]
        step_view.why_dx_sums_to_zero(
            compute.dx_sum(inputs), inputs.dtype, hint, index, jacobian_shown
        )
        _, judgements = compute.closed_form(inputs)
        result_panel(grads, judgements, inputs.dtype, hint, index)


def undefined_output(current: Step, inputs: Inputs, err: ValueError) -> None:
    """Inputs without a defined output (a constant vector and eps = 0): steps 1 to 5 are still
    defined and shown; the reason is said once (in the sidebar when it is on screen)."""
    sidebar_shown = "controls" not in s["hidden"] and (not s["presenter"] or s["presenter_sidebar"])
    defined = not current.backward and current.node in BEFORE_THE_ROOT
    if defined:
        step_view.before_the_root(current, compute.nodes_before_the_root(inputs))
    if sidebar_shown:
        st.info(
            (
                "These steps are defined; from step 6 (sqrt_sve) on they are not"
                if defined
                else "This step is not defined for these inputs"
            )
            + ": the message under eps in the sidebar says why.",
            icon=":material/info:",
        )
    else:
        st.error(str(err), icon=":material/error:")


stepper()
with introduction or st.container():
    st.caption(
        "LayerNorm one small line at a time: ten nodes forward, then each node's gradient on the "
        "way back, with the local derivative it uses and a numerical check of every gradient."
    )
    glossary_expander(
        (*NODE_NAMES, "x", "gamma", "beta", "eps", "dout", "keepdims", "broadcast", "staged")
    )
