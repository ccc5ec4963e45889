"""Jacobian page: the heatmap equals ln_core's J, follows the seed and the row, splits into
three paths, and shows block means with a zoom window past 300."""

from __future__ import annotations

import numpy as np
import pytest

import ln_core

THREE_PATHS = "Show the three paths"


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


def test_jacobian_follows_the_seed_and_the_chosen_row(lab):
    lab.open("Jacobian")
    before = lab.spec_array(lab.heatmaps()[0]["data"][0]["z"])
    lab.set_sidebar("seed", 11)
    lab.assert_clean()
    after_seed = lab.spec_array(lab.heatmaps()[0]["data"][0]["z"])
    assert lab.differ(before, after_seed)

    lab.widget("number_input", "Row").set_value(2)
    lab.run()
    lab.assert_clean()
    assert lab.state["view_b"] == 2
    shown = lab.spec_array(lab.heatmaps()[0]["data"][0]["z"])
    expected = ln_core.jacobian(lab.state["x"][2], lab.state["gamma"], lab.state["eps"])
    np.testing.assert_allclose(shown, expected.astype(np.float32), rtol=1e-6, atol=1e-7)


def test_jacobian_three_paths_toggle_draws_four_heatmaps_that_sum_to_j(lab):
    lab.open("Jacobian")
    (single,) = lab.heatmaps()
    j = lab.spec_array(single["data"][0]["z"])

    lab.widget("toggle", THREE_PATHS).set_value(True)
    lab.run()
    lab.assert_clean()
    parts = lab.heatmaps()
    titles = [p["layout"]["title"]["text"] for p in parts]
    assert titles == ["direct", "through the mean", "through the variance", "sum = J"]
    direct, mean, variance, total = (lab.spec_array(p["data"][0]["z"]) for p in parts)
    np.testing.assert_allclose(total, j, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(direct + mean + variance, total, rtol=1e-5, atol=1e-5)
    # The direct path is diagonal; the mean path does not depend on the column.
    np.testing.assert_array_equal(direct, np.diag(np.diag(direct)))
    np.testing.assert_allclose(mean, mean[:, :1] * np.ones_like(mean), rtol=1e-6)


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


@pytest.mark.parametrize(("d", "refused"), [(512, False), (513, True)])
def test_jacobian_refuses_d_above_512(lab, d, refused):
    lab.set_sidebar("shape_kind", "vector").set_sidebar("d", d).open("Jacobian")
    lab.assert_no_exception()
    errors = lab.errors("main")
    assert bool(errors) == refused, errors
    if refused:
        assert "D up to 512" in errors[0] and lab.charts() == []


@pytest.mark.parametrize("seed", ["0", "1"])
def test_jacobian_never_fails_a_right_j_on_the_large_offset_preset_in_float32(open_link, seed):
    # x about 2000 with sigma about 1: x - mean carries the mean's rounding, about 2000 ulp of
    # xhat, so J @ 1 is about 3e-4 in float32. That is rounding, not a wrong J.
    # The preset's suggested dtype, as choosing it in the sidebar sets.
    preset = {"preset": "Large common offset (about 2000)", "dtype": "float32", "seed": seed}
    lab = open_link(preset)
    assert lab.state["dtype"] == "float32" and lab.state["x"].mean() > 1000
    lab.open("Jacobian")
    lab.assert_clean()
    captions = [c.value for c in lab.at.main.caption]
    verdicts = [c for c in captions if c.startswith(":material")]
    assert len(verdicts) >= 4, captions
    assert not [c for c in verdicts if "Fail:" in c], verdicts
    assert any("Pass:" in c and "rounding" in c for c in verdicts), verdicts
    # eps's part of J x̂ (about 7e-5) drowns in that rounding: not a pass, not a fail.
    assert any("Cannot resolve:" in c and "J x̂ of 0" in c for c in verdicts), verdicts
    # Every fact that cannot resolve names what would: float64 and a smaller offset.
    for caption in (c for c in verdicts if "Cannot resolve:" in c):
        assert "float64" in caption and "smaller common offset" in caption, caption
