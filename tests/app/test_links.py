"""Shareable links (ui/session/share.py): a link opened in a fresh session shows the same view.

One session writes its view into the query string on every run (lab.link()); a fresh AppTest
opened with those parameters (open_link) must rebuild the same state and show the same numbers.
Tampered parameters fall back to their defaults with a warning, never an exception.
"""

from __future__ import annotations

import numpy as np
import pytest

from teaching.presets import PRESETS

CLASSROOM = "Classroom (D = 4, integers)"
LINK_WARNING = "Parts of this link were not usable"
ARRAYS = ("x", "gamma", "beta", "dout_edited")
SCALARS = ("preset", "shape_kind", "n", "d", "seed", "eps", "dtype", "upstream", "step")


def _shared_session(lab):
    """A session with every kind of change a link carries, left on the Stepper."""
    lab.set_sidebar("preset", "One large outlier")
    lab.set_sidebar("n", 2).set_sidebar("d", 4).set_sidebar("seed", 7)
    lab.open("Inputs").edit("x", {1: {"2": -3.25}})
    lab.edit("params", {0: {"1": 0.5}})
    lab.edit("dout", {0: {"3": 2.5}})
    lab.set_sidebar("eps", 1e-3).set_sidebar("dtype", "float32")
    lab.open("Stepper").step_to(13)
    lab.assert_clean()
    return lab


def test_a_link_reproduces_the_state_and_the_numbers_in_a_fresh_session(lab, open_link):
    shared = _shared_session(lab)
    s = shared.state
    assert s["x"][1, 2] == -3.25 and s["gamma"][1] == 0.5 and s["upstream"] == "edited"
    link = shared.link()
    assert {"x", "gamma", "dout_edited"} <= set(link), link
    assert "beta" not in link  # unchanged arrays stay out of the link

    fresh = open_link(link)
    fresh.assert_clean()
    assert fresh.warnings() == []
    for key in SCALARS:
        assert fresh.state[key] == s[key], key
    for name in ARRAYS:
        np.testing.assert_array_equal(fresh.state[name], s[name], err_msg=name)

    fresh.open("Stepper")
    fresh.assert_clean()
    assert fresh.shown_step()["heading"] == shared.shown_step()["heading"]
    assert fresh.shown_step()["heading"].startswith("Step 13 of 20")
    np.testing.assert_array_equal(fresh.table(), shared.table())
    assert fresh.shown_step()["checks"] == shared.shown_step()["checks"]
    assert fresh.metrics() == shared.metrics()
    # The same link again: opening a link does not change it.
    assert fresh.link() == link

    shared.open("Gradient check")
    fresh.open("Gradient check")
    fresh.assert_clean()
    np.testing.assert_array_equal(fresh.table(), shared.table())


def _jacobian_z(lab) -> np.ndarray:
    return lab.spec_array(lab.heatmaps()[0]["data"][0]["z"])


def test_a_link_keeps_the_chosen_vector(lab, open_link):
    lab.set_sidebar("preset", "Token batch (B x L x D)").open("Jacobian")
    lab.widget("number_input", "Batch element b").set_value(1)
    lab.run()
    lab.widget("number_input", "Token t").set_value(2)
    lab.run()
    lab.assert_clean()
    assert (lab.state["view_b"], lab.state["view_t"]) == (1, 2)
    link = lab.link()
    assert (link["vb"], link["vt"]) == ("1", "2")

    fresh = open_link(link)
    fresh.assert_clean()
    assert (fresh.state["view_b"], fresh.state["view_t"]) == (1, 2), (
        "the link's vb and vt were not applied"
    )
    fresh.open("Jacobian")
    np.testing.assert_array_equal(_jacobian_z(fresh), _jacobian_z(lab))


def test_the_default_link_opens_the_default_view(lab, open_link):
    fresh = open_link(lab.link())
    fresh.assert_clean()
    assert fresh.warnings() == []
    for key in ("x", "gamma", "beta", "dout_random"):
        np.testing.assert_array_equal(fresh.state[key], lab.state[key])


