"""Every page renders: at the defaults, for every preset, and at the stepper's D cap."""

from __future__ import annotations

import numpy as np
import pytest

from teaching.presets import PRESETS

PAGE_NAMES = ("Overview", "Inputs", "Stepper")
CLASSROOM = "Classroom (D = 4, integers)"
TOKENS = "Token batch (B x L x D)"
OFFSET = "Large common offset (about 2000)"


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_page_runs_clean_at_default_inputs(lab, page):
    lab.open(page)
    lab.assert_clean()
    assert lab.at.main.title or lab.subheaders(), f"{page} drew no heading"


def test_default_page_is_the_overview(lab):
    lab.assert_clean()
    assert lab.at.title[0].value == "LayerNorm Lab"


@pytest.mark.parametrize("page", PAGE_NAMES)
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_runs_on_every_page(lab, preset, page):
    lab.set_sidebar("preset", preset)
    lab.open(page)
    lab.assert_clean()
    assert lab.state["preset"] == preset
    if page == "Stepper":
        # The last step runs the whole backward pass and two numerical checks.
        lab.step_to(20)
        lab.assert_clean()
        assert "Step 20 of 20" in lab.shown_step()["heading"]


def test_classroom_preset_gives_the_hand_worked_numbers(lab):
    lab.set_sidebar("preset", CLASSROOM)
    np.testing.assert_array_equal(lab.state["x"], [[0, 2, 2, 8], [1, 5, 1, 5]])
    lab.open("Inputs")
    lab.assert_clean()
    np.testing.assert_array_equal(lab.editor("x"), [[0, 2, 2, 8], [1, 5, 1, 5]])


def test_token_preset_gives_a_3d_x_and_the_stepper_pickers(lab):
    lab.set_sidebar("preset", TOKENS)
    assert lab.state["x"].shape == (2, 3, 8)
    assert lab.sidebar("shape_kind").value == "tokens"
    lab.open("Stepper")
    lab.assert_clean()
    labels = [w.label for w in lab.at.main.text_input]
    assert "Batch element b" in labels
    assert "Token t" in labels
    # One token's vector is shown: step 1's sample_mean is one number, not one per token.
    assert lab.shown_step()["blocks"][0]["title"].startswith("sample_mean for b0 t0")
    first = lab.step_numbers()
    assert first.shape == (1,)

    lab.widget("number_input", "Token t").set_value(2)
    lab.run()
    lab.assert_clean()
    assert lab.state["view_t"] == 2
    assert lab.shown_step()["blocks"][0]["title"].startswith("sample_mean for b0 t2")
    assert lab.differ(first, lab.step_numbers())


def test_large_offset_preset_switches_dtype_to_float32(lab):
    assert lab.sidebar("dtype").value == "float64"
    lab.set_sidebar("preset", OFFSET)
    lab.assert_clean()
    assert lab.sidebar("dtype").value == "float32"
    assert lab.state["dtype"] == "float32"
    assert lab.state["x"].mean() > 1000


def test_stepper_shows_d_up_to_its_cap(lab):
    lab.set_sidebar("d", 64)
    lab.open("Stepper")
    lab.assert_clean()
    assert lab.table().shape[-1] == 1  # step 1: sample_mean, one value per row


def test_d_above_the_stepper_cap_shows_an_error_not_an_exception(lab):
    lab.set_sidebar("d", 65)
    assert lab.state["x"].shape[-1] == 65
    lab.open("Stepper")
    lab.assert_no_exception()
    errors = lab.errors("main")
    assert len(errors) == 1, errors
    assert "64" in errors[0] and "65" in errors[0], errors[0]
    assert "D" in errors[0]
    # The other pages still work at this D.
    lab.open("Inputs")
    lab.assert_clean()
    assert lab.editor("x").shape == (3, 65)
