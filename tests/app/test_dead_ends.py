"""Dead ends (issue 21): a constant vector with eps = 0 still shows steps 1 to 5, says why the
rest is undefined once and in words, keeps the guide; a refused field says its text once."""

from __future__ import annotations

import numpy as np
import pytest

from teaching.glossary import MEANINGS

CONSTANT = "Constant vector"


def _constant_without_eps(lab):
    lab.set_sidebar("preset", CONSTANT).set_sidebar("eps", "0")
    return lab.open("Stepper")


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_the_steps_before_the_square_root_stay_defined(lab, number):
    _constant_without_eps(lab).step_to(number)
    lab.assert_no_exception()
    assert lab.shown_step()["blocks"], f"step {number} shows no value"
    assert not lab.errors("main"), "the reason is said twice (sidebar and page)"
    (sidebar_error,) = lab.errors("sidebar")
    assert "(0,)" not in sidebar_error and "in row 0" in sidebar_error
    assert "What to try" in lab.expanders(), "the guide at the foot of the page is gone"
    if number == 5:
        np.testing.assert_array_equal(lab.table(0), np.zeros((lab.state["x"].shape[0], 1)))
        np.testing.assert_array_equal(lab.step_numbers(), np.zeros(1))


def test_a_later_step_says_once_why_it_is_undefined_and_keeps_the_guide(lab):
    _constant_without_eps(lab).step_to(12)
    lab.assert_no_exception()
    assert len(lab.errors()) == 1
    assert "What to try" in lab.expanders()


def test_with_the_sidebar_hidden_the_page_says_why(open_link):
    lab = open_link({"preset": CONSTANT, "eps": "0", "hide": "controls", "step": "8"})
    lab.open("Stepper")
    lab.assert_no_exception()
    (error,) = lab.errors("main")
    assert "zero variance" in error


def test_a_refused_field_quotes_the_text_once(lab):
    lab.set_sidebar("eps", "abc")
    (error,) = [e for e in lab.errors("sidebar") if "abc" in e]
    assert error.count("abc") == 1, error


@pytest.mark.parametrize("word", ["keepdims", "broadcast", "staged", "post-LN"])
def test_the_glossary_explains_the_jargon(word):
    assert word in MEANINGS and len(MEANINGS[word]) > 20


# Every page but the Overview and Export computes from the inputs (issue 36: no dead ends).
COMPUTING = (
    "Inputs",
    "Jacobian",
    "Gradient check",
    "Derivation audit",
    "Check your derivation",
    "Residual block",
    "LayerNorm vs BatchNorm",
)


def _undefined(lab, page: str):
    lab.set_sidebar("preset", CONSTANT).set_sidebar("shape_kind", "rows").set_sidebar("eps", "0")
    return lab.open(page)


def _buttons(lab, area: str) -> list[str]:
    return [b.label for b in getattr(lab.at, area).button if (b.key or "").startswith("way_out_")]


@pytest.mark.parametrize("page", COMPUTING)
def test_an_undefined_output_carries_the_button_that_fixes_it_and_keeps_the_guide(lab, page):
    _undefined(lab, page)
    lab.assert_no_exception()
    assert any("zero variance" in e for e in lab.errors())
    # The message carries its fixes, where the message is (the page's, and the sidebar's).
    assert _buttons(lab, "sidebar") == ["Set eps to 1e-5", "Add a small spread to x"]
    if [e for e in lab.errors("main") if "zero variance" in e]:
        assert _buttons(lab, "main") == ["Set eps to 1e-5", "Add a small spread to x"]
    assert "What to try" in lab.expanders(), "the guide at the foot of the page is gone"
    assert [link for link in lab.at.main.get("page_link") if "Next:" in link.proto.label]
    next(b for b in lab.at.button if (b.key or "").startswith("way_out_eps_")).click()
    lab.run()
    lab.assert_clean()
    assert lab.state["eps"] == 1e-5


def test_a_small_spread_makes_every_vector_defined_and_says_x_was_changed(lab):
    _undefined(lab, "Gradient check")
    before = lab.state["x"].copy()
    next(b for b in lab.at.button if b.key == "way_out_spread_page").click()
    lab.run()
    lab.assert_clean()
    assert lab.state["eps"] == 0
    x = lab.state["x"]
    assert np.all(np.ptp(x, axis=-1) > 0) and np.all(np.ptp(x, axis=0) > 0)
    assert np.max(np.abs(x - before)) <= 0.01 * max(np.max(np.abs(before)), 1.0) + 1e-12
    assert lab.at.main.header[0].value.startswith("The staged backward")


def test_a_vector_of_one_entry_is_offered_eps_only(lab):
    lab.set_sidebar("d", 1).set_sidebar("eps", "0").open("Gradient check")
    assert _buttons(lab, "main") == ["Set eps to 1e-5"]
