"""Typing a number into the x data editor changes what the other pages compute."""

from __future__ import annotations

import lnlab_browser_kit as kit
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

NEW_VALUE = "7.5"


def _first_table(page):
    return kit.main(page).locator('[data-testid="stDataFrame"]').first


def _stepper_mean(page) -> float:
    """Step 1's value for the vector on screen (row 0): the Stepper's first number, every digit
    of which its cell's title carries ("[0] <value>")."""
    kit.heading(page, "h2", r"^Step 1 of 20 .*sample_mean")
    cell = kit.main(page).locator(".lnlab-block.lnlab-essential .lnlab-cell").first
    expect(cell).to_be_visible()
    return float(cell.get_attribute("title").split("] ", 1)[1])


def test_typing_into_x_changes_the_stepper(page, server):
    # Without the edit: step 1 of the stepper shows row 0's mean.
    kit.open_page(page, server, "stepper")
    mean_before = _stepper_mean(page)

    kit.goto_in_session(page, "inputs")
    editor = _first_table(page)
    old = float(kit.grid_value(editor, 0, 0))
    d = editor.locator('th[role="columnheader"]').count() - 1
    kit.edit_cell(page, editor, 0, 0, NEW_VALUE)
    kit.screenshot(page, "inputs_after_edit")
    assert not kit.problems(page), f"{kit.problems(page)}\nserver log:\n{server.log_tail()}"
    assert not kit.errors(page.locator("body")), kit.errors(page.locator("body"))
    # The edit survives the app's reruns (the edit's own, then its st.rerun).
    expect(kit.grid_cell(editor, 0, 0)).to_have_text(NEW_VALUE)

    kit.goto_in_session(page, "stepper")
    kit.screenshot(page, "stepper_after_edit")
    mean_after = _stepper_mean(page)
    assert mean_after != pytest.approx(mean_before), "the stepper still shows the old mean"
    # The Inputs table shows x[0, 0] to five significant digits: off by at most 5e-6 / d.
    assert mean_after == pytest.approx(mean_before + (float(NEW_VALUE) - old) / d, abs=1e-6)

    # Coming back, the editor shows the edited number, not the preset's.
    kit.goto_in_session(page, "inputs")
    expect(kit.grid_cell(_first_table(page), 0, 0)).to_have_text(NEW_VALUE)
