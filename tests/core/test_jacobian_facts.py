"""Each fact the Jacobian page states, checked on computed numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kit import FAST, teaching_case

from ln_core import forward
from ln_core.jacobian_facts import jacobian_facts

vectors = hnp.arrays(np.float64, st.integers(2, 8), elements=st.floats(-10, 10, allow_nan=False))


def _spread_enough(x: np.ndarray) -> bool:
    return float(np.std(x)) > 1e-2


@FAST
@given(vectors, st.floats(0.1, 3.0), st.sampled_from([0.0, 1e-5, 0.3]))
def test_uniform_gamma_eigenvalues_match_the_prediction(x, g, eps):
    if not _spread_enough(x):
        return
    facts = jacobian_facts(x, np.full(x.size, g), np.ones(x.size), eps)
    # gamma * s, the largest eigenvalue (for D = 2 and eps = 0, J is 0 up to rounding).
    scale = g * float(forward(x, np.ones(x.size), np.zeros(x.size), eps).inv_sqrt_sve[0])
    assert facts.gamma_uniform
    assert facts.symmetry_error <= 1e-12 * scale
    assert facts.max_imag_eigenvalue == 0.0
    assert facts.eigenvalue_error <= 1e-10 * scale


@FAST
@given(vectors.filter(lambda x: x.size >= 3), st.sampled_from([0.0, 1e-5, 0.3]))
def test_shift_is_invisible_and_backward_is_dout_times_j(x, eps):
    # D = 2 is left out: with eps = 0 its J and dx are 0, so rel_error would compare rounding.
    if not _spread_enough(x):
        return
    gamma = np.linspace(0.5, 2.0, x.size)
    dout = np.linspace(-1.0, 1.0, x.size)
    facts = jacobian_facts(x, gamma, dout, eps)
    scale = 2.0 * float(forward(x, gamma, gamma, eps).inv_sqrt_sve[0])
    assert facts.ones_response <= 1e-12 * scale
    assert facts.dx_error <= 1e-9


def test_xhat_response_is_zero_without_eps():
    case = teaching_case(0, (8,))
    facts = jacobian_facts(case.x, case.gamma, case.dout, eps=0.0)
    assert facts.xhat_response <= 1e-14 * float(np.max(np.abs(facts.jacobian)))
    assert facts.eigenvalues[0] == pytest.approx(0.0, abs=1e-14)


def test_xhat_response_with_eps_is_gamma_xhat_s_eps_over_var_plus_eps():
    case = teaching_case(1, (8,))
    eps = 0.2
    facts = jacobian_facts(case.x, case.gamma, case.dout, eps)
    cache = forward(case.x, case.gamma, case.beta, eps)
    expected = case.gamma * cache.normalized_x * cache.inv_sqrt_sve * eps / cache.sve
    assert facts.xhat_response == pytest.approx(float(np.max(np.abs(expected))), rel=1e-12)


def test_non_uniform_gamma_breaks_symmetry_and_has_no_prediction():
    case = teaching_case(2, (8,))
    facts = jacobian_facts(case.x, case.gamma, case.dout)
    assert not facts.gamma_uniform
    assert facts.symmetry_error > 1e-3
    assert facts.predicted_eigenvalues is None and facts.eigenvalue_error is None
    # gamma > 0 makes J similar to a symmetric matrix, so its eigenvalues stay real.
    assert facts.max_imag_eigenvalue <= 1e-12
    assert np.all(np.diff(facts.eigenvalues) >= 0)


def test_one_feature_has_only_the_zero_eigenvalue():
    facts = jacobian_facts(np.array([3.0]), np.array([2.0]), np.array([1.0]), eps=1e-3)
    np.testing.assert_array_equal(facts.predicted_eigenvalues, [0.0])
    assert facts.eigenvalue_error == 0.0


def test_float32_stays_float32():
    case = teaching_case(3, (6,))
    facts = jacobian_facts(case.x.astype(np.float32), np.ones(6), case.dout)
    assert facts.jacobian.dtype == facts.eigenvalues.dtype == np.float32
    assert facts.eigenvalue_error < 1e-5


def test_needs_one_vector_and_a_matching_dout():
    with pytest.raises(ValueError, match="one vector"):
        jacobian_facts(np.ones((2, 3)), np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="dout has shape"):
        jacobian_facts(np.arange(3.0), np.ones(3), np.ones(4))
