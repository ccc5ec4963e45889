"""The parts of one stepper step: the graph, the node's lines, its numbers, its check.

Each part draws itself from the Step and the numbers it is given (the navigation row that picks
the Step reads the session: ui/session/step_nav.py); pages/lab/stepper.py puts them in the order
of a lesson. "index" is the part of a batch on screen: () for a vector or rows (every row is
shown), (b, t) for one token of a (B, L, D) batch.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import ln_core
from ln_core.forward import NODE_NAMES
from ln_core.verdict import FAIL
from teaching.glossary import meaning
from teaching.steps import Step
from teaching.verdicts import numerical_agreement, rounding_agreement
from ui.draw.formulas import BACKWARD, BACKWARD_NOTE, FORWARD, FORWARD_NOTE, MERGES
from ui.draw.graph import draw
from ui.draw.tables import contributions_frame, numbers_table, vectors_frame, vectors_numbers
from ui.draw.verdict_metric import verdict_metric


def graph(current: Step, cache: ln_core.Cache, focused: bool = False) -> None:
    """The ten-node graph coloured by what this step has computed, and its legend; `focused`:
    only the current node with its inputs and consumers (beside the step on a projector)."""
    draw(current, {n: getattr(cache, n).shape for n in NODE_NAMES}, focused)


def lines(
    current: Step,
    cache: ln_core.Cache,
    answered: bool = True,
    where: tuple[DeltaGenerator, DeltaGenerator] | None = None,
) -> None:
    """The node's forward line (and on the way back the local derivative), named in words,
    and what the line skips when the layer has no gamma or no beta.

    Before a quiz question is `answered`, only the forward line shows: the notes and the local
    derivative would give its answer away (step 8's "just under 1", step 17's "· 1").
    `where`: the forward line's and the local derivative's places (default: two columns).
    """
    node = current.node
    st.caption(f"`{node}`: {meaning(node)}.")
    left, right = where or st.columns(2, gap="large")
    with left:
        if where is None or current.backward:  # alone on a projector, the line needs no title
            st.markdown("**Forward line**")
        st.latex(FORWARD[node])
        if cache.skipped_in(node):
            st.info(f"This layer has no {' and '.join(cache.skipped_in(node))}: {cache.line(node)}")
        if node in FORWARD_NOTE and answered:
            st.caption(FORWARD_NOTE[node])
    if current.backward and answered:
        with right:
            st.markdown("**Local derivative used**")
            st.latex(BACKWARD[node])
            if node in BACKWARD_NOTE:
                st.caption(BACKWARD_NOTE[node])


def before_the_root(current: Step, nodes: dict[str, np.ndarray]) -> None:
    """A forward step that stays defined when the output is not: its line and every vector's
    value (`nodes`: ln_core's nodes_before_the_root)."""
    node = current.node
    st.caption(f"`{node}`: {meaning(node)}.")
    st.latex(FORWARD[node])
    table(nodes[node], f"{node}: shape {nodes[node].shape}")


def table(array: np.ndarray, caption: str) -> None:
    """An array as one row per vector, under a caption naming it."""
    st.caption(caption)
    vectors_numbers(array)


def node_value(current: Step, cache: ln_core.Cache, index: tuple[int, ...]) -> None:
    """A forward step's result: the node's values."""
    value = getattr(cache, current.node)
    table(value[index], f"{current.node}: shape {value.shape} (keepdims)")


def gradient(
    current: Step, cache: ln_core.Cache, grads: ln_core.StagedGrads, index: tuple[int, ...]
) -> None:
    """A backward step's result: the node's gradient, its two parts at a merge, and the
    parameter gradients that leave the graph here."""
    node = current.node
    if node in MERGES:
        st.caption("Both contributions and their sum, vector by vector")
        parts = [(label, getattr(grads, field)[index]) for label, field in MERGES[node]]
        numbers_table(contributions_frame(parts))
    value = grads.of(node)
    table(value[index], f"d{node}: shape {value.shape}")
    if node == "normalized_x" and grads.dgamma is not None:
        table(grads.dgamma, "dgamma: summed over every vector")
    if node == "gx" and grads.dbeta is not None:
        table(grads.dbeta, "dbeta: summed over every vector")
    with st.expander(f"{node} itself (its forward value)"):
        forward_value = getattr(cache, node)
        table(forward_value[index], f"{node}: shape {forward_value.shape}")


def _check(
    result: ln_core.NodeCheck, dtype: str, hint: str, node: str, index: tuple[int, ...]
) -> None:
    """One node's analytic gradient against its numerical estimate, with a verdict; hint: the
    inputs that would resolve what these cannot."""
    verdict = numerical_agreement(
        f"d{node} from the backward pass against its central-difference estimate",
        result.judgement,
        dtype,
        hint,
    )
    metrics = st.columns(3)
    verdict_metric(f"d{node}: analytic vs numerical", verdict.status, verdict, metrics[0])
    metrics[1].metric(
        "max |difference|",
        f"{result.max_abs_diff:.2e}",
        help="The largest gap between an analytic entry and its numerical estimate, in the "
        "gradient's own units: the verdict compares it with what round-off and truncation "
        f"can explain here ({result.judgement.bound:.1e}).",
    )
    metrics[2].metric(
        "relative error",
        f"{result.rel_error:.2e}",
        help="max |analytic − numerical| / max(|analytic| + |numerical|), shown for scale; "
        "the verdict judges the gap itself.",
    )
    if verdict.status == FAIL:
        st.warning(
            f"d{node} differs from its numerical estimate by more than rounding explains in "
            f"{dtype}."
        )
    table(result.numerical[index], f"numerical d{node} (step h scaled to each entry)")


def numerical_check(
    current: Step,
    checks: dict[str, ln_core.NodeCheck],
    dtype: str,
    hint: str,
    index: tuple[int, ...],
    folded: bool,
) -> None:
    """Every entry of the node moved by ±h, only later nodes re-run: the gradient, witnessed.
    `checks` holds the check of each node in `current.checked`; hint as in `_check`."""
    node = current.node
    with st.expander("Check this step numerically", expanded=not folded):
        st.caption(
            f"Each entry of {node} is moved by a small step h both ways, only the nodes "
            "after it are re-run, and the change in the loss sum(dout * out) is divided "
            "by 2h."
        )
        for checked in current.checked:
            _check(checks[checked], dtype, hint, checked, index)


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
            "pages/lab/jacobian.py",
            label="The same fact on the Jacobian page: J · 1 = 0 (a shift of x moves no output), "
            "so Σ dx = doutᵀ J 1 = 0",
            icon=":material/grid_on:",
        )
