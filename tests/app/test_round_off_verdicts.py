"""Quiz and Predict-then-check verdicts on inputs where round-off flipped them: each decides with
a round-off bound (ln_core.agreement, ln_core.node_check), and where right and wrong coincide (a
tie, an exact 0 under round-off) it says it cannot decide, and why, instead of picking a side."""

from __future__ import annotations

import numpy as np
import pytest

from teaching.inputs import Inputs
from teaching.presets import make_example
from teaching.quiz import PAGE_QUESTIONS, STEP_QUESTIONS, vector
from teaching.quiz.kit import SIGNS
from ui.lesson.exercises import exercise

# The answer where right and wrong coincide, as the student reads it (teaching.quiz.kit's
# UNDECIDED, spelled out so that these tests also run, and fail, on the code before it).
UNDECIDED = "cannot decide"


def _random_rows(seed: int, shape: tuple[int, ...] = (1, 8)):
    example = make_example("Random normal", shape, seed)
    return example.x, example.gamma, example.beta


def _link_array(array) -> str:
    return ",".join(repr(float(v)) for v in np.ravel(array))


# -- the stepper's questions --------------------------------------------------------------------


def test_dsve_keeps_the_sign_of_dsqrt_sve_however_small_it_is():
    """x = 1e5 × (Random normal, seed 0), D = 8: dsve is about 1e-10, below the old fixed
    threshold of 1e-9, which called it zero and so of the opposite sign to dsqrt_sve."""
    x, gamma, beta = _random_rows(0)
    v = vector(1e5 * x[0], gamma, beta, np.random.default_rng(0).standard_normal(8), 1e-5)
    assert 0 < abs(float(v.grads.dsve[0])) < 1e-9
    assert STEP_QUESTIONS[16](v).answer == "same sign"


@pytest.mark.parametrize("seed", range(5))
def test_dinv_sqrt_sve_of_a_uniform_upstream_cannot_be_told_from_zero(seed):
    """float32, gamma = 1, dout = 1: dinv_sqrt_sve = Σ x_sm is exactly 0, computed as 0 or as
    ±1e-7 of round-off; the old relative threshold of 1e-9 called that a sign."""
    x = _random_rows(seed)[0][0].astype(np.float32)
    ones = np.ones(8, np.float32)
    question = STEP_QUESTIONS[14](vector(x, ones, np.zeros(8, np.float32), ones, 1e-5))
    assert question.answer == UNDECIDED
    assert question.fits == SIGNS
    assert "within round-off" in question.undecided


def test_a_zero_upstream_makes_the_two_paths_into_dx_sm_a_tie():
    x, gamma, beta = _random_rows(0)
    question = STEP_QUESTIONS[19](vector(x[0], gamma, beta, np.zeros(8), 1e-5))
    assert question.answer == UNDECIDED
    assert set(question.fits) == {"from normalized_x", "from sq_xsm"}


def test_sqrt_sve_halfway_between_double_and_stay_the_same_is_a_tie():
    """eps = 2 var: doubling x takes sqrt_sve from √3 to √6, √2 times, as near 2 as 1."""
    v = vector(np.array([1.0, -1.0]), np.ones(2), np.zeros(2), np.array([1.0, 0.0]), 2.0)
    question = STEP_QUESTIONS[6](v)
    assert question.answer == UNDECIDED
    assert set(question.fits) == {"double", "stay the same"}


def test_a_zero_dx_doubled_is_zero_so_no_factor_is_decided():
    x, gamma, beta = _random_rows(0)
    question = PAGE_QUESTIONS["gamma_doubling"](vector(x[0], gamma, beta, np.zeros(8), 1e-5))
    assert question.answer == UNDECIDED
    assert set(question.fits) == {"double", "halve", "stay the same"}


# -- Predict, then check -----------------------------------------------------------------------


def _inputs(x, gamma, beta, dout, eps: float, dtype: str) -> Inputs:
    return Inputs(
        x=x.astype(dtype),
        gamma=gamma.astype(dtype),
        beta=beta.astype(dtype),
        dout=dout.astype(dtype),
        eps=eps,
        dtype=dtype,
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_with_d_2_and_eps_0_no_entry_of_dx_is_known_to_be_nonzero(dtype):
    """D = 2, eps = 0: normalized_x is ±1 whatever x is, so dx is exactly 0; computed, it is
    ±8.9e-16 (float64) or ±4.8e-7 (float32), which a threshold relative to max |dx| counted."""
    x, gamma, beta = _random_rows(0, (3, 2))
    answer = exercise("inputs", 0).answer(_inputs(x, gamma, beta, np.ones((3, 2)), 0.0, dtype))
    assert answer.startswith("Cannot decide: 2 of the 2 entries of dx"), answer
    assert "get a gradient" not in answer


@pytest.mark.parametrize(
    ("page", "winner"), [("stepper", "from normalized_x"), ("residual", "the skip connection")]
)
def test_a_zero_upstream_is_a_tie_not_a_winner(page, winner):
    x, gamma, beta = _random_rows(0, (3, 8))
    inputs = _inputs(x, gamma, beta, np.zeros((3, 8)), 1e-5, "float64")
    answer = exercise(page, 0).answer(inputs)
    assert answer.startswith("Cannot decide: 0 and 0 are exactly equal"), answer
    assert not answer.startswith(winner)


# -- Predict before reveal, on the Stepper -----------------------------------------------------


def _reveal(lab, number: int, guess: str):
    lab.open("Stepper")
    lab.at.main.radio(key=f"guess_{number}").set_value(guess)
    lab.run()
    lab.click("Reveal")
    lab.assert_clean()
    return lab


def test_the_stepper_marks_same_sign_right_at_step_16(open_link):
    x = _random_rows(0)[0]
    link = {"shape": "vector", "d": "8", "x": _link_array(1e5 * x), "step": "16", "quiz": "1"}
    lab = _reveal(open_link(link), 16, "same sign")
    assert not lab.at.main.error
    (success,) = lab.at.main.success
    assert success.value.startswith("Right: same sign."), success.value


@pytest.mark.parametrize("guess", ["zero", "positive"])
def test_the_stepper_cannot_decide_the_sign_of_an_exact_zero_at_step_14(open_link, guess):
    link = {
        "shape": "rows",
        "n": "3",
        "d": "8",
        "dtype": "float32",
        "upstream": "ones",
        "gamma": _link_array(np.ones(8)),
        "step": "14",
        "quiz": "1",
    }
    lab = _reveal(open_link(link), 14, guess)
    assert not lab.at.main.error
    verdicts = [i.value for i in lab.at.main.info if i.value.startswith("Cannot decide:")]
    assert len(verdicts) == 1
    assert "positive, negative, zero" in verdicts[0] and "within round-off" in verdicts[0]


def test_the_stepper_asks_about_the_layer_with_the_affine_option_shown(open_link):
    """Affine "neither": the Stepper computes dnormalized_x = dout, gamma skipped; the question
    at step 13 quoted the full layer's gamma (3 here) and its dnormalized_x, three times that."""
    link = {
        "shape": "rows",
        "n": "3",
        "d": "8",
        "upstream": "ones",
        "gamma": _link_array(np.full(8, 3.0)),
        "affine": "neither",
        "step": "13",
        "quiz": "1",
    }
    lab = _reveal(open_link(link), 13, "stay the same")
    (success,) = lab.at.main.success
    assert success.value == "Right: stay the same.", success.value
    why = [m.value for m in lab.at.main.markdown if "gamma_0 × `dgx_0`" in m.value]
    assert why and "gamma_0 × `dgx_0` = 1 × 1 = 1." in why[0], why
