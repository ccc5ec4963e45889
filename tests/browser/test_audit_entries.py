"""The audit's entries in a real browser: a folded entry draws its explanation when it is
opened (a rerun of the document's fragment), stays open when the inputs change its title, and
folds again."""

from __future__ import annotations

import lnlab_browser_kit as kit
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_an_entry_draws_its_explanation_when_opened_and_keeps_it_as_the_inputs_change(page, server):
    kit.open_page(page, server, "audit")
    entries = kit.main(page).locator('[data-testid="stExpander"]').filter(has_text=": wrong (")
    entry = entries.first
    step = entry.locator("summary").inner_text().split(": wrong (")[0].split("\n")[-1]
    # Folded: nothing of its explanation is on the page yet.
    expect(entry.locator('[data-testid="stMarkdown"]')).to_have_count(0)
    kit.rerun_after(page, lambda: entry.locator("summary").click())
    expect(entry.get_by_text("As written in the document")).to_be_visible()
    expect(entry.locator(".katex").first).to_be_visible()
    expect(entry.get_by_text("The mistake.")).to_be_visible()
    kit.screenshot(page, "audit_entry_opened")

    kit.type_into_field(page, "Random seed", "7")
    # Another seed, another error in the title; the same formula, still open.
    opened = kit.main(page).locator('[data-testid="stExpander"]').filter(has_text=f"{step}: ")
    expect(opened.locator("details[open]")).to_have_count(1)
    expect(opened.get_by_text("As written in the document")).to_be_visible()

    kit.rerun_after(page, lambda: opened.locator("summary").click())
    expect(opened.locator("details[open]")).to_have_count(0)
    kit.type_into_field(page, "Random seed", "8")
    expect(opened.locator("details[open]")).to_have_count(0)
    assert not kit.problems(page), kit.problems(page)
