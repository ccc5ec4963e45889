"""Classroom features: presenter mode's style, and predict-before-reveal on the stepper.

st.html with only a <style> block shows up in AppTest as an Html element (outside the main
area), so the injected CSS is read from lab.html(). The quiz's answers are worked out here
from ln_core on the session's arrays, not read back from the page.
"""

from __future__ import annotations

import numpy as np
import pytest

import ln_core

PRESENTER_RULE = "font-size: 21px"  # only in the presenter stylesheet
STICKY_NAV = ".st-key-stepper_nav"  # in both stylesheets
QUIZ = "w_quiz_"
PRESENTER = "w_presenter_"
SIGN_STEP = 13  # backward: dnormalized_x, and this vector's share of dgamma
MERGE_STEP = 19  # backward: dx_sm, where the normalized_x and sq_xsm paths merge


def _styles(lab) -> list[str]:
    """The stylesheets st.html injects alone (the reconnect script's html carries a rule too)."""
    return [body for body in lab.html() if body.startswith("<style>") and body.endswith("</style>")]


def test_presenter_toggle_injects_the_presenter_css_and_the_stepper_still_works(lab):
    (base,) = _styles(lab)
    assert STICKY_NAV in base and PRESENTER_RULE not in base
    lab.at.sidebar.toggle(key=PRESENTER).set_value(True)
    lab.run()
    lab.assert_clean()
    assert lab.state["presenter"] is True
    (style,) = _styles(lab)
    assert PRESENTER_RULE in style and STICKY_NAV in style
    assert lab.link()["presenter"] == "1"

    lab.open("Stepper")
    assert PRESENTER_RULE in _styles(lab)[0], "presenter mode lost on another page"
    assert lab.at.sidebar.toggle(key=PRESENTER).value is True
    lab.click("Next").click("Next")
    lab.assert_clean()
    assert lab.state["step"] == 3
    assert lab.subheaders()[0].startswith("Step 3 of 20")
    assert lab.at.main.dataframe

    lab.at.sidebar.toggle(key=PRESENTER).set_value(False)
    lab.run()
    assert PRESENTER_RULE not in _styles(lab)[0]


def _quiz_on(lab, number: int):
    lab.open("Stepper").step_to(number)
    lab.at.main.toggle(key=QUIZ).set_value(True)
    lab.run()
    lab.assert_clean()
    assert lab.state["quiz"] is True
    return lab


def _reveal_button(lab):
    return lab.widget("button", "Reveal")


def _expected_sign(lab) -> str:
    """The sign of normalized_x_0 * dgx_0 (= dout_0) for the first row: its share of dgamma_0."""
    s = lab.state
    cache = ln_core.forward(s["x"][0], s["gamma"], s["beta"], s["eps"])
    value = cache.normalized_x[0] * s["dout_random"][0, 0]
    return "positive" if value > 0 else "negative"


def test_quiz_hides_the_gradient_until_a_guess_and_reveal(lab):
    _quiz_on(lab, SIGN_STEP)
    assert len(lab.at.main.dataframe) == 0
    assert not [m for m in lab.at.main.metric if "analytic vs numerical" in m.label]
    radio = lab.at.main.radio(key=f"guess_{SIGN_STEP}")
    assert radio.value is None
    assert list(radio.options) == ["positive", "negative", "zero"]
    assert _reveal_button(lab).disabled, "Reveal is enabled before a guess"

    radio.set_value(_expected_sign(lab))
    lab.run()
    assert not _reveal_button(lab).disabled
    assert len(lab.at.main.dataframe) == 0, "a guess alone reveals the table"

    lab.click("Reveal")
    lab.assert_clean()
    assert SIGN_STEP in lab.state["revealed"]
    assert len(lab.at.main.dataframe) > 0
    (success,) = lab.at.main.success
    assert success.value.startswith(f"Right: {_expected_sign(lab)}")
    assert lab.at.main.metric[0].label == "dnormalized_x: analytic vs numerical"


def test_a_wrong_guess_shows_an_error_with_the_right_answer(lab):
    _quiz_on(lab, SIGN_STEP)
    right = _expected_sign(lab)
    wrong = "zero"
    lab.at.main.radio(key=f"guess_{SIGN_STEP}").set_value(wrong)
    lab.run()
    lab.click("Reveal")
    lab.assert_no_exception()
    assert not lab.at.main.success
    errors = lab.errors("main")
    assert len(errors) == 1, errors
    assert f"the answer is {right}" in errors[0], errors[0]
    assert len(lab.at.main.dataframe) > 0


def test_a_revealed_step_stays_revealed_and_the_next_asks_again(lab):
    _quiz_on(lab, SIGN_STEP)
    lab.at.main.radio(key=f"guess_{SIGN_STEP}").set_value("zero")
    lab.run()
    lab.click("Reveal")
    lab.click("Next")
    assert lab.state["step"] == SIGN_STEP + 1
    assert len(lab.at.main.dataframe) == 0
    assert _reveal_button(lab).disabled
    lab.click("Prev")
    assert len(lab.at.main.dataframe) > 0  # step 11 was revealed already


def test_quiz_asks_on_forward_steps_too_and_then_shows_the_node(lab):
    _quiz_on(lab, 3)
    assert len(lab.at.main.dataframe) == 0
    radio = lab.at.main.radio(key="guess_3")
    radio.set_value(radio.options[0])
    lab.run()
    lab.click("Reveal")
    lab.assert_no_exception()
    assert len(lab.at.main.dataframe) == 1


@pytest.mark.parametrize("guess_right", [True, False])
def test_on_a_merge_step_the_question_asks_which_path_dominates(lab, guess_right):
    _quiz_on(lab, MERGE_STEP)
    prompts = [m.value for m in lab.at.main.markdown if "Before you look" in m.value]
    assert len(prompts) == 1 and "which path contributes more" in prompts[0], prompts
    assert "dx_sm" in prompts[0]
    radio = lab.at.main.radio(key=f"guess_{MERGE_STEP}")
    assert list(radio.options) == ["from normalized_x", "from sq_xsm"]

    s = lab.state
    cache = ln_core.forward(s["x"], s["gamma"], s["beta"], s["eps"])
    grads = ln_core.backward(s["dout_random"], cache)
    a = grads.dx_sm_via_normalized_x.reshape(-1)[0]
    b = grads.dx_sm_via_sq_xsm.reshape(-1)[0]
    right = "from normalized_x" if abs(a) >= abs(b) else "from sq_xsm"
    np.testing.assert_allclose(a + b, grads.dx_sm.reshape(-1)[0])
    guess = right if guess_right else next(o for o in radio.options if o != right)

    radio.set_value(guess)
    lab.run()
    lab.click("Reveal")
    lab.assert_no_exception()
    if guess_right:
        (success,) = lab.at.main.success
        assert success.value.startswith(f"Right: {right}")
    else:
        (error,) = lab.errors("main")
        assert f"the answer is {right}" in error
    # Revealed: both contributions and their sum, then dx_sm.
    assert len(lab.at.main.dataframe) >= 2
