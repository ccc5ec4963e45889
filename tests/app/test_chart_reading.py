"""Charts that explain themselves (issue 21): one scale across compared panels, exponent
notation, hovers that name their axes, labels at their lines, captions saying what to read."""

from __future__ import annotations

import math

import pytest


def _caption_after_every_chart(lab) -> None:
    """Every chart is followed (before the next chart) by a caption starting "Read"."""
    kinds = []
    for element in lab.at.main:
        name = type(element).__name__
        if name == "Caption":
            kinds.append(("caption", element.value))
        elif getattr(element, "type", "") == "plotly_chart":
            kinds.append(("chart", ""))
    assert ("chart", "") in kinds, "no chart found on the page"
    for position, (kind, _) in enumerate(kinds):
        if kind != "chart":
            continue
        following = [text for k, text in kinds[position + 1 :] if k == "caption"][:3]
        assert any("Read" in text or "colour scale" in text for text in following), kinds


def test_the_three_paths_share_one_symmetric_colour_scale(lab):
    lab.open("Jacobian")
    lab.at.main.toggle(key="w_jacobian_paths_").set_value(True)
    lab.run()
    lab.assert_clean()
    maps = lab.heatmaps()
    assert len(maps) == 4
    scales = {(m["data"][0]["zmin"], m["data"][0]["zmax"]) for m in maps}
    assert len(scales) == 1, scales
    ((low, high),) = scales
    assert low == -high and high > 0
    assert all(m["data"][0]["zmid"] == 0 for m in maps)
    # Titles stand above the axis titles on top: room for both.
    assert all(m["layout"]["margin"]["t"] >= 80 for m in maps)
    _caption_after_every_chart(lab)


def test_the_step_plot_labels_its_lines_in_exponent_notation(lab):
    lab.open("Gradient check")
    (sweep,) = [c for c in lab.charts() if c["data"][0].get("type") == "scatter"]
    layout = sweep["layout"]
    assert layout["xaxis"]["exponentformat"] == "e" and layout["yaxis"]["exponentformat"] == "e"
    for trace in sweep["data"]:
        assert "step h = " in trace["hovertemplate"]
        assert "relative error of dx = " in trace["hovertemplate"]
    lines = [s["x0"] for s in layout["shapes"] if s.get("line", {}).get("dash")]
    labels = {round(a["x"], 9) for a in layout["annotations"] if "default h" in a["text"]}
    # On a log axis the label's x is log10(h): each label stands at its own line.
    assert labels == {round(math.log10(h), 9) for h in lines}
    assert len({a["y"] for a in layout["annotations"]}) == 2  # not on top of each other
    assert {t["marker"]["symbol"] for t in sweep["data"]} == {"circle", "square"}


@pytest.mark.parametrize("page", ["Jacobian", "Gradient check", "Residual block"])
def test_every_chart_has_a_caption_saying_what_to_read(lab, page):
    lab.open(page)
    lab.assert_clean()
    _caption_after_every_chart(lab)


def test_the_batchnorm_histogram_tells_its_parts_apart_without_colour(lab):
    lab.open("LayerNorm vs BatchNorm")
    lab.assert_clean()
    (histogram,) = [c for c in lab.charts() if c["data"][0].get("type") == "histogram"]
    colours = {t["marker"]["color"] for t in histogram["data"]}
    patterns = {t["marker"]["pattern"]["shape"] for t in histogram["data"]}
    assert len(colours) == 2 and len(patterns) == 2
    assert histogram["layout"]["yaxis"]["title"]["text"]
    _caption_after_every_chart(lab)
