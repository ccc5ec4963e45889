"""The controls around a view: edited cells are named and can be reset, and a link carries the
whole view (the chosen bug, the Jacobian's vector and its three-paths toggle, the quiz)."""

from __future__ import annotations

import numpy as np

from ln_core.bugs import Bug
from teaching.presets import make_example

THREE_PATHS = "Show the three paths"


def _edits_caption(lab) -> str:
    found = [c.value for c in lab.at.main.caption if "Edited by hand" in c.value]
    return found[0] if found else ""


def test_edited_cells_are_named_and_reset_edits_restores_the_preset(lab):
    lab.open("Inputs")
    assert not _edits_caption(lab)
    assert "Reset edits" not in [b.label for b in lab.at.main.button]
    lab.edit("x", {1: {"2": -3.25}})
    lab.edit("params", {0: {"1": 0.5}})
    lab.edit("dout", {0: {"3": 2.5}})
    lab.assert_clean()
    caption = _edits_caption(lab)
    assert "(3 cells)" in caption, caption
    assert "x row 1, column 2: -3.25" in caption
    assert "gamma, column 1: 0.5" in caption
    assert "dout row 0, column 3: 2.5" in caption

    lab.click("Reset edits")
    lab.assert_clean()
    s = lab.state
    example = make_example(s["preset"], s["x"].shape, s["seed"])
    np.testing.assert_array_equal(s["x"], example.x)
    np.testing.assert_array_equal(s["gamma"], example.gamma)
    assert s["upstream"] == "random"
    assert not _edits_caption(lab)
    np.testing.assert_array_equal(lab.editor("x"), example.x)


def test_an_edited_target_is_named_and_reset_without_moving_the_view(open_link):
    lab = open_link({"upstream": "loss", "vb": "2", "step": "3", "quiz": "1"})
    lab.state["revealed"] = frozenset({3})
    lab.open("Inputs")
    seeded = lab.state["target"].copy()
    lab.edit("target", {1: {"0": "4.5"}})
    lab.assert_clean()
    caption = _edits_caption(lab)
    assert "target row 1, column 0: 4.5" in caption, caption
    assert "No cell is edited" not in " ".join(c.value for c in lab.at.main.caption)

    lab.click("Reset edits")
    lab.assert_clean()
    np.testing.assert_array_equal(lab.state["target"], seeded)
    assert not _edits_caption(lab)
    # Only the numbers go back: the chosen row and the answers already revealed stay.
    assert lab.state["view_b"] == 2
    assert lab.state["revealed"] == frozenset({3})
    assert lab.state["upstream"] == "loss"


def test_a_link_carries_the_bug_the_jacobian_vector_and_its_toggle(lab, open_link):
    lab.open("Gradient check")
    lab.at.main.selectbox(key="w_bug_").set_value(Bug.FORGET_GAMMA.value)
    lab.run()
    lab.open("Jacobian")
    lab.widget("number_input", "Row").set_value(2)
    lab.run()
    lab.widget("toggle", THREE_PATHS).set_value(True)
    lab.run()
    lab.assert_clean()
    link = lab.link()
    assert (link["bug"], link["vb"], link["paths"]) == ("forget_gamma", "2", "1"), link

    fresh = open_link(link)
    fresh.assert_clean()
    assert fresh.warnings() == []
    assert (fresh.state["bug"], fresh.state["view_b"]) == ("forget_gamma", 2)
    assert fresh.state["jacobian_paths"] is True
    fresh.open("Jacobian")
    fresh.assert_clean()
    assert fresh.widget("toggle", THREE_PATHS).value is True
    assert len(fresh.heatmaps()) == 4
    fresh.open("Gradient check")
    assert fresh.at.main.selectbox(key="w_bug_").value == "forget_gamma"
    assert fresh.link() == link


def test_a_tampered_bug_in_a_link_falls_back_with_a_warning(open_link):
    lab = open_link({"bug": "no_such_bug", "paths": "2"})
    lab.assert_no_exception()
    (warning,) = lab.warnings()
    assert "bug" in warning and "paths" in warning
    assert lab.state["bug"] == "none" and lab.state["jacobian_paths"] is False
