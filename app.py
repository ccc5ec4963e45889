"""LayerNorm Lab: the entrypoint. Shared state and sidebar, the link, then the chosen page."""

import base64
from pathlib import Path

import streamlit as st

# First: what a browser's messages may change (before any session runs), and the allocator
# settings that let the server give memory back (before the heavy libraries).
import ui.server.browser_messages
import ui.server.server_memory
import ui.server.warmup  # then every heavy library, fully imported before a page runs
from pages.stepper import browser as stepper_browser
from ui.lesson import guide
from ui.live import connect, follow, membership
from ui.session import presenter, reconnect, share, sidebar, state

# The icon comes from this server: a Material or emoji icon is fetched from a CDN. A data URL
# of its few hundred bytes: given as a file, Streamlit decodes it with PIL and stores it in its
# media files again on every run.
FAVICON = Path(__file__).parent / "assets" / "favicon.png"
ICON = "data:image/png;base64," + base64.b64encode(FAVICON.read_bytes()).decode("ascii")
st.set_page_config(page_title="LayerNorm Lab", page_icon=ICON, layout="wide")

# Page scripts sit one folder below pages/: Streamlit runs top-level pages/*.py on their own
# (without this entrypoint, so without the sidebar and state) in its legacy pages-folder mode,
# which a fresh server is in until one run has reached st.navigation (ui/server/launch.py).
PAGES = [
    st.Page("pages/home/home.py", title="Overview", icon=":material/home:", default=True),
    st.Page("pages/inputs/inputs.py", title="Inputs", icon=":material/edit:"),
    st.Page("pages/stepper/stepper.py", title="Stepper", icon=":material/footprint:"),
    st.Page("pages/jacobian/jacobian.py", title="Jacobian", icon=":material/grid_on:"),
    st.Page("pages/gradcheck/gradcheck.py", title="Gradient check", icon=":material/rule:"),
    st.Page("pages/audit/audit.py", title="Derivation audit", icon=":material/fact_check:"),
    st.Page("pages/derive/derive.py", title="Check your derivation", icon=":material/edit_note:"),
    st.Page("pages/residual/residual.py", title="Residual block", icon=":material/call_split:"),
    st.Page(
        "pages/batchnorm/batchnorm.py", title="LayerNorm vs BatchNorm", icon=":material/swap_horiz:"
    ),
    st.Page("pages/export/export.py", title="Export and share", icon=":material/download:"),
    # The instructor's live class: reached by its URL, /class, never listed for students.
    st.Page("pages/teach/class.py", title="Class", icon=":material/groups:", visibility="hidden"),
]

# A run has started: the server gives idle memory back only after a pause (server_memory).
ui.server.server_memory.note_run()
state.ensure_defaults()
share.load_link_once()
# The step a student moved to in the Stepper's browser part arrives with whatever run comes
# next, this page switch too: taken before the link is written or a class catches up.
stepper_browser.adopt()
hidden = st.session_state["hidden"]
membership.restore()
shown = [p for p in PAGES if p.url_path not in hidden]
# A hidden page stays registered, out of the menu, so a link to it says it is not part of the
# lesson instead of Streamlit's "Page not found". A following student's pages are the
# instructor's to choose: no menu (the sidebar says how to explore instead).
page = st.navigation(
    [p if p in shown else guide.out_of_lesson(p) for p in PAGES],
    position="hidden" if follow.led() else "sidebar",
)
# Each tab is titled with its page, so a student with several open finds the right one.
st.set_page_config(page_title=f"{page.title} · LayerNorm Lab")
follow.catch_up(PAGES, page)
presenter.apply_style()
presenter.skip_link()
if "controls" not in hidden:
    # A following student's inputs are the instructor's: changed here, the class's next step
    # would change them back. (Left out, with the menu, they are also half of what a phone
    # renders again for each message of a followed step.)
    if follow.led():
        follow.controls_note()
    else:
        sidebar.draw(page.url_path)
share.show_link_problems()
# The link is encoded once for both (encoding reads every key of the view).
view = share.write_link()
reconnect.keep_view(page, view)
follow.bar(page.url_path)
connect.write_cookies()
if page.url_path in hidden:
    guide.not_in_lesson(page, shown)
else:
    if page.url_path != "export":
        st.session_state["view_page"] = page.url_path
    # The guide's foot is drawn first, below where the page goes: a page that stops at inputs
    # it cannot use (st.stop) still ends with what to try and the link to the next page.
    body = st.container()
    if not follow.led():  # the instructor leads a following student from page to page
        with st.container():
            guide.footer(page, shown)
    with body:
        page.run()
