"""LayerNorm vs BatchNorm page: the statistics and the boxed groups follow the chosen
normalization; a single vector is refused."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize(
    ("norm", "shape", "axis"),
    [("layer", (3, 1), -1), ("batch", (1, 8), 0), ("rms", (3, 1), None)],
)
def test_batchnorm_radio_changes_the_statistics_tables(lab, norm, shape, axis):
    lab.open("LayerNorm vs BatchNorm")
    lab.widget("radio", "Normalize").set_value(norm)
    lab.run()
    lab.assert_clean()
    assert lab.state["norm_kind"] == norm
    x = lab.state["x"]
    assert len(lab.at.main.dataframe) == 1
    stats = lab.table(0).T  # the table has one row per group, one column per statistic
    if axis is None:
        np.testing.assert_allclose(stats[0].reshape(shape), np.mean(x**2, axis=-1, keepdims=True))
        return
    mean, var = stats
    np.testing.assert_allclose(mean.reshape(shape), x.mean(axis=axis, keepdims=True))
    np.testing.assert_allclose(var.reshape(shape), x.var(axis=axis, keepdims=True))


@pytest.mark.parametrize(("norm", "boxes"), [("layer", 3), ("batch", 8)])
def test_batchnorm_heatmap_boxes_the_groups_averaged_together(lab, norm, boxes):
    lab.open("LayerNorm vs BatchNorm")
    lab.widget("radio", "Normalize").set_value(norm)
    lab.run()
    lab.assert_clean()
    first = lab.heatmaps()[0]
    (outline,) = [t for t in first["data"] if t.get("name") == "groups"]
    rectangles = _paths(lab.spec_array(outline["x"]))
    assert len(rectangles) == boxes
    widths = {round(max(xs) - min(xs), 2) for xs in rectangles}
    assert widths == ({8.0} if norm == "layer" else {0.9})


def _paths(xs: np.ndarray) -> list[np.ndarray]:
    """The x coordinates of each path of a line trace whose paths are separated by NaN."""
    ends = np.flatnonzero(np.isnan(xs))
    return [xs[start + 1 : end] for start, end in zip(np.r_[-1, ends[:-1]], ends, strict=True)]


def test_batchnorm_refuses_a_single_vector(lab):
    lab.set_sidebar("shape_kind", "vector").open("LayerNorm vs BatchNorm")
    lab.assert_no_exception()
    errors = lab.errors("main")
    assert len(errors) == 1 and "needs a batch" in errors[0], errors
    assert not lab.at.main.radio  # the page stops before its controls
    assert lab.errors("sidebar") == []


@pytest.mark.parametrize(
    ("params", "advice", "wrong_advice"),
    [
        # One vector: each feature's group holds one value, which normalizes to exactly 0
        # whatever eps or gamma: only a larger batch resolves anything.
        ({"n": "1", "eps": "0.01"}, "Try N ≥ 3: with N = 1", ("D ≥ 3", "eps ≥", "a random gamma")),
        # Two vectors: each feature normalizes to about ±1; D is not the group here, N is.
        ({"n": "2", "eps": "0"}, "N ≥ 3 (with N = 2 every feature", ("D ≥ 3", "true value")),
    ],
)
def test_batchnorm_cannot_resolve_advice_names_the_batch(open_link, params, advice, wrong_advice):
    lab = open_link({"shape": "rows", "d": "4", "norm": "batch", **params})
    lab.open("LayerNorm vs BatchNorm")
    lab.assert_clean()
    said = [c.value for c in lab.at.main.caption if "Cannot resolve" in c.value]
    assert said, [c.value for c in lab.at.main.caption]
    for sentence in said:
        assert advice in sentence, sentence
        assert not [w for w in wrong_advice if w in sentence], sentence
