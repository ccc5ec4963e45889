"""Residual block page: metrics and bars follow the inputs and add up; a constant x is fine at
eps = 0; D past the cap is refused."""

from __future__ import annotations

import numpy as np
import pytest

CONSTANT = "Constant vector"


def _bars(lab) -> list[np.ndarray]:
    (bars,) = [c for c in lab.charts() if c["data"][0].get("type") == "bar"]
    return [lab.spec_array(trace["y"]) for trace in bars["data"]]


def test_residual_metrics_and_bars_follow_the_seed(lab):
    lab.open("Residual block")
    before, metrics = _bars(lab), lab.metrics()
    assert all(float(v) < 1e-6 for v in metrics.values()), metrics
    lab.set_sidebar("seed", 9)
    lab.assert_clean()
    after = _bars(lab)
    assert any(lab.differ(b, a) for b, a in zip(before, after, strict=True))
    assert metrics != lab.metrics()


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


def test_residual_is_defined_for_a_constant_x_at_eps_0(lab):
    # z = x + tanh(xW + c) is not constant although x is, so LN(z) is defined.
    lab.set_sidebar("preset", CONSTANT).set_sidebar("eps", 0.0).open("Residual block")
    lab.assert_no_exception()
    assert lab.errors("main") == []
    assert len(lab.metrics()) == 3


@pytest.mark.parametrize(("d", "refused"), [(32, False), (33, True), (64, True)])
def test_residual_refuses_d_above_its_cap(lab, d, refused):
    lab.set_sidebar("d", d).open("Residual block")
    lab.assert_no_exception()
    errors = lab.errors("main")
    if not refused:
        assert errors == [] and len(lab.metrics()) == 3
        return
    assert len(errors) == 1, errors
    assert f"D = {d}" in errors[0] and "D up to 32" in errors[0], errors[0]
    assert lab.metrics() == {}
    assert lab.at.main.title[0].value == "Residual block (post-LN)"
    assert lab.sidebar("preset").value == "Random normal"  # the sidebar is still drawn
