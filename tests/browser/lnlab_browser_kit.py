"""Helpers for the real-browser tests: the page list, waiting for Streamlit, and DOM reads.

pytest runs with --import-mode=importlib, so test modules cannot import conftest.py; conftest
puts this directory on sys.path and the test modules import this file instead.

Selectors this suite relies on (Streamlit 1.67):
  [data-testid="stApp"][data-test-script-state]  "initial" / "running" / "notRunning"
  [data-testid="stSkeleton"]                     a lazily loaded element not drawn yet
  [data-stale="true"]                            an element left over from the previous run
  [data-testid="stMain"]                         the main area, also its scroll container
  [data-testid="stSidebar"], [data-testid="stSidebarNavLink"][href]
  [data-testid="stException"]                    an uncaught exception (redacted by config)
  [data-testid="stAlert"] [data-testid="stAlertContentError"]   an st.error
  [role="dialog"]                                Streamlit's modal ("Page not found")
  [data-testid="stDataFrame"] [data-testid="data-grid-canvas"]  glide-data-grid's canvas
  [data-testid="glide-cell-{col}-{row}"]         glide's accessible copy of a cell (col 0 is
                                                 the index), holding the full-precision value
  input.gdg-input                                glide's overlay cell editor
  [data-testid="stPlotlyChart"] svg.main-svg     a drawn plotly figure
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Browser, Locator, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

# One list of pages (read from app.py), one free port, one set of Chromium flags for the
# tests and the benchmarks alike; the tests reach them through this kit.
from bench.chromium import CHROMIUM as CHROMIUM
from bench.chromium import CHROMIUM_ARGS as CHROMIUM_ARGS
from bench.lab_pages import lab_pages as lab_pages
from deploy.processes import free_port as free_port

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "screenshots"
VIEWPORT = {"width": 1440, "height": 900}

# How long the script state must stay "notRunning" before a run counts as finished. Most
# actions start one run; a data-editor edit starts a chain (the edit, then the app's own
# st.rerun) with gaps of up to ~200 ms between runs, so edit_cell waits longer.
QUIET_MS = 400
CHAIN_QUIET_MS = 1_000
RUN_TIMEOUT_MS = 60_000
# Counts every change of the script state, in every document this context opens, and every
# message from the server: a fragment's rerun can be so short that React renders "running" and
# "notRunning" in one go, leaving no change of the attribute to observe.
INIT_SCRIPT = """
(() => {
  window.__lnlabChanges = 0;
  window.__lnlabLastChange = performance.now();
  const changed = (count) => {
    window.__lnlabChanges += count;
    window.__lnlabLastChange = performance.now();
  };
  new MutationObserver((records) => changed(records.length)).observe(document, {
    attributes: true, subtree: true, attributeFilter: ["data-test-script-state"],
  });
  const NativeWebSocket = window.WebSocket;
  window.WebSocket = class extends NativeWebSocket {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", () => changed(1));
    }
  };
})();
"""
_SETTLED = """
(quiet) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app !== null
    && app.getAttribute("data-test-script-state") === "notRunning"
    && document.querySelector('[data-testid="stSkeleton"]') === null
    && document.querySelector('[data-stale="true"]') === null
    && performance.now() - window.__lnlabLastChange > quiet;
}
"""

EXCEPTION = '[data-testid="stException"]'
ERROR = '[data-testid="stAlert"] [data-testid="stAlertContentError"]'
NOT_FOUND = "Page not found"


def new_tab(browser: Browser, viewport: dict[str, int]) -> Page:
    """A page in a new browser context (so a new Streamlit session) of this window size, with
    the run counter and a 30 s default timeout; closing its context is the caller's."""
    context = browser.new_context(viewport=viewport)
    context.add_init_script(INIT_SCRIPT)
    context.set_default_timeout(30_000)
    return context.new_page()


def wait_for_script(page: Page, quiet_ms: int = QUIET_MS) -> None:
    """Wait until the app's script has finished and every element is drawn and current."""
    page.wait_for_timeout(100)  # let a click or key reach the server before looking
    try:
        page.wait_for_function(_SETTLED, arg=quiet_ms, timeout=RUN_TIMEOUT_MS, polling=100)
    except PlaywrightTimeoutError:
        raise AssertionError(
            f"the app did not settle within {RUN_TIMEOUT_MS / 1000:.0f} s: {_describe(page)}"
        ) from None


