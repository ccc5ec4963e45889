"""Each fact the Jacobian page states, checked on computed numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kit import FAST, teaching_case

from ln_core import forward, jacobian
from ln_core.bugs import Bug, buggy_backward, jacobian_from_backward
from ln_core.jacobian_facts import facts_of, jacobian_facts
from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS
from teaching.jacobian_verdicts import jacobian_verdicts
from teaching.presets import make_example
from teaching.verdicts import AS_EXPECTED

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


OFFSET = "Large common offset (about 2000)"


def _offset_rows(seed: int, dtype=np.float32):
    example = make_example(OFFSET, (3, 8), seed)
    dout = np.random.default_rng(seed).standard_normal((3, 8))
    for row in range(3):
        yield (
            example.x[row].astype(dtype),
            example.gamma.astype(dtype),
            dout[row].astype(dtype),
        )


@pytest.mark.parametrize("seed", range(3))
def test_a_large_common_offset_never_fails_a_right_jacobian(seed):
    # Before the offset term, J @ 1 and J x̂ failed here: "3.0e-04 is more than rounding".
    for x, gamma, dout in _offset_rows(seed):
        facts = jacobian_facts(x, gamma, dout)
        verdicts = jacobian_verdicts(facts, 1e-5, "float32")
        statuses = {name: getattr(verdicts, name).status for name in ("ones", "xhat", "dx")}
        assert FAIL not in statuses.values(), statuses
        assert statuses["ones"] == PASS


@pytest.mark.parametrize(
    ("x", "eps"),
    [
        (1e8 + np.random.default_rng(0).standard_normal(8), 1e-5),
        # Cancellation leaves J at about 4e-17 while its terms are about 1e-6.
        (np.array([0.0, 1e6]), 10.0),
    ],
)
def test_float64_offsets_and_cancellation_never_fail_a_right_jacobian(x, eps):
    facts = jacobian_facts(x, np.ones(x.size), np.linspace(-1.0, 1.0, x.size), eps)
    verdicts = jacobian_verdicts(facts, eps, "float64")
    assert verdicts.ones.status != FAIL and verdicts.xhat.status != FAIL
    assert verdicts.symmetry.status != FAIL and verdicts.dx.status != FAIL


@pytest.mark.parametrize("seed", range(3))
def test_the_bound_covers_the_computed_j_against_a_float64_one(seed):
    # J in float64 from the same float32 inputs is exact to far below float32's rounding.
    for x, gamma, dout in _offset_rows(seed):
        facts = jacobian_facts(x, gamma, dout)
        exact = jacobian(x.astype(np.float64), gamma.astype(np.float64), 1e-5)
        assert np.all(np.abs(facts.jacobian - exact) <= facts.bound)


def test_eps_swamped_by_rounding_is_cannot_resolve_not_as_expected():
    # Seed 2 of the offset preset, row 0: J x̂ is 1.7e-5 where eps's value is 4.2e-6, and a
    # J x̂ of 0 would be as close: that is not "as expected".
    x, gamma, dout = next(_offset_rows(2))
    verdict = jacobian_verdicts(jacobian_facts(x, gamma, dout), 1e-5, "float32").xhat
    assert verdict.status == CANNOT_RESOLVE
    assert "J x̂ of 0 would look the same" in verdict.reason and "float64" in verdict.reason
    # In float64 the same vector resolves eps's part.
    x, gamma, dout = (a.astype(np.float64) for a in (x, gamma, dout))
    assert jacobian_verdicts(jacobian_facts(x, gamma, dout), 1e-5, "float64").xhat.status == (
        AS_EXPECTED
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    ("bug", "fact"),
    [(Bug.MEAN_PATH_SIGN, "ones_judgement"), (Bug.DROP_VARIANCE_PATH, "xhat_judgement")],
)
def test_a_wrong_jacobian_is_still_caught_where_resolvable(dtype, bug, fact):
    # The offset preset in float32 is the hardest case where J @ 1 still resolves; J x̂ only
    # resolves in float64 there, and in float32 with eps = 1 (eps's part as large as J).
    eps = 1e-5 if fact == "ones_judgement" or dtype == np.float64 else 1.0
    for x, gamma, dout in _offset_rows(0, dtype):
        cache = forward(x, gamma, None, eps)
        right = facts_of(jacobian(x, gamma, eps), cache, dout)
        wrong = jacobian_from_backward(lambda d, c: buggy_backward(d, c, bug), x, gamma, eps)
        assert getattr(right, fact).status == PASS
        assert getattr(facts_of(wrong, cache, dout), fact).status == FAIL
