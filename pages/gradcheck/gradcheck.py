"""Gradient check: analytic gradients against central differences, and how a check fails."""

import streamlit as st

from ln_core.bugs import CAUGHT, Bug
from teaching.verdicts import (
    RULE,
    caught,
    check_headline,
    gradient_verdict,
    number,
    precision_lesson,
    resolving_inputs,
)
from ui.draw.figures import error_vs_step
from ui.draw.glossary import glossary_list
from ui.draw.matrix_view import draw_matrix
from ui.draw.opening import opening
from ui.draw.tables import CHECK_COLUMNS, bug_across_eps_table, bug_table, check_table
from ui.draw.verdict_metric import verdict_metric
from ui.server import caps, compute
from ui.session import affine_control, share, state
from ui.session.errors import stops_on_error
from ui.session.picker import pick_vector

s = st.session_state
EPS_SWEEP = (1e-5, 1e-3, 1e-1)  # a bug that involves eps only shows once eps is not negligible

opening(
    "Gradient check",
    "Is the backward pass right? Each gradient is checked against central differences "
    "$\\frac{L(x + h) - L(x - h)}{2h}$.",
)
caps.enforce("gradcheck")
MAX_GROUP = affine_control.PAGES["gradcheck"]
# The result comes first on the screen; its options and how the check works follow it.
result = st.container()
with st.expander("How the check works"):
    st.markdown(
        "A central difference is an independent witness for the backward pass. The loss is "
        "$L = \\sum dout \\odot y$, whose gradient is exactly what backward computes. The "
        "relative error is $\\max|a - n| / \\max(|a| + |n|)$ per tensor."
    )
    st.caption(
        f"{RULE} In the tables, each entry's relative error is labelled tiny, small or large: "
        "not a verdict, but where a tensor's error comes from (an entry whose exact gradient is "
        "near 0 can show a large relative error in a tensor that passes)."
    )
    glossary_list(("staged",))
affine_control.draw(MAX_GROUP)

with result, stops_on_error():
    inputs = affine_control.applied(state.inputs(), MAX_GROUP)
    check = compute.gradient_check(inputs)
    hint = resolving_inputs(compute.forward(inputs), inputs.dout)
    verdicts = {tensor: gradient_verdict(check, tensor, hint) for tensor in check.tensors}
    with st.container(key="main_figure"):
        st.header(
            check_headline(check),
            help=f"Step h = {number(check.h)}, in {inputs.dtype}; central differences need "
            "only the forward pass.",
        )
        # What would resolve it, where it shows at once (the reasoning stays under the metric).
        for tensor in check.unresolved:
            st.info(f"{tensor}: {verdicts[tensor].headline}", icon=":material/blur_on:")
        cols = st.columns(3)
        for col, tensor in zip(cols, check.tensors, strict=False):
            error = check.errors["backward"][tensor]
            verdict = verdicts[tensor]
            verdict_metric(f"{tensor}: {verdict.status}", error, verdict, col)
    if check.working is not check.numerical:
        st.caption(precision_lesson(check))
    tabs = st.tabs(list(check.tensors))
    for tab, tensor in zip(tabs, check.tensors, strict=True):
        with tab:
            table = check_table(
                getattr(check.analytic, tensor), getattr(check.numerical, tensor), check.dtype
            )
            st.dataframe(table, width="stretch", height=400, column_config=CHECK_COLUMNS)


def step_sweep(index: tuple[int, ...]) -> None:
    """The check's error against the step h, for the vector at `index`."""
    with stops_on_error():
        st.header("Error against the step h")
        st.caption(
            "Too large an h and the difference quotient bends with the curve (truncation error, "
            "falling like h^2); too small and x + h and x - h differ only in their last digits "
            "(round-off, growing like 1/h). Computed for one vector, in both dtypes."
        )
        sweep = compute.step_sweep(state.inputs("float64").vector(index))
        st.plotly_chart(error_vs_step(sweep), width="stretch")
        st.caption(
            "Read: each curve is a V. Its bottom is the best step for that dtype; the dashed line "
            "is the step the check uses, which should sit near the bottom. float64 (blue "
            "circles) reaches far smaller errors than float32 (orange squares)."
        )


NO_BUG = "none"


@st.fragment
def break_the_backward(index: tuple[int, ...]) -> None:
    """A known bug injected into the backward, and whether the check catches it. Choosing a bug
    reruns only this part: the vector, and the step plot above, stay as they are."""
    # A rerun of this fragment alone skips the one around it: the bug is part of the link, as
    # is the vector (the picker's callback has stored it before either runs).
    share.write_link()
    st.header("Break the backward")
    st.caption(
        "Each choice is a mistake students really make: the check should fail such a backward "
        "(the bug is caught) and must not pass it (missed)."
    )
    with stops_on_error():
        choice = st.selectbox(
            "Known bug",
            [NO_BUG, *(b.value for b in Bug)],
            format_func=lambda b: (
                "none: the correct backward" if b == NO_BUG else b.replace("_", " ")
            ),
            **state.bound("bug"),
        )
        if choice == NO_BUG:
            st.caption("Choose a bug to inject; without one the backward above is the correct one.")
            return
        bug = Bug(choice)
        st.info(bug.description)
        # One vector, as in the table below: each eps is a full gradient check of its own.
        vector = affine_control.applied(state.inputs(), MAX_GROUP).vector(index)
        result = compute.bug_check(vector, bug.value)
        verdict = caught(result, vector.dtype)
        cols = st.columns(2)
        cols[0].metric(
            "buggy dx relative error",
            number(result.judgement.relative),
            help="The buggy backward's dx against central differences, on the vector chosen "
            f"above: the gap the check judges. Value: {result.judgement.relative!r}.",
        )
        verdict_metric("caught by the check", verdict.status, verdict, cols[1])
        if result.outcome != CAUGHT:
            st.warning(bug.caveat or "This bug hides at these inputs.")
        st.caption("The buggy dx beside the true one and central differences, on this vector:")
        st.dataframe(bug_table(result), width="stretch")
        st.caption("The same bug at other values of eps, on the same vector and by the same rule:")
        across = compute.bug_across_eps(vector, bug.value, EPS_SWEEP)
        st.dataframe(bug_across_eps_table(EPS_SWEEP, across), width="stretch", hide_index=False)
        gap = compute.bug_jacobian_gap(vector, bug.value)
        draw_matrix(gap, "analytic J minus numerical J: where the bug lives")


@st.fragment
def one_vector() -> None:
    """The vector picker and the bug selector rerun only this part (the inputs stay the same)."""
    st.header("One vector, closer")
    st.caption("The step plot and the bug's Jacobian below use this vector.")
    index = pick_vector(s["x"].shape)
    step_sweep(index)
    break_the_backward(index)


one_vector()
