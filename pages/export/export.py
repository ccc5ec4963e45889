"""Export and share: a link to this exact view, and the example in several formats."""

from functools import partial

import streamlit as st

from pages.export.report import html_report
from ui.draw.opening import opening
from ui.export.bundle import numpy_snippet, to_json, to_npz
from ui.export.download import download
from ui.export.notebook import View
from ui.export.notebook_download import notebook_downloads
from ui.server import caps, compute
from ui.session import affine_control, class_link, share, state
from ui.session.errors import stops_on_error

opening(
    "Export and share",
    "A link to this exact view, and the example as a file.",
)

came_from = st.session_state["view_page"]
page_title = class_link.PAGE_TITLES.get(came_from, "Overview")
# What the link keeps is one hover away: the first screen holds the link itself.
st.header(
    "Link to this view",
    help="It keeps the preset, shape, seed, eps, dtype, upstream gradient, step, the chosen "
    "vector, the gradient check's bug, the Jacobian's three-paths toggle, the quiz, answers "
    "already revealed and any array you edited (each while it has at most 64 numbers). "
    "Opening it in a fresh browser shows the same numbers.",
)
st.caption(f"Opens the {page_title} page as you left it.")
if share.link_warning():
    st.warning(share.link_warning(), icon=":material/wifi_off:")
left_out = share.left_out(st.session_state)
if left_out:
    st.warning(left_out, icon=":material/link_off:")
with st.container(key="main_figure"):
    st.code(share.current_link(came_from), language=None, wrap_lines=True)
class_link.draw(came_from)

st.header("Download this example")
caps.enforce("export")
st.caption(
    "Every table in the app also has its own CSV download in its toolbar (hover over it). "
    "Figures download as PNG from their toolbar's camera icon."
)
with stops_on_error():
    # The layer options the Stepper and Gradient check show (affine, per sequence).
    inputs = affine_control.for_page(state.inputs(), "export")
    per_token = affine_control.per_token_instead("export")
    if per_token is not None:
        st.warning(per_token, icon=":material/straighten:")
    bundle = compute.bundle(inputs)
    downloads = [
        ("JSON bundle", to_json, "layernorm_example.json", "application/json", "data_object"),
        ("Compressed .npz", to_npz, "layernorm_example.npz", "application/octet-stream", "archive"),
        ("HTML report", html_report, "layernorm_report.html", "text/html", "description"),
    ]
    for col, (label, write, file_name, mime, icon) in zip(st.columns(3), downloads, strict=True):
        download(col, label, partial(write, bundle), file_name, mime, icon)
    st.markdown("**The example as a Jupyter notebook**")
    # The layer options are the Stepper's (and the link's): the notebooks carry them.
    notebook_downloads(
        View(
            inputs,
            st.session_state["preset"],
            share.current_link(came_from),
        )
    )
    st.markdown("**The example in plain NumPy**")
    st.caption(
        "The inputs, the ten forward lines and the backward pass, needing nothing but NumPy: "
        "run it anywhere and it prints out, dx and the gradients of gamma and beta (those the "
        "layer applies), the numbers this lab shows with the Stepper's options."
    )
    st.code(numpy_snippet(bundle), language="python", wrap_lines=True)
