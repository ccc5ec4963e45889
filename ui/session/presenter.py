"""Presenter mode: the content gets the screen, type and contrast for a projector, nothing clipped,
and the stepper driven from the keyboard; the stepper's controls stay in view in every mode."""

from __future__ import annotations

import streamlit as st

from ui.draw.audit_view import SUMMARY_CSS
from ui.draw.tables import NUMBERS_CSS
from ui.session import state
from ui.session.editors import PHONE_TABLES_CSS

# Larger type, black text and bigger buttons for a projector.
_PRESENTER_RULES = """
html, body, [data-testid="stAppViewContainer"] { font-size: 21px; }
[data-testid="stMarkdownContainer"] p,
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] * {
  color: #000 !important; opacity: 1 !important; }
button[kind^="primary"]:not(:disabled) [data-testid="stMarkdownContainer"] p {
  color: #fff !important; }
h1 { font-size: 2.4rem !important; }
h2 { font-size: 1.7rem !important; }
.st-key-stepper_title, [data-testid="stLayoutWrapper"]:has(> .st-key-stepper_title) {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
.katex-display > .katex { font-size: 1em; }
[data-testid="stDataFrame"] { font-size: 1rem; }
button[kind] { font-size: 1.1rem !important; min-height: 3rem; }
.st-key-stepper_nav { border-bottom: 2px solid #000; padding-bottom: 0.4rem; }
/* Below the app's header: its 3.75rem grow with the projector's type (79 px at 21 px). */
[data-testid="stMainBlockContainer"] { padding: 4rem 1.2rem 3rem; }
[data-testid="stMain"] h2 { padding-top: 0.2rem; }
.st-key-presenter_controls { position: fixed; top: 0.45rem; right: 3.5rem; z-index: 999991;
  width: auto; }
/* The Controls button floats: it leaves no gap where it would have been. */
[data-testid="stLayoutWrapper"]:has(> .st-key-presenter_controls) { display: contents; }
"""
# The sidebar leaves the screen to the content; the Controls popover brings it back.
_HIDE_SIDEBAR = """
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"] { display: none !important; }
"""

# Always on: the stepper's key listener and its hidden step control take no room (the step's
# head, its heading and buttons, sticks below the app's header: pages/stepper/walk.css).
_STICKY_NAV = """
.st-key-stepper_keys, .st-key-w_step_browser,
[data-testid="stLayoutWrapper"]:has(> .st-key-stepper_keys) { display: none; }
"""
# Always on: nothing is cut off. A formula too wide for its box scrolls inside it, columns of
# formulas wrap under each other before they get too narrow, and a link's or a metric's label
# wraps.
_NO_CLIPPING = """
.katex-display { overflow-x: auto; overflow-y: hidden; padding: 0.2rem 0.4rem; }
@media (max-width: 640px) { .katex-display > .katex { font-size: 0.85em; } }
[data-testid="stHorizontalBlock"]:has(.katex-display) { flex-wrap: wrap; }
[data-testid="stHorizontalBlock"]:has(.katex-display) > [data-testid="stColumn"] {
  flex: 1 1 24rem; min-width: min(24rem, 100%);
}
[data-testid="stPageLink-NavLink"] > span:last-child,
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * {
  white-space: normal !important; overflow: visible !important;
}
"""
# ArrowRight / PageDown press Next and ArrowLeft / PageUp press Prev, as a presenter's clicker
# sends them; on the last step Next leads on to the next page of the lesson (the guide's link),
# on the first Prev back to the page before. Keys typed into a field or moving the slider are
# left alone. The listener lives on the app's document (st.html runs the script there, not in
# an iframe); one rerun's listener replaces the last, and it does nothing once the stepper
# (which draws .st-key-stepper_keys) is not on screen.
_KEYS_SCRIPT = """<script>
(() => {
const keys = {ArrowRight: "Next", PageDown: "Next", ArrowLeft: "Prev", PageUp: "Prev"};
function onKey(event) {
  const label = keys[event.key];
  const target = event.target;
  if (!label || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
  if (!document.querySelector(".st-key-stepper_keys")) return;
  if (target.closest && target.closest('input, textarea, select, [role="slider"], '
      + '[contenteditable="true"], [role="listbox"], [role="combobox"], [role="radiogroup"], '
      + '[role="switch"], [data-testid="stDataFrame"]')) return;
  const button = [...document.querySelectorAll('.st-key-stepper_nav button')]
    .find(b => b.innerText.includes(label));
  if (!button) return;
  event.preventDefault();
  if (!button.disabled) { button.click(); return; }
  const away = document.querySelector(`.st-key-guide_${label === "Next" ? "next" : "back"} a`);
  if (away) away.click();
}
// The page may run this again (a rerun redraws the element): one listener at a time.
if (window.__lnlabKeys) document.removeEventListener("keydown", window.__lnlabKeys);
window.__lnlabKeys = onKey;
document.addEventListener("keydown", onKey);
})();
</script>"""
KEYS_NOTE = "Keys: → or Page Down for Next, ← or Page Up for Prev (past the end: next page)."

