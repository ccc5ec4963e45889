"""The Jacobian heatmap and the gradient check's step-size plot are drawn by plotly."""

from __future__ import annotations

import lnlab_browser_kit as kit
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

CHART = '[data-testid="stPlotlyChart"]'


def _assert_drawn(chart, marks: str, what: str) -> None:
    """A plotly figure: its svg is in the page and holds the marks of its traces."""
    expect(chart.locator("svg.main-svg").first).to_be_attached(timeout=15_000)
    expect(chart.locator(marks).first).to_be_attached(timeout=15_000)
    box = chart.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 200, f"{what} is tiny: {box}"


def test_jacobian_heatmap_is_drawn(page, server):
    kit.open_page(page, server, "jacobian")
    assert not kit.problems(page), kit.problems(page)
    heatmap = kit.main(page).locator(CHART).filter(has_text="J = dy/dx")
    expect(heatmap).to_have_count(1)
    _assert_drawn(heatmap, "g.hm image", "the Jacobian heatmap")
    eigenvalues = kit.main(page).locator(CHART).filter(has_text="eigenvalue")
    _assert_drawn(eigenvalues, "g.trace.scatter path.point", "the eigenvalue plot")


def test_gradient_check_step_plot_is_drawn(page, server):
    # No bug is injected until one is chosen; the link chooses one, so its Jacobian gap shows.
    kit.open_page(page, server, "gradcheck?bug=drop_variance_path")
    assert not kit.problems(page), kit.problems(page)
    sweep = kit.main(page).locator(CHART).filter(has_text="step h")
    expect(sweep).to_have_count(1)
    _assert_drawn(sweep, "g.trace.scatter path.js-line", "the step-size plot")
    # One curve per dtype, both in the legend.
    expect(sweep.locator("g.trace.scatter")).to_have_count(2)
    legend = sweep.locator("g.legend text.legendtext").all_text_contents()
    assert sorted(legend) == ["float32", "float64"], legend
    bug_map = kit.main(page).locator(CHART).filter(has_text="where the bug lives")
    _assert_drawn(bug_map, "g.hm image", "the bug's Jacobian gap")
