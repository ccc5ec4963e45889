"""What the whole walk computes: dx, dgamma and dbeta, labelled, next to the compact closed
form, with the check that the two agree."""

from __future__ import annotations

import numpy as np
import streamlit as st

import ln_core
from teaching.verdicts import most_telling, rounding_agreement
from ui.draw.tables import numbers_table, vectors_frame, vectors_numbers
from ui.draw.verdict_metric import verdict_metric

CLOSED_FORM = (
    r"dx = \frac{1}{\sqrt{\sigma^2+\varepsilon}}\Big(g - \overline{g}"
    r" - \hat x\,\overline{g \odot \hat x}\Big),\qquad g = \gamma \odot dout"
)
PARAMETERS = (
    r"d\gamma = \sum_{\text{vectors}} dout \odot \hat x,"
    r"\qquad d\beta = \sum_{\text{vectors}} dout"
)


def result_panel(
    grads: ln_core.StagedGrads,
    judgements: dict[str, ln_core.Judgement],
    dtype: str,
    hint: str,
    index: tuple[int, ...],
) -> None:
    """dx for the vectors on screen (x's shape at `index`), dgamma and dbeta (D,), and the
    closed form judged against them (`judgements`, by gradient) in `dtype`; hint: the inputs
    that would resolve what these cannot (teaching.verdicts.resolving_inputs)."""
    st.header("The result: dx, dgamma, dbeta")
    # Full width: a table of D = 8 features needs the page's width to show every column.
    st.caption("dx: how the loss moves with each entry of x (one row per vector)")
    vectors_numbers(grads.dx[index])
    # A skipped parameter has no gradient; per sequence each has one value per entry of the
    # (L, D) block, shown flattened.
    present = {n: g for n, g in (("dgamma", grads.dgamma), ("dbeta", grads.dbeta)) if g is not None}
    if present:
        st.caption(f"{' and '.join(present)}: one value per feature, summed over every vector")
        params = vectors_frame(np.stack([g.reshape(-1) for g in present.values()]))
        params.index = list(present)
        numbers_table(params)
    formulas, check = st.columns([3, 2], gap="large")
    with formulas:
        st.markdown("**The same result in one line each**")
        st.latex(CLOSED_FORM)
        st.latex(PARAMETERS)
        st.caption(
            "Bars are means over the D features; x̂ is normalized_x. The twenty steps, "
            "multiplied out, give exactly these lines."
        )
    with check:
        worst = most_telling(judgements)
        verdict = rounding_agreement(
            "the twenty staged steps against the one-line closed form "
            f"(of dx, dgamma and dbeta, the one that decides: {worst})",
            judgements[worst],
            dtype,
            hint,
        )
        verdict_metric("staged vs closed form", f"{judgements[worst].relative:.1e}", verdict)