# Always on: text a student must read is dark enough (WCAG AA, 4.5:1). Streamlit draws captions
# and help text at 60 % of the text colour (3.9:1 on white).
_CONTRAST = """
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] *,
[data-testid="stWidgetLabel"] small, [data-testid="stTooltipHoverTarget"] ~ *,
[data-testid="stSidebar"] [data-testid="stMarkdownContainer"] p { color: #55575e; opacity: 1; }
"""

# Always on: section headings are h2 under each page's h1 (no level skipped), drawn at the size
# of Streamlit's h3 they replaced.
_HEADINGS = """
[data-testid="stMain"] h2 { font-size: 1.75rem; }
"""

# Always on: a table's toolbar (search, download, full screen) shows above its top edge, where on
# a phone it covered the end of the heading or button above: there the table leaves it room
# (above its element, whose height Streamlit may fix).
_TOOLBAR_ROOM = """
@media (max-width: 640px) {
  [data-testid="stElementContainer"]:has([data-testid="stDataFrame"]) { margin-top: 2rem; }
}
"""

# Always on: the page's heading starts just under the toolbar, not two lines below it, so the
# first screen has room for the page's idea, its picture and its verdict.
_FIRST_SCREEN = """
[data-testid="stMainBlockContainer"] { padding-top: 4rem; }
"""

_ALWAYS = (
    f"{_STICKY_NAV}{_NO_CLIPPING}{_CONTRAST}{_HEADINGS}{_TOOLBAR_ROOM}{_FIRST_SCREEN}"
    f"{PHONE_TABLES_CSS}{SUMMARY_CSS}{NUMBERS_CSS}"
)


# The first stop of the Tab key on every page: a link past the sidebar's pages and controls to
# the page's own heading, from which the next Tab reaches the page's first control. Added once
# to the document's top, shown only while it has the focus. A formula wider than a phone
# scrolls in its box: the box takes the focus, so the keyboard can scroll it too.
_SKIP_LINK = """<script>
(() => {
  if (document.getElementById("lnlab-skip")) return;
  const style = document.createElement("style");
  style.textContent = `#lnlab-skip { position: fixed; left: -9999px; top: 0.5rem; z-index: 1000001;
    background: #fff; color: #000; padding: 0.5rem 1rem; border: 2px solid #000; }
    #lnlab-skip:focus { left: 0.5rem; }`;
  document.head.appendChild(style);
  const link = document.createElement("a");
  link.id = "lnlab-skip";
  link.href = "#";
  link.textContent = "Skip to the page's content";
  link.addEventListener("click", (event) => {
    event.preventDefault();
    const main = document.querySelector('[data-testid="stMain"]');
    const target = main.querySelector("h1, h2") || main;
    target.setAttribute("tabindex", "-1");
    target.focus();
  });
  document.body.insertBefore(link, document.body.firstChild);
  const focusable = () => document.querySelectorAll(".katex-display:not([tabindex])")
    .forEach(box => box.setAttribute("tabindex", "0"));
  new MutationObserver(focusable).observe(document.body, {childList: true, subtree: true});
  focusable();
})();
</script>"""


def skip_link() -> None:
    """The skip link (in the sidebar's part of the page: in the main area even an empty element
    adds a gap)."""
    st.sidebar.html(_SKIP_LINK, unsafe_allow_javascript=True)


def apply_style() -> None:
    """Inject the page style for the current mode; in presenter mode, the Controls popover
    (unless a link hid the controls: then the sidebar it would bring back stays hidden too)."""
    s = st.session_state
    if not s["presenter"]:
        st.html(f"<style>{_ALWAYS}</style>")
        return
    if "controls" in s["hidden"]:
        st.html(f"<style>{_ALWAYS}{_PRESENTER_RULES}</style>")
        return
    sidebar = "" if s["presenter_sidebar"] else _HIDE_SIDEBAR
    st.html(f"<style>{_ALWAYS}{_PRESENTER_RULES}{sidebar}</style>")
    with st.container(key="presenter_controls"), st.popover("Controls", icon=":material/tune:"):
        st.toggle(
            "Show the sidebar",
            help="Pages, preset, shape, seed, eps and dtype.",
            **state.bound("presenter_sidebar"),
        )
        st.toggle("Presenter mode", **state.bound("presenter", widget="popover"))


def keyboard() -> None:
    """Step with the keyboard (in every mode); KEYS_NOTE says how, where the page has room."""
    with st.container(key="stepper_keys"):
        st.html(_KEYS_SCRIPT, unsafe_allow_javascript=True)
