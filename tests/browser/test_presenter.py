"""Teaching from the back row: a 1024 x 768 projector in presenter mode and a 390 x 844 phone.

Every page is screenshotted at both sizes (screenshots/view_<size>_<page>[_bottom].png) and
checked for what a student at the back cannot work around: graph labels smaller than the
page's body text, and formulas or controls cut off by their box. Presenter mode must leave the
screen to the content, keep the controls one click away, and step with the keyboard.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

PAGES = kit.lab_pages()
STEP = r"^Step \d+ of 20"


@dataclass(frozen=True)
class View:
    name: str
    width: int
    height: int
    query: str  # what the link adds: presenter mode on the projector

    @property
    def size(self) -> str:
        return f"{self.width}x{self.height}"


PROJECTOR = View("projector", 1024, 768, "presenter=1")
PHONE = View("phone", 390, 844, "")
VIEWS = (PROJECTOR, PHONE)

# The body text's size on the page, and the rendered size of every visible graph label.
_SIZES = """
() => {
  const body = document.querySelector(
    '[data-testid="stMain"] [data-testid="stMarkdownContainer"] p');
  const labels = [...document.querySelectorAll('.lnlab-graph text')]
    .filter(t => t.getBoundingClientRect().width > 0)
    .map(t => ({text: t.textContent,
                px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a}));
  return {body: parseFloat(getComputedStyle(body).fontSize), labels};
}
"""
# What is cut off: a formula or a control whose content overflows a box that hides the rest
# (a box that scrolls keeps it reachable), or that runs off the side of the screen.
_CLIPPED = r"""
(strict) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const found = [];
  const hides = (e) => ["hidden", "clip"].includes(getComputedStyle(e).overflowX);
  const scrolls = (e) => ["auto", "scroll"].includes(getComputedStyle(e).overflowX);
  const name = (e) => (e.innerText || e.textContent || "").replace(/\s+/g, " ").trim()
    .slice(0, 60);
  const check = (content, what) => {
    const r = content.getBoundingClientRect();
    if (r.width === 0) return;
    if (r.left < -1 || r.right > window.innerWidth + 1) {
      found.push(`${what} "${name(content)}" runs off the screen`); return;
    }
    for (let box = content.parentElement; box && box !== main; box = box.parentElement) {
      if (scrolls(box)) {
        if (strict && box.scrollWidth > box.clientWidth + 1)
          found.push(`${what} "${name(content)}" needs scrolling sideways `
                     + `(${box.scrollWidth} > ${box.clientWidth} px)`);
        return;
      }
      const b = box.getBoundingClientRect();
      if (hides(box) && (r.left < b.left - 1 || r.right > b.right + 1)) {
        found.push(`${what} "${name(content)}" is cut off by its box`); return;
      }
    }
  };
  main.querySelectorAll('.katex-display > .katex').forEach(e => check(e, "formula"));
  const texts = main.querySelectorAll(
    'button p, button span, [data-baseweb="select"] div, [data-testid="stWidgetLabel"] p, '
    + '[data-testid="stMetricValue"] div, [data-testid="stMetricLabel"] p, [role="tab"] p');
  texts.forEach(e => {
    if (e.children.length === 0 && e.scrollWidth > e.clientWidth + 1 && hides(e))
      found.push(`control text "${name(e)}" is cut off (${e.scrollWidth} > ${e.clientWidth} px)`);
  });
  main.querySelectorAll('*').forEach(e => {
    const style = getComputedStyle(e);
    if (style.textOverflow === "ellipsis" && hides(e) && e.clientWidth > 0
        && e.scrollWidth > e.clientWidth + 1)
      found.push(`"${name(e)}" ends in an ellipsis (${e.scrollWidth} > ${e.clientWidth} px)`);
  });
  main.querySelectorAll('input[type="text"], input[type="number"]').forEach(e => {
    if (e.scrollWidth > e.clientWidth + 1)
      found.push(`field "${e.value}" is cut off (${e.scrollWidth} > ${e.clientWidth} px)`);
  });
  main.querySelectorAll('button, [data-baseweb="select"]').forEach(e => check(e, "control"));
  return found;
}
"""


@pytest.fixture(params=VIEWS, ids=[v.name for v in VIEWS])
def viewed(request, browser, server) -> Iterator[tuple[object, View]]:
    """A fresh session in a browser window of the view's size."""
    view = request.param
    context = browser.new_context(viewport={"width": view.width, "height": view.height})
    context.add_init_script(kit.INIT_SCRIPT)
    context.set_default_timeout(30_000)
    tab = context.new_page()
    yield tab, view
    context.close()


def _open(tab, server, view: View, url_path: str, extra: str = "") -> None:
    query = "&".join(q for q in (view.query, extra) if q)
    kit.open_page(tab, server, f"{url_path}?{query}" if query else url_path)


def _sidebar_width(tab) -> float:
    """How much of the screen's width the sidebar covers (a collapsed one sits off screen)."""
    box = kit.sidebar(tab).bounding_box()
    if box is None or not kit.sidebar(tab).is_visible():
        return 0.0
    width = tab.viewport_size["width"]
    return max(0.0, min(box["x"] + box["width"], width) - max(box["x"], 0.0))