@pytest.mark.parametrize(
    ("key", "value", "state_key", "default"),
    [
        ("d", "-5", "d", 8),
        ("eps", "abc", "eps", 1e-5),
        ("seed", "xyz", "seed", 0),
        ("x", ",".join(str(i) for i in range(1, 10001)), "x", None),
        ("hide", "bogus", "hidden", frozenset()),
        # The instructor's Class page is a page, but no stop of the lesson: it cannot be hidden.
        ("hide", "class", "hidden", frozenset()),
        ("checked", "class", "guide_checked", frozenset()),
        ("step", "99", "step", 1),
        ("dtype", "float16", "dtype", "float64"),
        ("eps", "nan", "eps", 1e-5),
        ("x", "1,2,nope", "x", None),
    ],
)
def test_a_garbage_parameter_falls_back_with_a_warning(
    lab, open_link, key, value, state_key, default
):
    fresh = open_link({key: value})
    fresh.assert_no_exception()
    warnings = fresh.warnings()
    assert len(warnings) == 1 and LINK_WARNING in warnings[0], warnings
    assert key in warnings[0]
    assert len(warnings[0]) < 500, "the warning repeats the whole tampered value"
    if default is None:
        np.testing.assert_array_equal(fresh.state[state_key], lab.state[state_key])
    else:
        assert fresh.state[state_key] == default
    fresh.open("Stepper")
    fresh.assert_clean()


def test_valid_parts_apply_next_to_garbage(open_link):
    fresh = open_link(
        {
            "d": "-5",
            "eps": "abc",
            "seed": "xyz",
            "step": "99",
            "hide": "bogus",
            "n": "2",
            "dtype": "float32",
            "x": "1,2,3",
        }
    )
    fresh.assert_no_exception()
    (warning,) = fresh.warnings()
    for part in ("d=", "eps=", "seed=", "step=", "hide=", "x "):
        assert part in warning, (part, warning)
    assert "n=" not in warning and "dtype=" not in warning
    assert fresh.state["n"] == 2 and fresh.state["dtype"] == "float32"
    assert fresh.state["x"].shape == (2, 8)
    assert fresh.link()["n"] == "2"
    # The warning stays until dismissed.
    fresh.open("Inputs")
    assert len(fresh.warnings()) == 1
    fresh.click("Dismiss")
    assert fresh.warnings() == []


def test_an_array_of_the_wrong_size_keeps_the_preset_values(lab, open_link):
    fresh = open_link({"n": "2", "d": "4", "x": "1,2,3,4,5,6,7"})
    (warning,) = fresh.warnings()
    assert "x has 7 numbers but the shape needs 8" in warning
    assert fresh.state["x"].shape == (2, 4)
    assert not np.array_equal(fresh.state["x"].ravel()[:7], np.arange(1, 8))


def test_hide_controls_removes_the_sidebar_controls_but_pages_compute(open_link):
    fresh = open_link({"hide": "controls", "seed": "3"})
    fresh.assert_clean()
    assert fresh.warnings() == []
    assert "Preset" not in [w.label for w in fresh.at.sidebar.selectbox]
    assert not fresh.at.sidebar.number_input and not fresh.at.sidebar.radio
    assert fresh.state["seed"] == 3
    fresh.open("Stepper").step_to(12)
    fresh.assert_clean()
    assert fresh.at.main.dataframe, "the stepper computes nothing without its controls"
    assert fresh.link()["hide"] == "controls"
    assert fresh.link()["seed"] == "3"


def test_hide_a_page_removes_it_from_navigation(open_link):
    fresh = open_link({"hide": "jacobian,audit"})
    fresh.assert_clean()
    assert fresh.warnings() == []
    assert fresh.state["hidden"] == frozenset({"jacobian", "audit"})
    # A hidden page is out of the lesson: its link says so instead of "Page not found".
    for page in ("Jacobian", "Derivation audit"):
        fresh.open(page)
        fresh.assert_clean()
        (info,) = fresh.at.main.info
        assert "not part of this lesson" in info.value
        assert not fresh.heatmaps() and not fresh.at.main.dataframe
    fresh.open("Gradient check")
    fresh.assert_clean()
    assert fresh.link()["hide"] == "audit,jacobian"
    fresh.open("Export and share")
    assert "hide=audit%2Cjacobian" in fresh.at.main.code[0].value


