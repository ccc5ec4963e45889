"""LayerNorm Lab: the entrypoint. Shared state and sidebar, the link, then the chosen page."""

import streamlit as st

import ui.server_memory  # first: the allocator settings that let the server give memory back
import ui.warmup  # noqa: F401  # then every heavy library, fully imported before a page runs
from ui import guide, presenter, reconnect, share, sidebar, state

st.set_page_config(page_title="LayerNorm Lab", page_icon=":material/functions:", layout="wide")

# Page scripts live in app_pages/, never pages/: a folder named pages/ beside app.py puts a
# fresh server in Streamlit's legacy pages-folder mode, where a class's first links to a page
# each get a "Page not found" dialog until one run has reached st.navigation.
PAGES = [
    st.Page("app_pages/home.py", title="Overview", icon=":material/home:", default=True),
    st.Page("app_pages/inputs.py", title="Inputs", icon=":material/edit:"),
    st.Page("app_pages/stepper.py", title="Stepper", icon=":material/footprint:"),
    st.Page("app_pages/jacobian.py", title="Jacobian", icon=":material/grid_on:"),
    st.Page("app_pages/gradcheck.py", title="Gradient check", icon=":material/rule:"),
    st.Page("app_pages/audit.py", title="Derivation audit", icon=":material/fact_check:"),
    st.Page("app_pages/residual.py", title="Residual block", icon=":material/call_split:"),
    st.Page("app_pages/batchnorm.py", title="LayerNorm vs BatchNorm", icon=":material/swap_horiz:"),
    st.Page("app_pages/export.py", title="Export and share", icon=":material/download:"),
]

state.ensure_defaults()
share.load_link_once([p.url_path for p in PAGES if p.url_path])
hidden = st.session_state["hidden"]
shown = [p for p in PAGES if p.url_path not in hidden]
page = st.navigation(shown)
presenter.apply_style()
if "controls" not in hidden:
    sidebar.draw()
share.show_link_problems()
share.write_link()
reconnect.keep_view(page)
page.run()
guide.footer(page, shown)
