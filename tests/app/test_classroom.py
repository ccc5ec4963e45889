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
STICKY_NAV = ".st-key-w_step_browser"  # in both stylesheets
QUIZ = "w_quiz_"
PRESENTER = "w_presenter_"
GAMMA_STEP = 13  # backward: dnormalized_x and dgamma: what doubling gamma does to dgamma
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
    lab.move_to(2).move_to(3)
    lab.assert_clean()
    assert lab.state["step"] == 3
    assert lab.shown_step()["heading"].startswith("Step 3 of 20")
    assert lab.walk()["presenter"] is True
    assert _numbers_shown(lab)

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


def _numbers_shown(lab) -> bool:
    """The session's step carries its numbers to the browser (not locked behind a question)."""
    return "locked" not in lab.shown_step() and bool(lab.shown_step()["blocks"])


def _reveal_button(lab):
    return lab.widget("button", "Reveal")


def _expected_answer(lab) -> str:
    """What dgamma does when every gamma doubles, worked out from ln_core on the first row."""
    s = lab.state
    dout = s["dout_random"][0]
    before = ln_core.backward(dout, ln_core.forward(s["x"][0], s["gamma"], s["beta"], s["eps"]))
    twice = ln_core.forward(s["x"][0], 2 * s["gamma"], s["beta"], s["eps"])
    after = ln_core.backward(dout, twice)
    np.testing.assert_array_equal(before.dgamma, after.dgamma)
    return "stay the same"


def test_quiz_hides_the_gradient_until_a_guess_and_reveal(lab):
    _quiz_on(lab, GAMMA_STEP)
    assert not _numbers_shown(lab)
    assert not lab.shown_step().get("checks")
    assert lab.walk()["sync"] is True  # each move asks its question at once
    radio = lab.at.main.radio(key=f"guess_{GAMMA_STEP}")
    assert radio.value is None
    assert list(radio.options) == ["double", "stay the same", "halve"]
    assert _reveal_button(lab).disabled, "Reveal is enabled before a guess"

    radio.set_value(_expected_answer(lab))
    lab.run()
    assert not _reveal_button(lab).disabled
    assert not _numbers_shown(lab), "a guess alone reveals the numbers"

    lab.click("Reveal")
    lab.assert_clean()
    assert GAMMA_STEP in lab.state["revealed"]
    assert _numbers_shown(lab)
    (success,) = lab.at.main.success
    assert success.value.startswith(f"Right: {_expected_answer(lab)}")
    assert " dnormalized_x:" in lab.shown_step()["checks"][0]["line"]


def test_a_wrong_guess_shows_an_error_with_the_right_answer(lab):
    _quiz_on(lab, GAMMA_STEP)
    right = _expected_answer(lab)
    wrong = "double"
    lab.at.main.radio(key=f"guess_{GAMMA_STEP}").set_value(wrong)
    lab.run()
    lab.click("Reveal")
    lab.assert_no_exception()
    assert not lab.at.main.success
    errors = lab.errors("main")
    assert len(errors) == 1, errors
    assert f"the answer is {right}" in errors[0], errors[0]
    assert _numbers_shown(lab)


def test_a_revealed_step_stays_revealed_and_the_next_asks_again(lab):
    _quiz_on(lab, GAMMA_STEP)
    lab.at.main.radio(key=f"guess_{GAMMA_STEP}").set_value("double")
    lab.run()
    lab.click("Reveal")
    lab.move_to(GAMMA_STEP + 1)
    assert lab.state["step"] == GAMMA_STEP + 1
    assert not _numbers_shown(lab)
    assert _reveal_button(lab).disabled
    lab.move_to(GAMMA_STEP)
    assert _numbers_shown(lab)  # revealed already


