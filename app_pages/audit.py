"""Derivation audit: every closed form in the source documents, tested on the current inputs."""

import pandas as pd
import streamlit as st

from ui import caps, compute, state
from ui.errors import stops_on_error

st.title("Derivation audit")
st.markdown(
    "LayerNorm Lab was built from five write-ups of the backward pass. Each formula they give "
    "for dx, dgamma or dbeta is coded here exactly as written and run on your inputs next to "
    "the staged backward pass. A formula is only as good as the numbers it produces: several "
    "of them are wrong as written, and the numbers show where."
)
caps.enforce("audit")


def _short(document: str) -> str:
    """'000_f12dc394c06ca42b.txt' -> 'document 000': the hash means nothing to a reader."""
    return f"document {document.split('_')[0]}"


with stops_on_error():
    inputs = state.inputs()
    results = compute.audit(inputs)
    wrong = sum(r.verdict == "wrong" for r in results)
    st.subheader(f"{len(results)} formulas checked: {wrong} wrong on these inputs")
    summary = pd.DataFrame(
        {
            "entry": [r.id for r in results],
            "document": [_short(r.document) for r in results],
            "quantity": [r.quantity for r in results],
            "verdict": [r.verdict for r in results],
            "error": [r.error for r in results],
            "corrected form's error": [r.correction_error for r in results],
        }
    )
    st.dataframe(
        summary,
        width="stretch",
        hide_index=True,
        column_config={
            "error": st.column_config.NumberColumn(format="%.1e"),
            "corrected form's error": st.column_config.NumberColumn(format="%.1e"),
        },
    )
    for result in results:
        icon = ":material/check_circle:" if result.verdict == "correct" else ":material/cancel:"
        title = (
            f"{result.quantity} from {result.document}: {result.verdict} (error {result.error:.1e})"
        )
        with st.expander(title, icon=icon, expanded=result.verdict == "wrong"):
            st.markdown("**As written**")
            st.latex(result.formula_as_written)
            st.caption(f"Compared with {result.compared_with}.")
            if result.mistake:
                st.markdown(f"**The mistake.** {result.mistake}")
                st.markdown("**Corrected**")
                st.latex(result.correction)
                st.caption(f"The corrected form's error: {result.correction_error:.1e}.")
