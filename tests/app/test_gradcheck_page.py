"""Gradient check page: its tables follow the inputs, its step plot compares the dtypes, and
every injected bug is caught."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ln_core.bugs import CAUGHT, Bug


def _caught(lab) -> tuple[float, str]:
    """(buggy dx's relative error, the caught verdict) of the Break-the-backward section."""
    metric = next(m for m in lab.at.main.metric if m.label == "caught by the check")
    return float(lab.metrics()["buggy dx relative error"]), metric.value


def test_every_known_bug_is_caught_at_default_inputs(lab):
    lab.open("Gradient check")
    correct = float(next(v for k, v in lab.metrics().items() if k.startswith("dx:")))
    shown = {}
    for bug in Bug:
        lab.at.main.selectbox(key="w_bug_").set_value(bug.value)
        lab.run()
        lab.assert_no_exception()
        assert not lab.errors(), lab.errors()
        error, caught = _caught(lab)
        shown[bug] = error
        if bug is Bug.EPS_AFTER_SQRT:
            continue  # may hide at eps = 1e-5: checked at eps = 1e-3 below
        assert caught == CAUGHT, f"{bug.value}: dx error {error:g} not caught"
        assert error > correct, (bug.value, error, correct)
        assert not lab.warnings(), f"{bug.value}: {lab.warnings()}"
    assert len(set(shown.values())) == len(Bug), f"bugs share a dx error: {shown}"


def test_eps_after_sqrt_is_caught_at_a_larger_eps(lab):
    lab.set_sidebar("eps", 1e-3).open("Gradient check")
    lab.at.main.selectbox(key="w_bug_").set_value(Bug.EPS_AFTER_SQRT.value)
    lab.run()
    lab.assert_clean()
    error, caught = _caught(lab)
    assert caught == CAUGHT, f"eps_after_sqrt at eps=1e-3: dx error {error:g}"
    assert not lab.warnings()


def test_the_buggy_dx_is_shown_beside_the_true_one(lab):
    lab.open("Gradient check")
    lab.at.main.selectbox(key="w_bug_").set_value(Bug.MEAN_PATH_SIGN.value)
    lab.run()
    frame = next(f.value for f in lab.at.main.dataframe if "buggy dx" in f.value.columns)
    assert list(frame.columns[:3]) == ["true dx", "buggy dx", "numerical dx"]
    assert (frame["true dx"] != frame["buggy dx"]).any()


def test_the_bug_across_eps_agrees_with_the_check_above_it_and_follows_the_bug(lab):
    lab.open("Gradient check")
    tables = {}
    for bug in (Bug.EPS_AFTER_SQRT, Bug.FORGET_GAMMA):
        lab.at.main.selectbox(key="w_bug_").set_value(bug.value)
        lab.run()
        lab.assert_clean()
        frame = next(f.value for f in lab.at.main.dataframe if "caught" in f.value.columns)
        assert list(frame.index) == ["eps = 1e-05", "eps = 0.001", "eps = 0.1"]
        # The sidebar's eps is 1e-5: its row is the check the metrics above report.
        error, caught = _caught(lab)
        assert float(frame.loc["eps = 1e-05", "buggy dx relative error"]) == float(f"{error:.1e}")
        assert frame.loc["eps = 1e-05", "caught"] == caught
        tables[bug] = frame
    # eps_after_sqrt moves with eps, forget_gamma does not care.
    assert tables[Bug.EPS_AFTER_SQRT]["buggy dx relative error"].nunique() == 3
    assert not tables[Bug.EPS_AFTER_SQRT].equals(tables[Bug.FORGET_GAMMA])


def test_gradcheck_tables_follow_the_seed(lab):
    lab.open("Gradient check")
    before = lab.table(0)
    metrics = lab.metrics()
    lab.set_sidebar("seed", 3)
    lab.assert_clean()
    assert lab.differ(before, lab.table(0))
    assert metrics != lab.metrics()


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


def test_no_bug_is_chosen_until_the_student_picks_one(lab):
    lab.open("Gradient check")
    lab.assert_clean()
    assert lab.at.main.selectbox(key="w_bug_").value == "none"
    assert "the check on this bug" not in lab.metrics()
    assert lab.link()["bug"] == "none"


def test_the_outcome_reads_as_a_catch_with_the_buggy_dx_beside_the_true_one(lab):
    lab.open("Gradient check")
    lab.at.main.selectbox(key="w_bug_").set_value(Bug.FORGET_GAMMA.value)
    lab.run()
    lab.assert_clean()
    assert lab.metrics()["caught by the check"] == "caught"
    captions = [c.value for c in lab.at.main.caption]
    assert [c for c in captions if c.startswith(":material/bug_report: ")], captions
    assert not [c for c in captions if c.startswith(":material/check_circle:") and "bug" in c], (
        "a pass mark on a catch"
    )
    (frame,) = [
        f for f in lab.at.main.dataframe if list(f.value.columns)[:2] == ["true dx", "buggy dx"]
    ]
    values = frame.value.to_numpy()
    assert values.shape[0] == lab.state["d"] and not np.allclose(values[:, 0], values[:, 1])


def test_a_float32_dout_near_1e_38_is_not_failed_where_it_underflows(open_link):
    """An auditor's case (tests/core/data/f32_underflow.npz): every |dout| is a normal float32
    number, but dx (about 8e-41) and its intermediates underflow; the staged dx is right to the
    digits float32 keeps there, and the page used to say "The staged backward FAILS"."""
    case = np.load(Path(__file__).parents[1] / "core" / "data" / "f32_underflow.npz")

    def listed(a):
        return ",".join(repr(float(v)) for v in np.ravel(a))

    lab = open_link(
        {
            "shape": "rows",
            "n": "1",
            "d": "8",
            "dtype": "float32",
            "x": listed(case["x"]),
            "gamma": listed(case["g"]),
            "beta": listed(case["b"]),
            "upstream": "edited",
            "dout_edited": listed(case["d"]),
        }
    )
    lab.open("Gradient check")
    lab.assert_no_exception()
    assert not lab.state["link_problems"]
    headline = lab.at.main.header[0].value
    assert "FAILS" not in headline and "cannot resolve" in headline, headline
    captions = [c.value for c in lab.at.main.caption]
    assert not [c for c in captions if c.startswith(":material/cancel:")], captions
    assert any("smallest normal number" in c for c in captions), captions


def test_float32_is_checked_against_float64_differences_with_the_float32_ones_beside(lab):
    """Issue 37: on the Large common offset preset in float32 the correct gradients pass (a
    float32 reference could not resolve dx there), and the page says what float32
    differences would have been: the lesson on precision."""
    lab.set_sidebar("preset", "Large common offset (about 2000)").set_sidebar("dtype", "float32")
    lab.open("Gradient check")
    lab.assert_no_exception()
    statuses = [k for k in lab.metrics() if k.split(":")[0] in ("dx", "dgamma", "dbeta")]
    assert statuses == ["dx: pass", "dgamma: pass", "dbeta: pass"], statuses
    lesson = [c.value for c in lab.at.main.caption if "run in float64" in c.value]
    assert len(lesson) == 1 and "float32 inputs" in lesson[0] and "dx off by" in lesson[0]
