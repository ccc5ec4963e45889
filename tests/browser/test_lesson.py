"""A lesson at the projector, on a phone and at a desk (issue 21), in a real browser.

What AppTest cannot see: where things land on a 1024 x 768 screen, the colours a student reads,
and what a clicker's keys do. Screenshots go to screenshots/lesson_<what>.png.
"""

from __future__ import annotations

from collections.abc import Iterator

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

STEP = r"^Step \d+ of 20"
PROJECTOR = {"width": 1024, "height": 768}
PHONE = {"width": 390, "height": 844}

# WCAG's contrast of two CSS colours (rgb() or rgba() on white), in the page.
_CONTRAST_JS = """
() => {
  const rgb = (text) => text.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => p - q);
                            return (y + 0.05) / (x + 0.05); };
  window.__lnlabContrast = {rgb, ratio};
}
"""


@pytest.fixture
def tab(browser, server, request) -> Iterator[object]:
    """A fresh session in a window of the size the test names (default: the projector)."""
    page = kit.new_tab(browser, getattr(request, "param", PROJECTOR))
    yield page
    page.context.close()


def _box(locator) -> dict:
    box = locator.first.bounding_box()
    assert box is not None, f"{locator} is not on screen"
    return box


def test_one_projector_screen_holds_the_graph_the_line_and_the_value(tab, server):
    kit.open_page(tab, server, "stepper?presenter=1&step=8")
    path = kit.screenshot(tab, "lesson_projector_step8")
    graph = _box(kit.main(tab).locator(".st-key-graph_focused svg"))
    line = _box(kit.main(tab).locator(".katex-display:visible"))
    value = _box(kit.main(tab).locator(".lnlab-block"))
    height = PROJECTOR["height"]
    assert graph["y"] + graph["height"] <= height, f"the graph runs below the screen ({path})"
    assert line["y"] + line["height"] <= height, f"the line is below the screen ({path})"
    assert value["y"] + value["height"] <= height, f"the value is below the screen ({path})"
    assert graph["x"] + graph["width"] <= value["x"], "the graph and the value are not side by side"


def test_primary_buttons_read_at_the_back_of_the_room(tab, server):
    kit.open_page(tab, server, "stepper?presenter=1&step=8")
    tab.evaluate(_CONTRAST_JS)
    colours = tab.evaluate(
        """() => {
          const button = [...document.querySelectorAll('.st-key-stepper_nav button')]
            .find(b => b.innerText.trim().endsWith("Next"));
          const label = button.querySelector('.lnlab-label');
          const {rgb, ratio} = window.__lnlabContrast;
          const back = rgb(getComputedStyle(button).backgroundColor);
          return {label: getComputedStyle(label).color,
                  icon: getComputedStyle(button, "::after").color,
                  ratio: ratio(rgb(getComputedStyle(label).color), back)};
        }"""
    )
    assert colours["label"] == colours["icon"], colours
    assert colours["ratio"] >= 4.5, colours


def test_captions_are_black_and_opaque_in_presenter_mode(tab, server):
    kit.open_page(tab, server, "stepper?presenter=1&step=8")
    looks = tab.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stMain"] '
                 + '[data-testid="stCaptionContainer"]')]
             .filter(e => e.offsetParent !== null)
             .map(e => [getComputedStyle(e).color, getComputedStyle(e).opacity])"""
    )
    assert looks
    assert all(colour == "rgb(0, 0, 0)" and opacity == "1" for colour, opacity in looks), looks


def test_the_sticky_navigation_stays_below_the_header_when_scrolled(tab, server):
    kit.open_page(tab, server, "stepper?step=20")
    kit.main(tab).evaluate("e => { e.scrollTop = 1500; }")
    tab.wait_for_timeout(300)
    path = kit.screenshot(tab, "lesson_projector_sticky_nav")
    header = _box(tab.locator('[data-testid="stHeader"]'))
    nav = _box(tab.locator(".st-key-stepper_nav"))
    assert nav["y"] >= header["y"] + header["height"] - 1, f"the row is cut ({path})"


def _step(tab) -> str:
    return kit.heading(tab, "h2", STEP)


def _press(tab, key: str) -> None:
    """A key on the page (not in a control); the Stepper steps in the browser, no run."""
    kit.main(tab).locator("h2").first.click()
    tab.keyboard.press(key)


@pytest.mark.parametrize("query", ["presenter=1&step=20", "step=20"], ids=["presenter", "desk"])
def test_past_the_last_step_the_clicker_leads_on_to_the_next_page(tab, server, query):
    kit.open_page(tab, server, f"stepper?{query}")
    tab.wait_for_function("() => typeof window.__lnlabKeys === 'function'")
    _press(tab, "PageDown")
    tab.wait_for_url("**/jacobian*", timeout=kit.RUN_TIMEOUT_MS)
    kit.wait_for_script(tab)
    assert not kit.problems(tab)


def test_before_the_first_step_the_clicker_goes_back_a_page(tab, server):
    kit.open_page(tab, server, "stepper?step=1")
    tab.wait_for_function("() => typeof window.__lnlabKeys === 'function'")
    _press(tab, "PageUp")
    tab.wait_for_url("**/inputs*", timeout=kit.RUN_TIMEOUT_MS)


def test_arrow_keys_step_outside_presenter_mode_but_not_while_typing(tab, server):
    kit.open_page(tab, server, "stepper?step=3")
    tab.wait_for_function("() => typeof window.__lnlabKeys === 'function'")
    _press(tab, "ArrowRight")
    tab.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stMain"] h2')]
             .some(h => h.innerText.startsWith("Step 4 of 20"))"""
    )
    assert _step(tab).startswith("Step 4 of 20")
    field = kit.sidebar_field(tab, "Random seed")
    field.click()
    tab.keyboard.press("ArrowRight")
    tab.wait_for_timeout(800)
    assert _step(tab).startswith("Step 4 of 20"), "a key typed into a field stepped"


@pytest.mark.parametrize("tab", [{"width": 1440, "height": 900}], indirect=True)
def test_the_first_tab_skips_the_sidebar_to_the_page(tab, server):
    kit.open_page(tab, server, "stepper")
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.id") == "lnlab-skip"
    assert tab.locator("#lnlab-skip").is_visible(), "the focused skip link is not shown"
    tab.keyboard.press("Enter")
    presses = 0
    while presses < 10:
        tab.keyboard.press("Tab")
        presses += 1
        if tab.evaluate("document.activeElement.innerText || ''").strip().endswith("Next"):
            break
    assert presses <= 4, f"Next took {presses} Tabs after the skip link"


def test_each_tab_is_titled_with_its_page(tab, server):
    kit.open_page(tab, server, "stepper")
    assert tab.title() == "Stepper · LayerNorm Lab"
    kit.open_page(tab, server, "jacobian")
    assert tab.title() == "Jacobian · LayerNorm Lab"


def test_a_link_to_a_hidden_page_says_it_is_not_part_of_the_lesson(tab, server):
    kit.open_page(tab, server, "jacobian?hide=jacobian,audit")
    path = kit.screenshot(tab, "lesson_hidden_page")
    assert not kit.not_found_dialogs(tab), f"Streamlit's Page not found ({path})"
    assert "not part of this lesson" in kit.main(tab).inner_text()
    assert not kit.nav_link(tab, "jacobian").is_visible(), "the hidden page is in the menu"