def _assert_graph_legible(tab, where: str) -> None:
    sizes = tab.evaluate(_SIZES)
    labels = sizes["labels"]
    assert labels, f"{where}: no graph label on screen"
    small = [(lab["text"], round(lab["px"], 1)) for lab in labels if lab["px"] < sizes["body"]]
    assert not small, f"{where}: labels below the body text's {sizes['body']} px: {small}"


@pytest.mark.parametrize("app_page", PAGES, ids=[p.name for p in PAGES])
def test_every_page_fits_the_projector_and_the_phone(viewed, server, app_page):
    tab, view = viewed
    _open(tab, server, view, app_page.url_path)
    where = f"{app_page.title} at {view.size}"
    top = kit.screenshot(tab, f"view_{view.size}_{app_page.name}")
    bottom = kit.screenshot_bottom(tab, f"view_{view.size}_{app_page.name}_bottom")
    assert not kit.problems(tab), f"{where}: {kit.problems(tab)}"
    assert _sidebar_width(tab) == 0, f"{where}: the sidebar takes the screen (see {top})"
    # Below 640 px a formula may scroll inside its box; on the projector everything fits.
    clipped = tab.evaluate(_CLIPPED, view is PROJECTOR)
    assert not clipped, f"{where} (see {top}, {bottom}): {clipped}"
    if app_page.name == "stepper":
        _assert_graph_legible(tab, where)


def test_the_last_step_fits_too(viewed, server):
    """Step 20 has the longest name in Jump to and lights x in the graph as well."""
    tab, view = viewed
    _open(tab, server, view, "stepper", "step=20")
    assert kit.heading(tab, "h2", STEP).startswith("Step 20 of 20")
    path = kit.screenshot(tab, f"view_{view.size}_stepper_step_20")
    _assert_graph_legible(tab, f"step 20 at {view.size}")
    clipped = tab.evaluate(_CLIPPED, view is PROJECTOR)
    assert not clipped, f"step 20 at {view.size} (see {path}): {clipped}"


def _presenter_tab(browser, server):
    context = browser.new_context(viewport={"width": PROJECTOR.width, "height": PROJECTOR.height})
    context.add_init_script(kit.INIT_SCRIPT)
    context.set_default_timeout(30_000)
    return context, context.new_page()


def test_presenter_mode_hides_the_sidebar_and_the_controls_bring_it_back(browser, server):
    context, tab = _presenter_tab(browser, server)
    try:
        _open(tab, server, PROJECTOR, "stepper")
        assert _sidebar_width(tab) == 0
        main = kit.main(tab).bounding_box()
        assert main["width"] > 0.95 * PROJECTOR.width, f"the content gets {main['width']} px"
        tab.get_by_role("button", name="Controls").click()
        show = tab.get_by_text("Show the sidebar", exact=True)
        kit.rerun_after(tab, show.click)
        assert _sidebar_width(tab) > 200, "the Controls toggle did not bring the sidebar back"
        assert kit.sidebar(tab).get_by_text("Presenter mode").is_visible()
        if not show.is_visible():
            tab.get_by_role("button", name="Controls").click()
        kit.rerun_after(tab, show.click)
        assert _sidebar_width(tab) == 0
    finally:
        context.close()


def _wait_for_step(tab, number: int) -> None:
    """Wait until the heading shows step `number` (the browser steps without a run)."""
    tab.wait_for_function(
        """(n) => [...document.querySelectorAll('[data-testid="stMain"] h2')]
             .some(h => h.innerText.startsWith(`Step ${n} of 20`))""",
        arg=number,
        timeout=kit.RUN_TIMEOUT_MS,
        polling=100,
    )


def test_a_clicker_steps_the_stepper_from_the_keyboard(browser, server):
    context, tab = _presenter_tab(browser, server)
    try:
        _open(tab, server, PROJECTOR, "stepper", "step=10")
        note = kit.main(tab).get_by_text("Page Down for Next")
        assert note.is_visible(), "presenter mode does not say how to step with the keyboard"
        tab.wait_for_function("() => typeof window.__lnlabKeys === 'function'")
        kit.heading(tab, "h2", STEP)
        kit.main(tab).locator("h2").first.click()  # the focus on the page, not in a control
        for key, number in (
            ("ArrowRight", 11),
            ("PageDown", 12),
            ("ArrowLeft", 11),
            ("PageUp", 10),
            ("PageDown", 11),
            ("PageDown", 12),
        ):
            tab.keyboard.press(key)  # the browser steps alone: no run to wait for
            _wait_for_step(tab, number)
            assert kit.heading(tab, "h2", STEP).startswith(f"Step {number} of 20"), key
        kit.screenshot(tab, "view_1024x768_stepper_after_keys")
    finally:
        context.close()


def test_keys_typed_into_a_control_do_not_step(browser, server):
    context, tab = _presenter_tab(browser, server)
    try:
        _open(tab, server, PROJECTOR, "stepper", "step=3")
        tab.wait_for_function("() => typeof window.__lnlabKeys === 'function'")
        slider = kit.main(tab).get_by_role("slider")
        slider.focus()
        tab.keyboard.press("ArrowRight")
        _wait_for_step(tab, 4)  # the slider moved one step, the listener added none
        tab.wait_for_timeout(300)
        assert kit.heading(tab, "h2", STEP).startswith("Step 4 of 20")
    finally:
        context.close()
