"""Figures checked through their specs: plotly charts as JSON, the stepper's graph as DOT.

AppTest shows a plotly chart as an element whose proto holds the figure's JSON spec (arrays
may come as plotly's base64 form, decoded by lab.spec_array) and a graphviz chart as its DOT
source.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ln_core
from ln_core.forward import NODE_NAMES


def test_jacobian_heatmap_is_d_by_d_centred_on_zero_and_equals_ln_core(lab):
    lab.set_sidebar("d", 12).open("Jacobian")
    lab.assert_clean()
    (chart,) = lab.heatmaps()
    trace = chart["data"][0]
    z = lab.spec_array(trace["z"])
    assert z.shape == (12, 12)
    assert trace["zmid"] == 0
    assert trace["zmin"] == -trace["zmax"]
    assert trace["zmax"] == pytest.approx(np.abs(z).max(), rel=1e-6)
    s = lab.state
    expected = ln_core.jacobian(s["x"][0], s["gamma"], s["eps"])
    np.testing.assert_allclose(z, expected.astype(np.float32), rtol=1e-6, atol=1e-7)


def test_jacobian_above_300_shows_block_means_and_a_zoom_window(lab):
    lab.set_sidebar("d", 400).open("Jacobian")
    lab.assert_clean()
    overview, window = lab.heatmaps()
    assert "means of 3x3 blocks" in overview["layout"]["title"]["text"]
    assert lab.spec_array(overview["data"][0]["z"]).shape == (134, 134)
    assert lab.spec_array(window["data"][0]["z"]).shape == (128, 128)
    assert [s.label for s in lab.at.main.slider] == [
        "Zoom into J = dy/dx: first row and column of a 128 x 128 window"
    ]
    lab.at.main.slider[0].set_value(64)
    lab.run()
    lab.assert_clean()
    window = lab.heatmaps()[1]
    assert window["layout"]["title"]["text"] == "J = dy/dx, entries 64 to 191"
    assert lab.spec_array(window["data"][0]["x"])[0] == 64


def test_gradcheck_step_plot_has_both_dtypes_on_log_axes(lab):
    lab.open("Gradient check")
    (sweep,) = [c for c in lab.charts() if c["data"][0].get("type") == "scatter"]
    assert [t["name"] for t in sweep["data"]] == ["float64", "float32"]
    assert sweep["layout"]["xaxis"]["type"] == "log"
    assert sweep["layout"]["yaxis"]["type"] == "log"
    f64, f32 = (lab.spec_array(t["y"]) for t in sweep["data"])
    assert f64.shape == f32.shape and f64.size > 3
    # float64 reaches a far smaller error than float32 at its best step.
    assert np.nanmin(f64) < 1e-6 < np.nanmin(f32)
    dashed = [s for s in sweep["layout"].get("shapes", []) if s.get("line", {}).get("dash")]
    assert len(dashed) == 2  # the default h of each dtype


def test_residual_bar_chart_has_three_traces_that_add_up(lab):
    lab.open("Residual block")
    (bars,) = [c for c in lab.charts() if c["data"][0].get("type") == "bar"]
    assert [t["name"] for t in bars["data"]] == [
        "through the skip (= dz)",
        "through F",
        "dx (sum)",
    ]
    skip, through_f, total = (lab.spec_array(t["y"]) for t in bars["data"])
    assert skip.shape == through_f.shape == total.shape == (8,)
    np.testing.assert_allclose(skip + through_f, total, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("norm", "boxes"), [("layer", 3), ("batch", 8)])
def test_batchnorm_heatmap_boxes_the_groups_averaged_together(lab, norm, boxes):
    lab.open("LayerNorm vs BatchNorm")
    lab.widget("radio", "Normalize").set_value(norm)
    lab.run()
    lab.assert_clean()
    first = lab.heatmaps()[0]
    shapes = first["layout"]["shapes"]
    assert len(shapes) == boxes
    widths = {round(s["x1"] - s["x0"], 2) for s in shapes}
    assert widths == ({8.0} if norm == "layer" else {0.9})


def _current_lines(dot: str) -> list[str]:
    """The node statements drawn with the thick border of the current step."""
    return [line.strip() for line in dot.splitlines() if "penwidth=3" in line]


@pytest.mark.parametrize("number", [1, 5, 10, 11, 19])
def test_stepper_graph_highlights_the_current_node(lab, number):
    lab.open("Stepper").step_to(number)
    lab.assert_clean()
    dot = lab.graph()
    node = NODE_NAMES[number - 1] if number <= 10 else NODE_NAMES[20 - number]
    lines = _current_lines(dot)
    assert len(lines) == 1, lines
    assert re.match(rf"{node} \[", lines[0]), (node, lines)
    assert 'fillcolor="#ffe066"' in lines[0]
    assert dot.count('fillcolor="#ffe066"') == 1


def test_stepper_graph_changes_with_the_step(lab):
    lab.open("Stepper")
    first = lab.graph()
    lab.click("Next")
    second = lab.graph()
    assert first != second
    assert _current_lines(first)[0].startswith("sample_mean [")
    assert _current_lines(second)[0].startswith("x_sm [")


def test_stepper_last_step_also_highlights_x(lab):
    lab.open("Stepper").step_to(20)
    lab.assert_clean()
    lines = _current_lines(lab.graph())
    assert [line.split(" ")[0] for line in lines] == ["sample_mean", "x"]
