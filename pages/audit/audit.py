"""Derivation audit: every formula of the five source documents, judged on the current inputs."""

import functools

import streamlit as st

from ln_core.audit import AuditResult
from ui.draw import audit_view
from ui.draw.opening import opening
from ui.entry.literal import literal
from ui.server import caps, compute
from ui.session import state
from ui.session.errors import shown_errors, stops_on_error

opening(
    "Derivation audit",
    "Each formula of the lab's five source write-ups, run on your inputs.",
)
with st.popover("How the formulas are judged", icon=":material/help_outline:"):
    st.markdown(
        "Every formula the documents state is coded here as written and run on your inputs, in "
        "the document's own model (one γ or one per feature, with ε or without), against the "
        "quantity it claims to be: the staged backward, LayerNorm's Jacobian or a numerical "
        "derivative. Everything is judged in float64. When your inputs cannot tell a right "
        "formula from a wrong one, the audit says so and what to try."
    )
caps.enforce("audit")
s = st.session_state


@st.fragment
def one_document(results: list[AuditResult]) -> None:
    """One document's formulas. Drawing all five documents' entries on every rerun cost more
    than the audit itself; choosing another document reruns only this part."""
    labels = audit_view.document_labels(results)
    key = st.selectbox(
        "Read one document's formulas",
        list(labels),
        format_func=labels.get,
        **state.bound("audit_document"),
    )
    fold = functools.partial(state.member_of, "audit_opened")
    audit_view.document_entries(results, key, s["audit_filter"], fold)


def forget_hand_built(key: str, count: int) -> None:
    """A selection no click sends is not used, said once: the table starts again unselected."""
    selection = s[key]
    try:
        audit_view.picked_row(selection, count)
    except ValueError as err:
        del s[key]
        st.toast(
            f"A control sent {literal(selection['selection']['rows'])} for the row selected in "
            f"the summary, which {err}: not used.",
            icon=":material/block:",
        )


with stops_on_error():
    inputs = state.inputs()
    # The lab's own LayerNorm may be undefined here (a zero variance at eps = 0): say so, and
    # still show what each document's model makes of the inputs.
    with shown_errors():
        compute.forward(inputs)
    results = compute.audit(inputs)
    st.segmented_control(
        "Show",
        list(audit_view.FILTERS),
        format_func=audit_view.FILTERS.get,
        **state.bound("audit_filter", parse=lambda chosen: chosen or "all"),
    )
    shown = audit_view.kept(results, s["audit_filter"])
    for table in audit_view.picker_keys(shown):
        if table in s:
            forget_hand_built(table, len(shown))
    picked = audit_view.summary(results, s["audit_filter"], s["presenter"])
    # A row selected anew opens its document at that formula. The selection stays on later
    # runs, where it must not reopen a formula the student has folded since; once the row is
    # let go, selecting it again is new.
    if picked is None:
        s["audit_picked"] = None
    elif (picked.document, picked.step) != s.get("audit_picked"):
        formula = (picked.document, picked.step)
        s["audit_document"], s["audit_picked"] = picked.document, formula
        s["audit_opened"] = s["audit_opened"] | {formula}
    one_document(results)
