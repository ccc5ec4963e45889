"""Stepper: the ten nodes forward, then their gradients backward, one step at a time.

One screen per step: the heading and the controls, the graph with the current node lit beside
its value or gradient and the one-line verdict of its check, then its line and local
derivative; what a careful student opens next (every vector, the check's numbers, the
glossary, the notebook) is one click away. The twenty steps are computed once for the inputs
and stepped through in the browser (pages/stepper/).
"""

from functools import partial

import streamlit as st

from ln_core.defined_nodes import BEFORE_THE_ROOT
from ln_core.forward import NODE_NAMES
from pages.stepper import browser, step_view, walk
from pages.stepper.result_panel import result_panel
from teaching.inputs import Inputs
from teaching.steps import N_STEPS, step
from teaching.verdicts import resolving_inputs
from ui.draw.glossary import glossary_expander
from ui.export.notebook import View
from ui.export.notebook_download import notebook_expander
from ui.lesson.predict import predict
from ui.live import follow, membership
from ui.server import caps, compute
from ui.session import affine_control, presenter, share, state
from ui.session.errors import shown_errors
from ui.session.picker import chosen_vector, pick_vector

s = st.session_state
# The names the Stepper's glossary explains: its nodes, its inputs and the words its lines use.
GLOSSARY = (
    *NODE_NAMES,
    "x",
    "gamma",
    "beta",
    "eps",
    "dout",
    "keepdims",
    "broadcast",
    "staged",
)

# The page's h1 and its idea; on a projector they step out of sight for the step's heading.
with st.container(key="stepper_title"):
    st.title("Stepper")
    st.caption(
        "Ten nodes forward, then each node's gradient on the way back. Watch the lit node: its "
        "line, its numbers, its check."
    )
caps.enforce("stepper")


@st.fragment
def stepper() -> None:
    """The twenty steps. The browser steps through them alone; this part reruns for its own
    controls, a quiz answer, an instructor's move to publish, and in a live class for the
    students who follow (ui/live/wake.py; when only the step moved, only the walk's fragment,
    browser.followed)."""
    browser.adopt()
    # One box for the whole step: the page's layout (walk.css) places the browser's parts and
    # the step's lines in it (walk.js keeps the step's head in view as the page scrolls).
    with follow.in_stepper("stepper"), st.container(key="stepper_page"):
        one_step()


def one_step() -> None:
    # A rerun of the fragment alone skips app.py, which writes the link on full runs.
    view = share.write_link()
    presenter.keyboard()
    with shown_errors():
        layer = state.inputs()
        inputs = affine_control.applied(layer)
        # The screen's order: the step (drawn last, once the vector is chosen) with its quiz
        # question, then one row of what a student changes or opens next (the quiz's switch,
        # the layer's options and the vector, folded: the step's numbers name the vector; the
        # notebook; the glossary), and the keys a clicker sends under it.
        essentials = st.container(key="step_essentials")
        switches = st.container(
            key="step_switches", horizontal=True, vertical_alignment="center", gap="small"
        )
        with switches:
            if follow.led():
                # The quiz, the layer and the vector are the instructor's view while a
                # student follows (as the sidebar's inputs are: app.py).
                index = chosen_vector(inputs.x.shape)
            else:
                st.toggle(
                    "Predict before reveal",
                    help="Each step first asks a question you can reason out from the steps "
                    "before it; its numbers appear after your guess.",
                    **state.bound("quiz"),
                )
                with (
                    st.popover("Layer and vector", icon=":material/tune:"),
                    st.container(key="step_options"),
                ):
                    affine_control.draw()
                    index = pick_vector(inputs.x.shape)
            notebook_expander(
                "jupyter_stepper",
                lambda: View(inputs, s["preset"], share.current_link(view=view)),
            )
            glossary_expander(GLOSSARY)
        st.caption(presenter.KEYS_NOTE)
        with essentials:
            undefined = the_walk(inputs, index)
            if undefined is not None:
                undefined_output(undefined)


