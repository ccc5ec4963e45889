"""Stepper: the ten nodes forward, then their gradients backward, one step at a time."""

import streamlit as st

from ln_core.forward import NODE_NAMES
from ui import compute, state
from ui.errors import shown_errors
from ui.formulas import BACKWARD, BACKWARD_NOTE, FORWARD, FORWARD_NOTE, MERGES
from ui.graph import graph_dot
from ui.steps import N_STEPS, step
from ui.tables import vectors_frame

MAX_D = 64
s = st.session_state


def _go(delta: int) -> None:
    s["step"] = min(N_STEPS, max(1, s["step"] + delta))


def _shown(array):
    """The part of an array on screen: every row, or the chosen token of a (B, L, D) batch."""
    return array[s["view_b"], s["view_t"]] if array.ndim == 3 else array


def _table(array, caption: str) -> None:
    st.caption(caption)
    st.dataframe(vectors_frame(_shown(array)), width="stretch")


st.title("Stepper")
if s["x"].shape[-1] > MAX_D:
    st.error(
        f"The stepper shows every number of every node, which is readable up to D = {MAX_D}; "
        f"D is {s['x'].shape[-1]}. Lower D in the sidebar (the Jacobian page takes larger D)."
    )
    st.stop()

nav = st.columns([1, 1, 5, 3], vertical_alignment="bottom")
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
current = step(s["step"])

if s["x"].ndim == 3:
    pick = st.columns(4)
    pick[0].number_input("Batch element b", 0, s["x"].shape[0] - 1, **state.bound("view_b"))
    pick[1].number_input("Token t", 0, s["x"].shape[1] - 1, **state.bound("view_t"))

with shown_errors():
    inputs = state.inputs()
    cache, grads = compute.forward_backward(
        inputs.x, inputs.gamma, inputs.beta, inputs.dout, inputs.eps, inputs.dtype
    )
    node = current.node
    direction = "backward" if current.backward else "forward"
    st.subheader(f"Step {current.number} of {N_STEPS}: {direction}, node {current.index} ({node})")
    left, right = st.columns([2, 3], gap="large")
    with left:
        st.graphviz_chart(graph_dot(current, {n: getattr(cache, n).shape for n in NODE_NAMES}))
        st.caption("grey: not computed yet; blue: value known; orange: gradient known.")
    with right:
        st.latex(FORWARD[node])
        value = getattr(cache, node)
        if node in FORWARD_NOTE:
            st.caption(FORWARD_NOTE[node])
        if not current.backward:
            _table(value, f"{node}, shape {value.shape}")
        else:
            st.latex(BACKWARD[node])
            if node in BACKWARD_NOTE:
                st.info(BACKWARD_NOTE[node])
            if node in MERGES:
                columns = st.columns(3)
                for column, (label, field) in zip(columns, MERGES[node], strict=True):
                    with column:
                        _table(getattr(grads, field), label)
            _table(grads.of(node), f"d{node}, shape {grads.of(node).shape}")
            if node == "normalized_x":
                _table(grads.dgamma, "dgamma (summed over every row and token)")
            if node == "gx":
                _table(grads.dbeta, "dbeta (summed over every row and token)")
            with st.expander(f"{node} itself (forward value)"):
                _table(value, f"{node}, shape {value.shape}")

            st.markdown("**Check this step numerically**")
            st.caption(
                f"Move each entry of {node} by a tiny step h both ways, re-run only the nodes "
                "after it, and divide the change in the loss sum(dout * out) by 2h."
            )
            for checked in (node, "x") if node == "sample_mean" else (node,):
                result = compute.node_check(
                    inputs.x,
                    inputs.gamma,
                    inputs.beta,
                    inputs.dout,
                    inputs.eps,
                    inputs.dtype,
                    checked,
                )
                verdict = {"exact": "exact", "good": "close"}.get(result.verdict, result.verdict)
                metrics = st.columns(3)
                metrics[0].metric(f"d{checked}: verdict", verdict)
                metrics[1].metric("max |analytic - numerical|", f"{result.max_abs_diff:.2e}")
                metrics[2].metric("relative error", f"{result.rel_error:.2e}")
                if result.verdict in ("suspicious", "wrong"):
                    st.warning(
                        f"d{checked} differs from its numerical estimate more than rounding "
                        f"explains in {inputs.dtype}."
                    )
                with st.expander(f"Numerical d{checked}"):
                    _table(result.numerical, f"numerical d{checked}")