def rerun_after(
    page: Page,
    action: Callable[[], None],
    quiet_ms: int = QUIET_MS,
    timeout: float = 20_000,
) -> None:
    """Do `action`, insist that it started a script run, and wait for the run(s) to finish."""
    before = page.evaluate("window.__lnlabChanges")
    action()
    try:
        page.wait_for_function(
            "(before) => window.__lnlabChanges > before", arg=before, timeout=timeout, polling=50
        )
    except PlaywrightTimeoutError:
        raise NoRun(
            f"no script run started within {timeout / 1000:.0f} s: {_describe(page)}"
        ) from None
    wait_for_script(page, quiet_ms)


class NoRun(AssertionError):
    """An action that should have rerun the script did not."""


def _describe(page: Page) -> str:
    state = page.evaluate(
        """() => { const app = document.querySelector('[data-testid="stApp"]');
        return app && [app.getAttribute("data-test-script-state"),
                       app.getAttribute("data-test-connection-state")].join(", "); }"""
    )
    return f"url {page.url}, script and connection state: {state}"


def open_page(page: Page, base_url: str, url_path: str) -> None:
    """Load a page by its URL path in a fresh session (defaults) and wait for its script."""
    page.goto(f"{base_url}/{url_path}")
    wait_for_script(page)
    if url_path.startswith("stepper"):  # its step is drawn by the browser, after the run
        page.wait_for_function(
            "() => document.querySelector('.lnlab-heading')?.innerText", timeout=RUN_TIMEOUT_MS
        )


def goto_in_session(page: Page, url_path: str) -> None:
    """Switch page through the sidebar's navigation, keeping the session (and its state).

    A page switch may remount the app instead of changing its script state in place, so the
    sign that it happened is the link becoming the current page, then the run settling.
    """
    link = nav_link(page, url_path)
    link.click()
    try:
        page.wait_for_function(
            """(path) => { const a = [...document.querySelectorAll(
                '[data-testid="stSidebarNavLink"]')].find(e => e.href.endsWith("/" + path));
              return a && a.getAttribute("aria-current") === "page"; }""",
            arg=url_path,
            timeout=RUN_TIMEOUT_MS,
            polling=100,
        )
    except PlaywrightTimeoutError:
        raise NoRun(f"clicked the link to /{url_path}, but: {_describe(page)}") from None
    wait_for_script(page)


def nav_link(page: Page, url_path: str) -> Locator:
    """The sidebar's link to a page (hrefs are absolute; the default page's ends in "/")."""
    return page.locator(f'[data-testid="stSidebarNavLink"][href$="/{url_path}"]')


def main(page: Page) -> Locator:
    return page.locator('[data-testid="stMain"]')


def sidebar(page: Page) -> Locator:
    return page.locator('[data-testid="stSidebar"]')


def not_found_dialogs(page: Page) -> list[str]:
    return [t for t in page.locator('[role="dialog"]').all_inner_texts() if NOT_FOUND in t]


def problems(page: Page) -> list[str]:
    """What makes a page broken: exception elements and a "Page not found" dialog."""
    found = [f"exception element: {t!r}" for t in page.locator(EXCEPTION).all_inner_texts()]
    found += [f"dialog: {t!r}" for t in not_found_dialogs(page)]
    return found


def errors(where: Locator) -> list[str]:
    """The texts of the st.error alerts inside `where` (exception elements excluded)."""
    return where.locator(ERROR).all_inner_texts()


def screenshot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def screenshot_bottom(page: Page, name: str) -> Path:
    """Scroll the main area to its end, screenshot it, and scroll back."""
    main(page).evaluate("e => { e.scrollTop = e.scrollHeight; }")
    page.wait_for_timeout(300)
    path = screenshot(page, name)
    main(page).evaluate("e => { e.scrollTop = 0; }")
    return path


def heading(page: Page, level: str, pattern: str, timeout: float = 10_000) -> str:
    """The text of the first heading of `level` (h1, h3...) in the main area matching `pattern`.

    Waits for it: a custom component (the Stepper's walk.js) draws its heading after the
    script has finished, once the browser has loaded the component's module, which after a
    reload on a loaded machine can take longer than the script's own quiet time."""
    wanted = main(page).locator(level).filter(has_text=re.compile(pattern))
    try:
        wanted.first.wait_for(timeout=timeout)
    except PlaywrightTimeoutError:
        pass  # the assertion below says which headings there are
    texts = main(page).locator(level).all_inner_texts()
    found = [t for t in texts if re.search(pattern, t)]
    assert found, f"no {level} matching {pattern!r}; {level}s on the page: {texts}"
    return found[0]