def the_walk(inputs: Inputs, index: tuple[int, ...]) -> ValueError | None:
    """The twenty steps for the browser and each step's lines; returns the error of inputs
    without a defined output (their steps from sqrt_sve on are shown locked)."""
    quiz = s["quiz"]
    locked = {
        n: "Predict first: answer this step's question, then Reveal shows its numbers."
        for n in range(1, N_STEPS + 1)
        if quiz and n not in s["revealed"]
    }
    me = membership.current()
    version = "|".join(
        str(part) for part in (inputs.digest, index, quiz, sorted(s["revealed"]), s["presenter"])
    )
    data = {
        "version": version,
        # An instructor's move is published at once, a following student's is judged at once
        # against the instructor's step (ui/live/follow.py), a quiz question is asked by Python.
        "sync": quiz or (me is not None and (me.teaching or me.following)),
        "presenter": s["presenter"],
        "drawings": walk.drawings(),
        "nodes": list(NODE_NAMES),
        "vector": walk.vector_name(index),
        "shown_entries": walk.SHOWN_ENTRIES,
    }
    try:
        cache, grads = compute.forward_backward(inputs)
    except ValueError as err:
        nodes = compute.nodes_before_the_root(inputs)
        browser.draw(
            {
                **data,
                "steps": walk.before_the_root(nodes, index, undefined_reason(err)),
                "hover": {},
            },
            lambda alone: step_view.step_lines(s["step"], lambda n: True, alone),
        )
        return err
    index = group_index(cache.axis, index)
    # Every node's check, of the vector on screen: a check moves each entry both ways, so
    # checking the whole batch for all twenty steps at the page's cap would take seconds.
    checked = inputs.vector(index) if len(index) == inputs.x.ndim - 1 else inputs.group(index)
    checks = {node: compute.node_check(checked, node) for node in (*NODE_NAMES, "x")}
    numbers = walk.Numbers(
        cache, grads, checks, index, inputs.dtype, resolving_inputs(cache, inputs.dout)
    )
    browser.draw(
        {**data, "steps": walk.steps(numbers, locked), "hover": walk.hover(numbers)},
        partial(step_parts, inputs, index, locked),
    )
    return None


def step_parts(inputs: Inputs, index: tuple[int, ...], locked: dict[int, str], alone: bool) -> None:
    """What Streamlit draws of the steps beside the walk: every step's lines (each shown with
    its step), the quiz's question and the last step's result; `alone`: the session's step's
    only (a following student's, redrawn with each of the class's steps)."""
    step_view.step_lines(s["step"], lambda n: n not in locked, alone)
    ask(inputs, index)
    if not alone or s["step"] == N_STEPS:
        last_step(inputs, index)


def ask(inputs: Inputs, index: tuple[int, ...]) -> None:
    """The quiz's question for the session's step (the browser sends each move here while
    the quiz is on). Questions are about one vector (the token on screen, or the first row)
    as the layer computes it with the chosen affine option."""
    if not s["quiz"]:
        return
    asked = inputs.affine_as_numbers().vector(index or (0,) * (inputs.x.ndim - 1))
    # A question walk.css places beside the graph under the step's note (the room a locked
    # step leaves there) instead of under the step's lines; once revealed, the step's numbers
    # fill that room and its answer follows the lines, which stay where the step put them.
    answered = s["step"] in s["revealed"]
    with st.container(key="step_answer" if answered else "step_question"):
        predict(s["step"], asked)


def group_index(axis: tuple[int, ...], index: tuple[int, ...]) -> tuple[int, ...]:
    """The vector on screen as the layer groups it: per sequence, the chosen sequence (all
    its tokens) is one group."""
    return index[:1] if len(axis) == 2 else index


def last_step(inputs: Inputs, index: tuple[int, ...]) -> None:
    """Shown with step 20 only: why Σ dx = 0 and the whole result beside the closed form."""
    cache, grads = compute.forward_backward(inputs)
    hint = resolving_inputs(cache, inputs.dout)
    # Every row of a batch of rows, as the tables one click away show them.
    index = group_index(cache.axis, () if inputs.x.ndim == 2 else index)
    with st.container(key=f"step_only_{N_STEPS}"):
        with st.expander("The result, dx, dgamma and dbeta, and why Σ dx = 0", expanded=False):
            step_view.why_dx_sums_to_zero(
                compute.dx_sum(inputs), inputs.dtype, hint, index, "jacobian" not in s["hidden"]
            )
            _, judgements = compute.closed_form(inputs)
            result_panel(grads, judgements, inputs.dtype, hint, index)


def undefined_reason(err: ValueError) -> str:
    """Why the steps from sqrt_sve on are not shown, said once (in the sidebar when it is on
    screen)."""
    sidebar_shown = "controls" not in s["hidden"] and (not s["presenter"] or s["presenter_sidebar"])
    if sidebar_shown:
        return (
            "This step is not defined for these inputs: the message under eps in the sidebar "
            "says why."
        )
    return str(err)


def undefined_output(err: ValueError) -> None:
    """Inputs without a defined output (a constant vector and eps = 0): steps 1 to 5 are still
    defined and shown; the reason is said once (in the sidebar when it is on screen)."""
    current = step(s["step"])
    sidebar_shown = "controls" not in s["hidden"] and (not s["presenter"] or s["presenter_sidebar"])
    defined = not current.backward and current.node in BEFORE_THE_ROOT
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
