"""The error-versus-step curve: a V with its bottom near default_h, float32 far above float64."""

from __future__ import annotations

import numpy as np
import pytest
from kit import teaching_case

from ln_core.step_sweep import DEFAULT_STEPS, error_vs_step


@pytest.fixture(scope="module")
def sweep():
    return error_vs_step(*teaching_case(0).args, eps=1e-5)


def test_float64_minimum_is_near_the_default_step(sweep):
    best = sweep.steps[sweep.float64.best_index]
    assert abs(np.log10(best / sweep.float64.default_h)) <= 2
    assert sweep.float64.errors.min() < 1e-9


def test_float32_best_is_far_above_float64_best(sweep):
    assert sweep.float32.errors.min() > 100 * sweep.float64.errors.min()
    assert sweep.float32.default_h > 100 * sweep.float64.default_h


def test_vanished_steps_read_as_error_one_never_nan(sweep):
    for curve in (sweep.float64, sweep.float32):
        assert curve.errors.shape == sweep.steps.shape == DEFAULT_STEPS.shape
        assert np.all(np.isfinite(curve.errors)) and np.all(curve.errors > 0)
        assert np.all(curve.errors[curve.step_vanished] == 1.0)
    assert sweep.float32.step_vanished[-1] and not sweep.float64.step_vanished.any()
    assert not sweep.float32.step_vanished[0]


def test_custom_steps_and_their_validation():
    case = teaching_case(1, (2, 5))
    sweep = error_vs_step(*case.args, steps=[1e-3, 1e-5])
    np.testing.assert_array_equal(sweep.steps, [1e-3, 1e-5])
    assert sweep.float64.errors[1] < sweep.float64.errors[0]
    for bad in ([], [1e-3, 0.0], [[1e-3]]):
        with pytest.raises(ValueError, match="steps"):
            error_vs_step(*case.args, steps=bad)


def test_x_too_large_for_float32_is_a_clear_error():
    with pytest.raises(ValueError, match="too large for float32"):
        error_vs_step([1e100, 0.0, 1.0], np.ones(3), np.zeros(3), np.ones(3))
