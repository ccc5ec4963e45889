"""Derivation audit: every formula of the five source documents, judged on the current inputs."""

import streamlit as st

from ui import audit_view, caps, compute, state
from ui.errors import shown_errors, stops_on_error

st.title("Derivation audit")
st.markdown(
    "LayerNorm Lab was built from five write-ups of the backward pass. Every formula they state "
    "is coded here as written and run on your inputs, in the document's own model (one γ or "
    "one per feature, with ε or without), against the quantity it claims to be: the staged "
    "backward, LayerNorm's Jacobian or a numerical derivative. Everything is judged in float64. "
    "When your inputs cannot tell a right formula from a wrong one, the audit says so and what "
    "to try."
)
caps.enforce("audit")

with stops_on_error():
    inputs = state.inputs()
    # The lab's own LayerNorm may be undefined here (a zero variance at eps = 0): say so, and
    # still show what each document's model makes of the inputs.
    with shown_errors():
        compute.forward(inputs)
    audit_view.draw(compute.audit(inputs))
