"""Every page opens with its one idea (issue 36): at 1440 x 900 and on a 1024 x 768 projector,
the page's heading, its idea sentence and its main figure or result lie within the first
screen, before any scrolling. The Stepper's one screen per step is tested with the Stepper."""

from __future__ import annotations

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

PAGES = [p for p in kit.lab_pages() if p.name != "stepper"]
SIZES = {"desk": {"width": 1440, "height": 900}, "projector": {"width": 1024, "height": 768}}
# What must be on the first screen: the heading, the idea (ui.draw.opening) and the figure.
PARTS = {
    "heading": '[data-testid="stMain"] h1',
    "idea": '[data-testid="stMain"] .st-key-idea',
    "main figure": '[data-testid="stMain"] .st-key-main_figure',
}
_BOX = """
(selector) => {
  const e = document.querySelector(selector);
  if (!e) return null;
  const r = e.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, height: r.height};
}
"""


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("app_page", PAGES, ids=[p.name for p in PAGES])
def test_the_heading_idea_and_main_figure_are_on_the_first_screen(browser, server, app_page, size):
    viewport = SIZES[size]
    tab = kit.new_tab(browser, viewport)
    try:
        kit.open_page(tab, server, app_page.url_path)
        assert not kit.problems(tab), kit.problems(tab)
        tab.wait_for_timeout(500)  # charts take their height after the run
        off = {}
        for part, selector in PARTS.items():
            box = tab.evaluate(_BOX, selector)
            assert box is not None, f"{app_page.title}: no {part} ({selector})"
            assert box["height"] > 0, f"{app_page.title}: the {part} is empty"
            if box["top"] < 0 or box["bottom"] > viewport["height"]:
                off[part] = box
        if off:
            shot = kit.screenshot(tab, f"first_screen_{size}_{app_page.name}")
            pytest.fail(f"{app_page.title} at {viewport}: off the first screen: {off} ({shot})")
    finally:
        tab.context.close()
