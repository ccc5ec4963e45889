"""Gradient check: analytic gradients against central differences, and how a check fails."""

import numpy as np
import pandas as pd
import streamlit as st

from ln_core.bugs import Bug
from ln_core.gradcheck import TOLERANCES
from teaching.verdicts import CANNOT_RESOLVE, FAIL, PASS, caught, gradient_verdict
from ui.draw.figures import error_vs_step
from ui.draw.matrix_view import draw_matrix
from ui.draw.tables import CHECK_COLUMNS, check_frame, numbers_table
from ui.draw.verdict_metric import verdict_metric
from ui.entry.errors import stops_on_error
from ui.entry.picker import pick_vector
from ui.lesson.glossary import glossary_expander
from ui.server import caps, compute
from ui.session import affine_control, share, state

s = st.session_state
EPS_SWEEP = (1e-5, 1e-3, 1e-1)  # a bug that involves eps only shows once eps is not negligible

st.title("Gradient check")
glossary_expander(("staged",), title="Words on this page")
st.markdown(
    "A central difference $\\frac{L(x + h) - L(x - h)}{2h}$ needs only the forward pass, so "
    "it is an independent witness for the backward pass. The loss is "
    "$L = \\sum dout \\odot y$, whose gradient is exactly what backward computes. "
    "The relative error is $\\max|a - n| / \\max(|a| + |n|)$ per tensor."
)
caps.enforce("gradcheck")

bars = " and ".join(f"{tol:g} in {np.dtype(d).name}" for d, (tol, _, _) in TOLERANCES.items())
st.caption(
    f"A tensor passes when its relative error is at most {bars} (float32 keeps about 7 digits, "
    "so its bar is lower), fails above that, and is reported as cannot resolve when its exact "
    "gradient is too small for central differences to tell apart at this step. In the tables, "
    "each entry's error is labelled tiny, small or large: not a verdict, but where a tensor's "
    "error comes from (an entry whose exact gradient is near 0 can show a large error in a "
    "tensor that passes)."
)
# Per sequence, a sequence is one group: the same bound as D per token.
MAX_GROUP = caps.CAPS["gradcheck"].max_d
affine_control.draw(MAX_GROUP)

with stops_on_error():
    inputs = affine_control.applied(state.inputs(), MAX_GROUP)
    check = compute.gradient_check(inputs)
    verdict = "passes" if check.passed else "FAILS"
    st.header(f"The staged backward {verdict} (step h = {check.h:.2e}, {inputs.dtype})")
    for tensor in check.unresolved:
        st.info(check.advice(tensor), icon=":material/blur_on:")
    cols = st.columns(3)
    for col, tensor in zip(cols, check.tensors, strict=False):
        error = check.errors["backward"][tensor]
        verdict = gradient_verdict(check, tensor)
        verdict_metric(f"{tensor}: {verdict.status}", f"{error:.1e}", verdict, col)
    tabs = st.tabs(list(check.tensors))
    for tab, tensor in zip(tabs, check.tensors, strict=True):
        with tab:
            frame = check_frame(
                getattr(check.analytic, tensor), getattr(check.numerical, tensor), check.dtype
            )
            st.dataframe(frame, width="stretch", height=400, column_config=CHECK_COLUMNS)


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


# The outcome of injecting a bug, in the words of a catch: the check failing is the good news.
OUTCOME = {PASS: "caught", FAIL: "missed", CANNOT_RESOLVE: "cannot tell"}
OUTCOME_ICON = {
    PASS: ":material/bug_report:",
    FAIL: ":material/visibility_off:",
    CANNOT_RESOLVE: ":material/help:",
}
NO_BUG = "none"


def break_the_backward(index: tuple[int, ...]) -> None:
    """A known bug injected into the backward, and whether the check catches it."""
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
        inputs = affine_control.applied(state.inputs(), MAX_GROUP)
        errors, tol = compute.bug_check(inputs, bug.value)
        verdict = caught(errors["dx"], tol, inputs.dtype)
        outcome = OUTCOME[verdict.status]
        cols = st.columns(2)
        cols[0].metric(
            "dx relative error",
            f"{errors['dx']:.1e}",
            help="The buggy backward's dx against central differences: the number the check "
            "judges.",
        )
        cols[1].metric("the check on this bug", outcome, help=verdict.help)
        cols[1].caption(f"{OUTCOME_ICON[verdict.status]} {outcome.capitalize()}: {verdict.reason}")
        if verdict.status == FAIL:
            st.warning(bug.caveat or "This bug hides at these inputs.")
        vector = inputs.vector(index)
        true_dx, buggy_dx = compute.bug_dx(vector, bug.value)
        st.caption(
            "dx entry by entry on the vector chosen above: the correct backward and the buggy one"
        )
        numbers_table(pd.DataFrame({"correct dx": true_dx, "buggy dx": buggy_dx}))
        st.caption("The same bug at other values of eps, on that vector:")
        # One vector, not the whole batch: each eps is a full gradient check of its own.
        rows = {
            f"eps = {eps:g}": compute.bug_check(vector.with_eps(eps), bug.value)[0]["dx"]
            for eps in EPS_SWEEP
        }
        st.dataframe(
            pd.DataFrame(
                {
                    "dx relative error": [f"{e:.1e}" for e in rows.values()],
                    "the check": ["caught" if e > tol else "missed" for e in rows.values()],
                },
                index=list(rows),
            ),
            width="stretch",
        )
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
    share.write_link()  # the chosen vector is part of the link


one_vector()
