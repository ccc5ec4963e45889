"""Check your derivation: a formula typed for one gradient, read by the lab's grammar, shown
back typeset and judged like the documents' formulas."""

import streamlit as st

from ln_core.derivation import TARGETS
from pages.derive import derivation_view
from pages.derive.formula_box import formula_box
from ui.draw.opening import opening
from ui.server import caps, compute
from ui.session import share, state
from ui.session.errors import shown_errors, stops_on_error

# (button, quantity, formula): one document's line as written, a right compact form, a slip.
EXAMPLES = (
    (
        "A document's line (002's dx)",
        "dx",
        "(σ² + ε)^(-1/2) / D * (D dxhat - Σ dxhat - x̂ Σ dxhat x)",
    ),
    ("A correct compact dx", "dx", "rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))"),
    ("A broken dx", "dx", "1/√(σ²+ε) * (dxhat - mean(dxhat))"),
)


def _use(target: str, formula: str) -> None:
    st.session_state.update(derive_target=target, derive_formula=formula)


opening(
    "Check your derivation",
    "Type a gradient you derived: the lab judges it and finds the input that breaks it.",
)
with st.expander("How your formula is judged"):
    st.markdown(
        "The lab reads your formula with its own small grammar, shows the formula as it "
        "understood it, then judges it the way the Derivation audit judges the five documents: "
        "on your inputs, then on inputs chosen to tell common mistakes apart. A wrong formula "
        "gets the simplest input that shows it, and the mistake's name when the lab knows it."
    )
caps.enforce("derive")

typing, names = st.container(key="main_figure").columns([3, 2])
with typing:
    target = st.selectbox(
        "Gradient",
        list(TARGETS),
        format_func=derivation_view.target_label,
        **state.bound("derive_target"),
    )
    formula_box("Your formula", "derive_formula")
    eps_column, gamma_column = st.columns(2)
    eps_column.toggle("My derivation has ε", **state.bound("derive_eps"))
    gamma_column.toggle("One scalar γ and β", **state.bound("derive_scalar"))
with names:
    with st.expander("Names you can use"):
        derivation_view.names_list(target)
    # Beside the box, so the verdict under it starts on the first screen. One button per line:
    # side by side, a projector's third of a column cuts their labels.
    st.caption("Examples:")
    for label, example_target, formula in EXAMPLES:
        st.button(label, on_click=_use, args=(example_target, formula))

with stops_on_error():
    s = st.session_state
    # Undefined inputs (a zero variance at eps = 0) are said once; the formula is still read
    # and judged on the probes, which are always defined.
    with shown_errors():
        compute.forward(state.inputs())
    if not s["derive_formula"].strip():
        # Nothing typed yet: no verdict, not even "empty", until the student writes something.
        st.info(
            f"Type what follows `{s['derive_target']} =`, or load an example.",
            icon=":material/edit:",
        )
        st.stop()
    check = compute.derivation(
        state.inputs(),
        s["derive_target"],
        s["derive_formula"],
        s["derive_eps"],
        s["derive_scalar"],
    )
    example = check.counterexample
    link = None
    if example is not None:
        link = share.input_link(example.x, example.gamma, example.beta, example.dy, example.eps)
    derivation_view.draw(check, link)