def grid_canvas(frame: Locator) -> Locator:
    return frame.locator('[data-testid="data-grid-canvas"]')


def grid_cell(frame: Locator, row: int, col: int) -> Locator:
    """Glide's accessible copy of a data cell (`col` counts data columns, not the index)."""
    return frame.locator(f'[data-testid="glide-cell-{col + 1}-{row}"]')


def grid_value(frame: Locator, row: int, col: int) -> str:
    """The full-precision text of a data cell."""
    return grid_cell(frame, row, col).text_content(timeout=10_000) or ""


def grid_cell_center(
    frame: Locator, row: int, col: int, last_column: bool = False
) -> tuple[float, float]:
    """Where a data cell sits on screen: glide draws on a canvas, so this is geometry.

    Glide's header is about 37 px and its rows 35 px; a stretched editor shares its width
    equally among the data columns after the index column ("row 0": about 51 px). A table
    whose last column is the wide one (the phone's tables) says `last_column`: its cells are
    found 50 px left of the table's right edge. The accessible copy of the grid has no
    geometry, so edit_cell checks that the cell editor it opened holds the value of the cell it
    meant.
    """
    frame.scroll_into_view_if_needed()
    box = grid_canvas(frame).bounding_box()
    assert box is not None, "the data editor's canvas is not on screen"
    y = box["y"] + 37 + 35 * (row + 0.5)
    if last_column:
        return box["x"] + box["width"] - 50, y
    n_cols = frame.locator('th[role="columnheader"]').count()  # index column included
    index_width = 51.0
    width = (box["width"] - index_width) / max(n_cols - 1, 1)
    x = box["x"] + index_width + width * (col + 0.5)
    return x, y


def open_cell_editor(
    page: Page, frame: Locator, row: int, col: int, last_column: bool = False
) -> Locator:
    """Double-click a data-editor cell as a user does; the cell editor it opened, checked to
    hold that cell's value (`last_column`: see grid_cell_center)."""
    x, y = grid_cell_center(frame, row, col, last_column)
    shown = grid_value(frame, row, col)
    editor = page.locator("input.gdg-input, textarea.gdg-input").first
    for _ in range(3):  # a double-click landing during a redraw does not open the editor
        page.mouse.dblclick(x, y)
        try:
            editor.wait_for(state="visible", timeout=3_000)
            break
        except Exception:
            page.keyboard.press("Escape")
            wait_for_script(page)
    else:
        raise AssertionError(f"double-clicking cell ({row}, {col}) opened no cell editor")
    opened = editor.input_value()
    assert opened == shown, f"opened the cell holding {opened!r}, not ({row}, {col}) = {shown!r}"
    return editor


def edit_cell(
    page: Page, frame: Locator, row: int, col: int, text: str, last_column: bool = False
) -> None:
    """Type `text` into a data-editor cell as a user does: double-click, type, Enter."""
    editor = open_cell_editor(page, frame, row, col, last_column)

    def commit() -> None:
        editor.fill(text)
        page.keyboard.press("Enter")

    rerun_after(page, commit, quiet_ms=CHAIN_QUIET_MS)


def sidebar_field(page: Page, label: str) -> Locator:
    """The text box of the sidebar number field labelled `label` (N, D, seed, eps...)."""
    return (
        sidebar(page)
        .locator('[data-testid="stTextInput"]')
        .filter(
            has=page.locator(
                '[data-testid="stWidgetLabel"]', has_text=re.compile(f"^{re.escape(label)}$")
            )
        )
        .locator("input")
    )


def type_into_field(page: Page, label: str, text: str) -> Locator:
    """Type `text` into a sidebar number field as a user does (select all, type, Enter)."""
    field = sidebar_field(page, label)

    def type_it() -> None:
        field.click()
        page.keyboard.press("ControlOrMeta+a")
        page.keyboard.type(text)
        page.keyboard.press("Enter")

    rerun_after(page, type_it)
    return field
