"""Issue 19's links, opened as a student would: no correct gradient shown failing, no bug
"caught" that changes nothing, no bug missed because the gradients are tiny."""

from __future__ import annotations

import pytest

from ln_core.bugs import CANNOT_TELL, CAUGHT


def _verdict_captions(lab) -> list[str]:
    """The captions under verdict metrics ("Pass: ...", "Fail: ...", "Cannot resolve: ...")."""
    starts = ("Pass:", "Fail:", "Cannot resolve:", "Caught:", "Missed:", "Cannot tell here:")
    captions = [c.value for c in lab.at.main.caption]
    return [c.split(" ", 1)[1] for c in captions if c.split(" ", 1)[-1].startswith(starts)]


def _metric(lab, label: str):
    return next(m for m in lab.at.main.metric if m.label == label)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_stepper_d2_eps0_last_step_cannot_resolve_dx(open_link, dtype):
    lab = open_link({"d": "2", "eps": "0", "step": "20", "dtype": dtype}).open("Stepper")
    lab.assert_clean()
    checks = {c["name"]: c for c in lab.shown_step()["checks"]}
    assert checks, "no verdict shown on step 20"
    assert not [c for c in checks.values() if c["status"] == "fail"], checks
    assert checks["dx"]["status"] == "cannot resolve"
    # Two roundings of an exact 0 are not a failure of the closed form either.
    assert _metric(lab, "staged vs closed form") is not None


@pytest.mark.parametrize(("step", "node"), [(14, "inv_sqrt_sve"), (17, "sample_var")])
def test_stepper_exact_zero_gradients_cannot_resolve(open_link, step, node):
    link = {"d": "8", "eps": "0.00001", "upstream": "ones", "affine": "neither", "step": str(step)}
    lab = open_link(link).open("Stepper")
    lab.assert_clean()
    checks = {c["name"]: c for c in lab.shown_step()["checks"]}
    assert checks[f"d{node}"]["status"] == "cannot resolve"
    assert not [c for c in checks.values() if c["status"] == "fail"]


def test_break_the_backward_cannot_tell_an_identical_formula(open_link):
    lab = open_link({"d": "2", "eps": "0", "bug": "eps_after_sqrt"}).open("Gradient check")
    lab.assert_no_exception()
    caught = _metric(lab, "caught by the check")
    assert caught.value == CANNOT_TELL
    # The main check's verdict on dx and the bug's agree: neither can tell at eps = 0.
    dx = next(m for m in lab.at.main.metric if m.label.startswith("dx:"))
    assert dx.label == "dx: cannot resolve"
    about_the_bug = [v for v in _verdict_captions(lab) if "bug" in v]
    assert about_the_bug and all(v.startswith("Cannot tell here:") for v in about_the_bug)
    # The per-eps table judges the same vector by the same rule, in the same words.
    table = lab.at.main.dataframe[-1].value
    assert set(table["caught"]) <= {CAUGHT, "missed", CANNOT_TELL}


def test_break_the_backward_catches_a_bug_on_tiny_gradients(open_link):
    """float32 x ~ 1e15 from a link: every dx is about 1e-15, and mean_path_sign is 100 % off."""
    x = "3e15,-1e15,2.5e15,0.5e15,-2e15,1e15,4e15,-3e15"
    link = {"n": "2", "d": "4", "dtype": "float32", "x": x, "bug": "mean_path_sign"}
    lab = open_link(link).open("Gradient check")
    lab.assert_no_exception()
    assert lab.state["x"].max() > 1e15  # the link's x was applied
    assert _metric(lab, "caught by the check").value == CAUGHT
    assert _metric(lab, "buggy dx relative error").value != "0.0e+00"


def test_eps_after_sqrt_is_caught_on_the_default_preset_at_eps_1e3(open_link):
    lab = open_link({"eps": "0.001", "bug": "eps_after_sqrt"}).open("Gradient check")
    lab.assert_no_exception()
    assert _metric(lab, "caught by the check").value == CAUGHT
