"""Clicking Next walks the stepper through all twenty steps."""

from __future__ import annotations

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

STEP = r"^Step \d+ of 20"
SCREENSHOT_STEPS = (10, 11, 20)


def test_next_walks_all_twenty_steps(page, server):
    kit.open_page(page, server, "stepper")
    main = kit.main(page)
    next_button = main.locator('[data-testid="stButton"] button').filter(has_text="Next")
    prev_button = main.locator('[data-testid="stButton"] button').filter(has_text="Prev")
    assert kit.heading(page, "h2", STEP).startswith("Step 1 of 20 · forward")
    assert prev_button.is_disabled() and next_button.is_enabled()

    for number in range(2, 21):
        kit.rerun_after(page, next_button.click)
        header = kit.heading(page, "h2", STEP)
        assert header.startswith(f"Step {number} of 20 "), header
        assert ("backward" in header) == (number > 10), header
        found = kit.problems(page) + kit.errors(page.locator("body"))
        assert not found, f"step {number}: {found}\nserver log:\n{server.log_tail()}"
        if number in SCREENSHOT_STEPS:
            kit.screenshot(page, f"stepper_step_{number}")

    assert header.startswith("Step 20 of 20"), header
    assert header.endswith("dx"), header
    assert next_button.is_disabled(), "Next is still enabled on the last step"
    assert prev_button.is_enabled()
    kit.screenshot_bottom(page, "stepper_step_20_bottom")


def test_prev_and_next_stay_in_view_on_a_long_step(page, server):
    """ui/session/presenter.py makes the navigation row sticky: Next and Prev never scroll away."""
    kit.open_page(page, server, "stepper")
    jump = kit.main(page).locator('[data-testid="stSelectbox"]').filter(has_text="Jump to")
    jump.click()
    kit.rerun_after(page, page.get_by_role("option", name="20. ", exact=False).last.click)
    assert kit.heading(page, "h2", STEP).startswith("Step 20 of 20"), "the jump did not land"
    main = kit.main(page)
    scrollable = main.evaluate("e => e.scrollHeight - e.clientHeight")
    assert scrollable > 300, f"step 20 is too short to test scrolling ({scrollable} px)"
    path = kit.screenshot_bottom(page, "stepper_nav_scrolled")
    main.evaluate("e => { e.scrollTop = e.scrollHeight; }")
    page.wait_for_timeout(300)
    for label in ("Prev", "Next"):
        button = main.locator('[data-testid="stButton"] button').filter(has_text=label)
        assert _unobstructed(page, button), (
            f"{label} scrolled out of view at the bottom of step 20 (see {path})"
        )


def _unobstructed(page, button) -> bool:
    """The button's centre is inside the viewport and the topmost element there is the button."""
    box = button.bounding_box()
    if box is None:
        return False
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    if not (0 <= x < kit.VIEWPORT["width"] and 0 <= y < kit.VIEWPORT["height"]):
        return False
    return button.evaluate(
        "(b, [x, y]) => { const top = document.elementFromPoint(x, y); return b.contains(top); }",
        [x, y],
    )
