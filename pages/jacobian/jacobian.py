"""Jacobian: J = dy/dx for one vector, its three paths, and the facts that follow from them."""

import numpy as np
import streamlit as st

from teaching.glossary import meaning
from teaching.inputs import Inputs
from teaching.jacobian_verdicts import jacobian_verdicts
from ui.draw.figures import eigenvalues
from ui.draw.matrix_view import draw_matrix, shared_limit
from ui.draw.opening import opening
from ui.draw.verdict_metric import verdict_lines, verdict_metric
from ui.lesson.predict import predict
from ui.server import caps, compute
from ui.session import share, state
from ui.session.errors import stops_on_error
from ui.session.picker import pick_vector

s = st.session_state

opening(
    "Jacobian",
    "Row i of J: how output $y_i$ moves as each input $x_j$ moves. Every input moves every output.",
)
caps.enforce("jacobian")


@st.fragment
def matrices(vector: Inputs, jacobian: np.ndarray) -> None:
    """J of `vector`, or its three paths: the toggle reruns only this part, and the facts below
    stay as they are."""
    # A rerun of this fragment alone skips the one around it: the toggle is part of the link.
    share.write_link()
    with stops_on_error():
        show_parts = st.toggle(
            "Show the three paths",
            help="J split into the path straight from x_j, the one through the mean and the "
            "one through the variance.",
            **state.bound("jacobian_paths"),
        )
        if show_parts:
            parts = compute.jacobian_parts(vector)
            panels = [
                ("direct", parts.direct),
                ("through the mean", parts.through_mean),
                ("through the variance", parts.through_variance),
                ("sum = J", parts.total),
            ]
            # One colour scale for the four panels, so a weak path looks weak.
            limit = shared_limit([matrix for _, matrix in panels])
            for column, (title, matrix) in zip(st.columns(4), panels, strict=True):
                with column:
                    draw_matrix(matrix, title, height=340, limit=limit)
            st.caption(
                f"One colour scale for all four, from -{limit:.3g} (blue) through 0 (white) to "
                f"+{limit:.3g} (red): the paler a panel, the less that path moves the outputs. "
                "Read across: the three paths add up, entry by entry, to J."
            )
        else:
            draw_matrix(jacobian, "J = dy/dx", height=280)
            st.caption("Read: red, y_i rises as x_j rises; blue, it falls.")


@st.fragment
def one_vector() -> None:
    """The vector picker reruns only this part (the inputs stay the same)."""
    with stops_on_error():
        inputs = state.inputs()
        index = pick_vector(inputs.x.shape)
        vector = inputs.vector(index)
        facts = compute.jacobian_facts(vector)
        verdicts = jacobian_verdicts(facts, inputs.eps, inputs.dtype)

        with st.container(key="main_figure"):
            verdict_lines(verdicts.overall)
            # It writes the link, which holds the chosen vector too.
            matrices(vector, facts.jacobian)
        with st.expander("More about J"):
            st.markdown(
                "$J_{ij} = \\partial y_i / \\partial x_j$. The backward pass never builds J: "
                "it computes $dx = dout\\,J$ directly. Seeing J shows why every input "
                "influences every output."
            )
            st.caption(f"x_hat (x̂): {meaning('normalized_x')}.")

        # The four facts are the verdict's evidence: one click away, like its reasoning.
        with st.expander("The four facts", icon=":material/rule:"):
            cols = st.columns(4)
            verdict_metric("max |J @ 1|", facts.ones_response, verdicts.ones, cols[0])
            verdict_metric("max |J @ x_hat|", facts.xhat_response, verdicts.xhat, cols[1])
            verdict_metric("max |J - J^T|", facts.symmetry_error, verdicts.symmetry, cols[2])
            verdict_metric("dout @ J vs backward's dx", facts.dx_error, verdicts.dx, cols[3])
            if not facts.gamma_uniform:
                st.caption(
                    "gamma is not uniform here, so J is not symmetric: row i is scaled by "
                    "gamma_i. Set every gamma to the same value on the Inputs page to see the "
                    "symmetric case."
                )

        st.header("Eigenvalues")
        if facts.predicted_eigenvalues is not None:
            st.caption(
                "With uniform gamma, J = (gamma/sigma) (I - 11^T/D - x_hat x_hat^T/D): D - 2 "
                "eigenvalues equal gamma/sigma, the ones vector gives 0, and x_hat gives "
                "gamma/sigma * eps/(var + eps), which is 0 when eps = 0. "
                f"Largest gap to the prediction: {facts.eigenvalue_error:.1e}."
            )
        st.plotly_chart(
            eigenvalues(facts.eigenvalues, facts.predicted_eigenvalues), width="stretch"
        )
        st.caption(
            "Read: each circle is one eigenvalue of J, smallest first. Look for the 0 at the left "
            "(a shift of x, the ones vector, moves nothing) and, with uniform gamma, D - 2 equal "
            "values gamma/sigma on the right; crosses mark the prediction when there is one."
        )

        st.header("Think it through")
        predict("gamma_doubling", vector)


one_vector()
