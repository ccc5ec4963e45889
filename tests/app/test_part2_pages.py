"""Part 2 pages: each renders at the defaults, reacts to its controls, and reports bad input.

Jacobian, Gradient check, Derivation audit, Residual block, LayerNorm vs BatchNorm and Export
and share. Numbers shown on a page are compared with ln_core run on the session's arrays, so a
page that draws stale or wrong numbers fails here, not only one that crashes.
"""

from __future__ import annotations

import numpy as np
import pytest

import ln_core
from ln_core.bugs import Bug

PART2 = (
    "Jacobian",
    "Gradient check",
    "Derivation audit",
    "Residual block",
    "LayerNorm vs BatchNorm",
    "Export and share",
)
CONSTANT = "Constant vector"
THREE_PATHS = "Show the three paths (direct, through the mean, through the variance)"


def _what_each_page_draws(lab, page: str) -> None:
    """The main result of each page is on screen (not only its title)."""
    if page == "Jacobian":
        assert len(lab.heatmaps()) == 1
        assert {"max |J @ 1|", "dout @ J vs backward's dx"} <= set(lab.metrics())
    elif page == "Gradient check":
        assert lab.subheaders()[0].startswith("The staged backward passes")
        assert "caught by the check" in lab.metrics()
    elif page == "Derivation audit":
        assert len(lab.at.main.dataframe) == 1
    elif page == "Residual block":
        assert set(lab.metrics()) == {"dx vs numerical", "dW vs numerical", "dc vs numerical"}
    elif page == "LayerNorm vs BatchNorm":
        assert len(lab.at.main.dataframe) == 1  # mean and variance per vector, one table
    else:
        assert [b.label for b in lab.at.main.get("download_button")] == [
            "JSON bundle",
            "Compressed .npz",
            "HTML report",
        ]


@pytest.mark.parametrize("page", PART2)
def test_part2_page_runs_clean_at_default_inputs(lab, page):
    lab.open(page)
    lab.assert_clean()
    title = "Residual block (post-LN)" if page == "Residual block" else page
    assert [t.value for t in lab.at.main.title] == [title]
    _what_each_page_draws(lab, page)


# -- controls change the result ------------------------------------------------------------------


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


def _caught(lab) -> tuple[float, str, float]:
    """(dx error, 'yes'/'NO', tolerance) of the Break-the-backward section."""
    metric = next(m for m in lab.at.main.metric if m.label == "caught by the check")
    tolerance = float(metric.proto.help.split("passes below ")[1].split(" ")[0])
    return float(lab.metrics()["dx relative error"]), metric.value, tolerance


def test_every_known_bug_is_caught_at_default_inputs(lab):
    lab.open("Gradient check")
    correct = float(next(v for k, v in lab.metrics().items() if k.startswith("dx:")))
    shown = {}
    for bug in Bug:
        lab.at.main.selectbox(key="bug").set_value(bug)
        lab.run()
        lab.assert_no_exception()
        assert not lab.errors(), lab.errors()
        error, caught, tolerance = _caught(lab)
        shown[bug] = error
        if bug is Bug.EPS_AFTER_SQRT:
            continue  # may hide at eps = 1e-5: checked at eps = 1e-3 below
        assert caught == "yes", f"{bug.value}: dx error {error:g} not caught"
        assert error > tolerance > correct, (bug.value, error, tolerance, correct)
        assert not lab.warnings(), f"{bug.value}: {lab.warnings()}"
    assert len(set(shown.values())) == len(Bug), f"bugs share a dx error: {shown}"


def test_eps_after_sqrt_is_caught_at_a_larger_eps(lab):
    lab.set_sidebar("eps", 1e-3).open("Gradient check")
    lab.at.main.selectbox(key="bug").set_value(Bug.EPS_AFTER_SQRT)
    lab.run()
    lab.assert_clean()
    error, caught, tolerance = _caught(lab)
    assert caught == "yes", f"eps_after_sqrt at eps=1e-3: dx error {error:g}, tol {tolerance:g}"
    assert error > tolerance
    assert not lab.warnings()


def test_gradcheck_tables_follow_the_seed(lab):
    lab.open("Gradient check")
    before = lab.table(0)
    metrics = lab.metrics()
    lab.set_sidebar("seed", 3)
    lab.assert_clean()
    assert lab.differ(before, lab.table(0))
    assert metrics != lab.metrics()


