"""Inputs: edit x, gamma, beta and the upstream gradient; CSV in and out."""

from functools import partial

import numpy as np
import streamlit as st

from pages.inputs.edits import edits_bar
from teaching.upstream import constant_dout_warning
from ui.draw.opening import opening
from ui.entry.csv_io import DOUT, GAMMA_BETA, to_csv
from ui.entry.limits import CSV_MAX_BYTES, CSV_MAX_COLUMNS, CSV_MAX_ROWS
from ui.export.download import download
from ui.session import state
from ui.session.editors import array_editor
from ui.session.errors import shown_errors
from ui.session.fields import whole_field

s = st.session_state
opening(
    "Inputs",
    "Every page computes from these numbers: edit a cell to change them.",
)
edits_bar()

st.header("x: one row per vector")
with st.container(key="main_figure"):
    array_editor("x", s["x"], lambda a: state.set_array("x", a))

with st.expander("CSV: paste, upload or download", icon=":material/upload_file:"):
    st.caption(
        "One vector per line, numbers separated by commas, no header. Lines that fill x's "
        "shape keep it (x.csv of a batch of tokens comes back as tokens); otherwise one line "
        f"gives a vector, several give rows. At most {CSV_MAX_ROWS} lines (the largest N), "
        f"{CSV_MAX_COLUMNS} values per line and {CSV_MAX_BYTES // 1024} KB."
    )
    # A form sends the pasted text with the click, so the first click uses it (a plain
    # button waited for the text box to lose the focus). A callback runs before the sidebar is
    # drawn, so the new shape can reach its controls.
    with st.form("csv_form", border=False):
        st.text_area("Paste CSV", key="csv_text", height=100)
        st.file_uploader("or upload a .csv file", type=["csv", "txt"], key="csv_file")
        st.form_submit_button("Use this CSV for x", on_click=state.load_csv_fields)
    if s.get("csv_error"):
        st.error(s.pop("csv_error"))
    if s.get("csv_notice"):
        st.warning(s.pop("csv_notice"))
    cols = st.columns(2)
    download(cols[0], "Download x.csv", partial(to_csv, s["x"]), "x.csv", "text/csv")
    gamma_beta = partial(to_csv, np.stack([s["gamma"], s["beta"]]), GAMMA_BETA)
    download(cols[1], "Download gamma_beta.csv", gamma_beta, "gamma_beta.csv", "text/csv")

st.header("gamma and beta: one value per feature")
st.button(
    "gamma = 1, beta = 0",
    on_click=state.plain_affine,
    help="Set every gamma to 1 and every beta to 0: then the output is normalized_x itself, "
    "the layer only normalizes.",
)


def _store_params(params: np.ndarray) -> None:
    state.set_array("gamma", params[0])
    state.set_array("beta", params[1])


array_editor("params", np.stack([s["gamma"], s["beta"]]), _store_params, ["gamma", "beta"])

st.header("Upstream gradient dout = dL/dy")
st.radio(
    "Where dout comes from",
    list(state.UPSTREAM_KINDS),
    format_func=state.UPSTREAM_KINDS.get,
    horizontal=True,
    **state.bound("upstream", on_change=state.bump_editors),
)
kind = s["upstream"]
if kind == "one_hot":
    whole_field(
        "Output that gets the 1", "one_hot_index", 0, s["x"].shape[-1] - 1, "", state.bump_editors
    )
if kind == "loss":
    st.caption("Target y* for the loss 1/2 ||y - y*||^2, whose gradient is dout = y - y*.")
    array_editor("target", s["target"], lambda a: state.set_array("target", a))

with shown_errors():
    dout = state.upstream_gradient()
    warning = constant_dout_warning(s["gamma"], dout)
    if warning:
        st.warning(warning)
    st.caption("Edit a cell to set dout by hand.")

    def _store_dout(edited: np.ndarray) -> None:
        state.set_array("dout_edited", edited)
        s["upstream"] = "edited"

    array_editor("dout", dout, _store_dout)
    download(
        st.container(), "Download dout.csv", partial(to_csv, dout, DOUT), "dout.csv", "text/csv"
    )
