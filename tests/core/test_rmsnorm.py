"""RMSNorm: staged backward against central differences, its invariances, validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kit import FAST, teaching_case

from ln_core import forward, rel_error
from ln_core.numerical import central_difference
from ln_core.rmsnorm import RMS_NODE_NAMES, rms_backward, rms_forward, rms_jacobian

vectors = hnp.arrays(
    np.float64,
    st.integers(2, 7),
    elements=st.floats(-10, 10, allow_nan=False).filter(lambda v: abs(v) > 1e-3),
)


def _loss(case, axis: int):
    def loss_of(x, gamma, beta) -> float:
        return float(np.sum(case.dout * rms_forward(x, gamma, beta, 1e-5, axis).out))

    return loss_of


@pytest.mark.parametrize(
    ("shape", "axis"), [((6,), -1), ((3, 5), -1), ((2, 3, 4), -1), ((5, 3), 0)]
)
def test_staged_backward_matches_central_differences(shape, axis):
    case = teaching_case(1, shape)
    grads = rms_backward(case.dout, rms_forward(case.x, case.gamma, case.beta, 1e-5, axis))
    loss = _loss(case, axis)
    h = 1e-6
    numerical = {
        "dx": central_difference(lambda v: loss(v, case.gamma, case.beta), case.x, h),
        "dgamma": central_difference(lambda v: loss(case.x, v, case.beta), case.gamma, h),
        "dbeta": central_difference(lambda v: loss(case.x, case.gamma, v), case.beta, h),
    }
    for name, expected in numerical.items():
        assert rel_error(getattr(grads, name), expected) < 1e-8, name


def test_both_contributions_to_dx_are_kept_and_summed():
    case = teaching_case(2, (3, 5))
    grads = rms_backward(case.dout, rms_forward(case.x, case.gamma, case.beta))
    np.testing.assert_array_equal(grads.dx, grads.dx_via_normalized_x + grads.dx_via_sq_x)
    assert np.max(np.abs(grads.dx_via_sq_x)) > 0.01 * np.max(np.abs(grads.dx))


def test_cache_names_every_node_in_forward_order():
    case = teaching_case(3, (2, 4))
    cache = rms_forward(case.x, case.gamma, case.beta)
    assert tuple(cache.nodes) == RMS_NODE_NAMES
    assert not {"sample_mean", "x_sm"} & set(RMS_NODE_NAMES)  # no mean node: nothing is centred
    assert cache.mean_sq.shape == (2, 1)
    np.testing.assert_allclose(cache.mse, cache.mean_sq + 1e-5)


@FAST
@given(vectors, st.floats(0.01, 100))
def test_scale_invariant_without_eps(x, scale):
    gamma, beta = np.linspace(0.5, 1.5, x.size), np.linspace(-1, 1, x.size)
    out = rms_forward(x, gamma, beta, eps=0.0).out
    np.testing.assert_allclose(rms_forward(scale * x, gamma, beta, eps=0.0).out, out, atol=1e-12)


@FAST
@given(vectors)
def test_jacobian_sends_x_to_zero_without_eps(x):
    gamma = np.linspace(0.5, 1.5, x.size)
    jac = rms_jacobian(x, gamma, eps=0.0)
    assert np.max(np.abs(jac @ x)) <= 1e-12 * np.max(np.abs(jac)) * np.max(np.abs(x))


def test_jacobian_does_not_send_ones_to_zero():
    # RMSNorm is blind to scale, not to shift: no mean is subtracted.
    case = teaching_case(4, (8,))
    jac = rms_jacobian(case.x, case.gamma, eps=0.0)
    assert np.max(np.abs(jac @ np.ones(8))) > 0.1


def test_jacobian_does_not_send_x_to_zero_with_eps():
    case = teaching_case(5, (8,))
    jac = rms_jacobian(case.x, case.gamma, eps=0.1)
    assert np.max(np.abs(jac @ case.x)) > 1e-3


@FAST
@given(vectors, st.sampled_from([0.0, 1e-5, 0.5]))
def test_jacobian_rows_are_the_backward_for_one_hot_douts(x, eps):
    gamma = np.linspace(-1.5, 2.0, x.size)
    jac = rms_jacobian(x, gamma, eps)
    stacked = rms_forward(np.tile(x, (x.size, 1)), gamma, np.zeros(x.size), eps)
    rows = rms_backward(np.eye(x.size), stacked).dx
    assert rel_error(rows, jac) < 1e-12


def test_equals_layernorm_on_a_zero_mean_vector():
    case = teaching_case(6, (3, 7))
    centred = case.x - case.x.mean(axis=-1, keepdims=True)
    rms = rms_forward(centred, case.gamma, case.beta, 1e-5).out
    ln = forward(case.x, case.gamma, case.beta, 1e-5).out
    np.testing.assert_allclose(rms, ln, atol=1e-12)


def test_float32_stays_float32():
    case = teaching_case(7, (2, 5))
    cache = rms_forward(case.x.astype(np.float32), case.gamma, case.beta)
    grads = rms_backward(case.dout, cache)
    assert cache.out.dtype == grads.dx.dtype == grads.dgamma.dtype == np.float32
    assert rms_jacobian(case.x[0].astype(np.float32), case.gamma).dtype == np.float32


def test_zero_vector_with_zero_eps_is_a_clear_error():
    with pytest.raises(ValueError, match="all zeros"):
        rms_forward(np.array([[1.0, 2.0], [0.0, 0.0]]), np.ones(2), np.zeros(2), eps=0.0)


def test_zero_vector_with_eps_gives_beta():
    out = rms_forward(np.zeros(3), np.ones(3), np.array([1.0, 2.0, 3.0])).out
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    ("x", "gamma", "eps", "match"),
    [
        ([1.0, np.nan], [1.0, 1.0], 1e-5, "NaN"),
        ([1.0, 2.0], [1.0, 1.0, 1.0], 1e-5, "gamma has shape"),
        ([1.0, 2.0], [1.0, 1.0], -1.0, "eps must be >= 0"),
        ([1e200, 1.0], [1.0, 1.0], 1e-5, "not representable"),
        (3.0, [1.0], 1e-5, "single number"),
    ],
)
def test_bad_input_raises_a_readable_value_error(x, gamma, eps, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=match):
            rms_forward(x, gamma, np.zeros(np.size(gamma)), eps)


def test_jacobian_needs_one_vector():
    with pytest.raises(ValueError, match="one vector"):
        rms_jacobian(np.ones((2, 3)), np.ones(3))


def test_a_tiny_non_zero_vector_is_refused_for_its_underflow_not_as_zeros():
    # Its squares underflow to 0, so mse = 0 at eps = 0: the reason is the underflow.
    x = np.array([[1e-170, 2e-170, -1e-170], [1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="its squares underflow") as refused:
        rms_forward(x, None, None, 0.0)
    assert "all zeros" not in str(refused.value)


def test_an_eps_the_dtype_rounds_to_0_is_named_as_typed():
    x = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"all zeros and eps = 1e-46 rounds to 0 in float32"):
        rms_forward(x, None, None, 1e-46)