def test_audit_summary_counts_its_wrong_formulas_and_follows_the_seed(lab):
    lab.open("Derivation audit")
    frame = lab.at.main.dataframe[0].value
    heading = lab.subheaders()[0]
    wrong = int((frame["verdict"] == "wrong").sum())
    assert heading == f"{len(frame)} formulas checked: {wrong} wrong on these inputs"
    assert len(lab.at.main.expander) == len(frame)
    assert len(frame) > 0 and set(frame["verdict"]) <= {"correct", "wrong"}

    lab.set_sidebar("seed", 5)
    lab.assert_clean()
    after = lab.at.main.dataframe[0].value
    assert not np.array_equal(frame["error"].to_numpy(), after["error"].to_numpy())


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
    stats = lab.table(0)  # one row per statistic, one column per group
    if axis is None:
        np.testing.assert_allclose(stats[0].reshape(shape), np.mean(x**2, axis=-1, keepdims=True))
        return
    mean, var = stats
    np.testing.assert_allclose(mean.reshape(shape), x.mean(axis=axis, keepdims=True))
    np.testing.assert_allclose(var.reshape(shape), x.var(axis=axis, keepdims=True))


def test_export_snippet_and_link_follow_the_seed(lab):
    lab.open("Export and share")
    link, snippet = (c.value for c in lab.at.main.code)
    assert "seed=0" in link
    lab.set_sidebar("seed", 4)
    lab.assert_clean()
    new_link, new_snippet = (c.value for c in lab.at.main.code)
    assert "seed=4" in new_link
    assert new_snippet != snippet


# -- bad inputs: an error where it happens, the rest of the page still drawn --------------------


def _constant_eps0(lab):
    lab.set_sidebar("preset", CONSTANT).set_sidebar("eps", 0.0)
    assert lab.state["eps"] == 0.0
    return lab


@pytest.mark.parametrize(
    ("page", "still_drawn"),
    [
        ("Jacobian", None),
        (
            "Gradient check",
            ["One vector, closer", "Error against the step h", "Break the backward"],
        ),
        ("Derivation audit", None),
        ("LayerNorm vs BatchNorm", ["Check: BatchNorm on x equals LayerNorm on x transposed"]),
        ("Export and share", ["Link to this view", "Download this example"]),
    ],
)
def test_zero_variance_with_eps_0_shows_an_error_and_the_rest_renders(lab, page, still_drawn):
    _constant_eps0(lab).open(page)
    lab.assert_no_exception()
    errors = lab.errors("main")
    assert errors, f"{page}: no st.error for a zero-variance vector at eps = 0"
    assert all("zero variance" in e for e in errors), errors
    assert lab.at.main.title, f"{page} lost its title"
    for heading in still_drawn or []:
        assert heading in lab.subheaders(), (heading, lab.subheaders())
    if page == "Export and share":
        assert "seed=" in lab.at.main.code[0].value  # the link does not need a defined output
        assert not lab.at.main.get("download_button")


def test_residual_is_defined_for_a_constant_x_at_eps_0(lab):
    # z = x + tanh(xW + c) is not constant although x is, so LN(z) is defined.
    _constant_eps0(lab).open("Residual block")
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


def test_batchnorm_refuses_a_single_vector(lab):
    lab.set_sidebar("shape_kind", "vector").open("LayerNorm vs BatchNorm")
    lab.assert_no_exception()
    errors = lab.errors("main")
    assert len(errors) == 1 and "needs a batch" in errors[0], errors
    assert not lab.at.main.radio  # the page stops before its controls
    assert lab.errors("sidebar") == []


def test_pages_with_an_entry_cap_refuse_a_large_token_batch(lab):
    lab.set_sidebar("shape_kind", "tokens")
    for key, value in (("b", 8), ("l", 16), ("d", 1024)):
        lab.set_sidebar(key, value)
    assert lab.state["x"].shape == (8, 16, 1024)
    caps = {
        "Gradient check": "4,096",
        "LayerNorm vs BatchNorm": "16,384",
        "Residual block": "1,024",
        "Derivation audit": "4,096",
        "Export and share": "4,096",
    }
    for page, cap in caps.items():
        lab.open(page)
        lab.assert_no_exception()
        errors = lab.errors("main")
        assert len(errors) == 1 and cap in errors[0], (page, errors)
        assert lab.at.main.title, f"{page} lost its title"
        assert lab.charts() == [], f"{page} drew charts past its cap"


@pytest.mark.parametrize(("d", "refused"), [(512, False), (513, True)])
def test_jacobian_refuses_d_above_512(lab, d, refused):
    lab.set_sidebar("shape_kind", "vector").set_sidebar("d", d).open("Jacobian")
    lab.assert_no_exception()
    errors = lab.errors("main")
    assert bool(errors) == refused, errors
    if refused:
        assert "D up to 512" in errors[0] and lab.charts() == []