def test_a_hide_list_naming_the_class_page_hides_the_rest(open_link):
    fresh = open_link({"hide": "class,inputs", "seed": "3"})
    fresh.assert_clean()
    (warning,) = fresh.warnings()
    assert "hide=“class” names no page or control" in warning
    assert fresh.state["hidden"] == frozenset({"inputs"}) and fresh.state["seed"] == 3
    fresh.open("Stepper")
    fresh.assert_clean()
    assert fresh.link()["hide"] == "inputs"


def test_a_link_with_only_a_fixed_shape_preset_shows_its_shape_in_the_sidebar(open_link):
    # A hand-written link may name the classroom preset alone; its numbers are 2 x 4.
    assert PRESETS[CLASSROOM].shape == (2, 4)
    fresh = open_link({"preset": CLASSROOM})
    fresh.assert_clean()
    np.testing.assert_array_equal(fresh.state["x"], [[0, 2, 2, 8], [1, 5, 1, 5]])
    assert (fresh.sidebar("n").value, fresh.sidebar("d").value) == (2, 4), (
        "the sidebar shows a shape that is not x's"
    )
    assert (fresh.link()["n"], fresh.link()["d"]) == ("2", "4")


LEFT_OUT = "This link leaves out your edits to"


def _left_out_notes(lab) -> list[str]:
    """The notes on the page saying which edits its link leaves out: the Export page's warning
    and the captions of every page's "Copy a link to this view" popover."""
    shown = [w.value for w in lab.at.main.warning] + [c.value for c in lab.at.main.caption]
    return [text for text in shown if LEFT_OUT in text]


def test_a_large_x_leaves_out_only_the_arrays_too_large_and_says_so(lab, open_link):
    # Rows 9 x 8: x and dout have 72 numbers (more than a link carries), gamma 8.
    lab.set_sidebar("n", 9).open("Inputs")
    lab.edit("x", {0: {"0": 0.1}}).edit("params", {0: {"0": 5}}).edit("dout", {0: {"0": 7}})
    lab.assert_clean()
    s = lab.state
    assert (s["x"][0, 0], s["gamma"][0], s["dout_edited"][0, 0], s["upstream"]) == (
        0.1,
        5,
        7,
        "edited",
    )
    link = lab.link()
    assert "gamma" in link and not {"x", "beta", "dout_edited"} & set(link), link

    (caption,) = _left_out_notes(lab.open("Stepper"))  # in the popover
    assert "x (72 numbers) and the hand-edited dout (72 numbers)" in caption, caption
    assert "gamma" not in caption and "at most 64 numbers" in caption and "downloads" in caption
    lab.open("Export and share")
    assert caption in _left_out_notes(lab)
    assert [w for w in lab.warnings() if LEFT_OUT in w] == [caption.split(" ", 1)[1]]

    fresh = open_link(link)
    fresh.assert_no_exception()
    (warning,) = fresh.warnings()
    assert LINK_WARNING in warning and "upstream=edited" in warning, warning
    # gamma came with the link; x and dout are a fresh session's, and say so.
    np.testing.assert_array_equal(fresh.state["gamma"], s["gamma"])
    np.testing.assert_array_equal(fresh.state["beta"], s["beta"])
    plain = open_link({"n": "9"})
    for name in ("x", "dout_random", "dout_edited"):
        np.testing.assert_array_equal(fresh.state[name], plain.state[name], err_msg=name)
    assert fresh.state["upstream"] == "random", "the seeded dout is shown as edited by hand"
    for key in ("preset", "shape_kind", "n", "d", "seed", "eps", "dtype", "step"):
        assert fresh.state[key] == s[key], key


def test_a_large_x_with_nothing_edited_leaves_nothing_out(lab, open_link):
    # The loss's target has x's size: unedited, a fresh session makes the same one.
    lab.set_sidebar("n", 9).open("Inputs")
    lab.widget("radio", "Where dout comes from").set_value("loss")
    lab.run().open("Export and share")
    lab.assert_clean()
    assert _left_out_notes(lab) == []
    link = lab.link()
    assert link["upstream"] == "loss" and "target" not in link
    fresh = open_link(link)
    fresh.assert_clean()
    assert fresh.warnings() == []
    np.testing.assert_array_equal(fresh.state["target"], lab.state["target"])