def test_quiz_asks_on_forward_steps_too_and_then_shows_the_node(lab):
    _quiz_on(lab, 3)
    assert not _numbers_shown(lab)
    radio = lab.at.main.radio(key="guess_3")
    radio.set_value(radio.options[0])
    lab.run()
    lab.click("Reveal")
    lab.assert_no_exception()
    assert _numbers_shown(lab) and len(lab.shown_step()["blocks"]) == 1


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
    # Revealed: dx_sm, then both contributions it adds.
    assert [b["title"].split(" ")[0:2] for b in lab.shown_step()["blocks"]] == [
        ["dx_sm", "for"],
        ["from", "normalized_x"],
        ["from", "sq_xsm"],
    ]


# -- nothing on screen answers the question before its reveal ---------------------------------


def _latex(lab) -> str:
    return "\n".join(element.value for element in lab.at.main.latex)


def _captions(lab) -> list[str]:
    return [caption.value for caption in lab.at.main.caption]


@pytest.mark.parametrize("number", [5, 8, 12, 13, 17, 18])
def test_no_note_or_local_derivative_gives_the_answer_away_before_the_reveal(lab, number):
    from pages.stepper.formulas import BACKWARD, FORWARD_NOTE
    from teaching.steps import step

    node = step(number).node
    _quiz_on(lab, number)
    hidden = [BACKWARD[node]] if step(number).backward else []
    assert not [h for h in hidden if h in _latex(lab)], "the local derivative shows too early"
    if node in FORWARD_NOTE:
        assert FORWARD_NOTE[node] not in _captions(lab), "the note answers the question"
    radio = lab.at.main.radio(key=f"guess_{number}")
    radio.set_value(radio.options[0])
    lab.run()
    lab.click("Reveal")
    lab.assert_no_exception()
    assert all(h in _latex(lab) for h in hidden), "no local derivative after the reveal"
    if node in FORWARD_NOTE:
        assert FORWARD_NOTE[node] in _captions(lab)


def test_a_revealed_answer_travels_with_the_link(lab, open_link):
    _quiz_on(lab, GAMMA_STEP)
    lab.at.main.radio(key=f"guess_{GAMMA_STEP}").set_value("double")
    lab.run()
    lab.click("Reveal")
    link = lab.link()
    assert link["rev"] == str(GAMMA_STEP)

    fresh = open_link(link)
    fresh.assert_clean()
    assert fresh.warnings() == []
    assert fresh.state["revealed"] == frozenset({GAMMA_STEP})
    fresh.open("Stepper")
    fresh.assert_no_exception()
    assert not [b for b in fresh.at.main.button if b.label == "Reveal"]
    (answer,) = fresh.at.main.info
    assert answer.value.startswith(f"The answer: {_expected_answer(fresh)}")
    assert fresh.at.main.dataframe
    assert fresh.link()["rev"] == str(GAMMA_STEP)


def test_a_link_naming_an_unknown_answer_says_so(open_link):
    fresh = open_link({"rev": "13,99,<b>x</b>", "checked": "nowhere"})
    fresh.assert_clean()
    assert fresh.state["revealed"] == frozenset({13})
    (warning,) = fresh.warnings()
    assert "rev=“99”" in warning and "checked=“nowhere”" in warning, warning


def test_check_my_prediction_asks_for_a_prediction_first(lab, open_link):
    lab.open("Stepper")
    (check,) = [b for b in lab.at.main.button if b.label == "Check my prediction"]
    assert check.disabled, "the answer can be shown without a prediction"
    radio = lab.at.main.radio(key="guess_guide_stepper")
    radio.set_value("from sq_xsm")
    lab.run()
    lab.click("Check my prediction")
    lab.assert_no_exception()
    assert "Your prediction: “from sq\\_xsm”" in [m.value for m in lab.at.main.markdown]
    assert [i for i in lab.at.main.info if "summed over every entry" in i.value]
    assert lab.link()["checked"] == "stepper"
    fresh = open_link(lab.link()).open("Stepper")
    assert [i for i in fresh.at.main.info if "summed over every entry" in i.value]
