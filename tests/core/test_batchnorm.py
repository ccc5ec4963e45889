"""BatchNorm via LayerNorm of the transpose equals the staged graph run with axis=0."""

from __future__ import annotations

import numpy as np
import pytest
from kit import teaching_case

from ln_core import gradient_check
from ln_core.batchnorm import batchnorm_via_transpose, compare_bn_ln


@pytest.mark.parametrize("shape", [(5, 4), (3, 2, 4), (2, 6)])
def test_transpose_matches_direct_batchnorm(shape):
    comparison = compare_bn_ln(*teaching_case(0, shape).args, eps=1e-5)
    assert set(comparison.errors) == {"out", "dx", "dgamma", "dbeta"}
    assert comparison.max_error < 1e-13, comparison.errors
    assert comparison.via_transpose.dx.shape == shape
    assert comparison.via_transpose.dgamma.shape == (shape[-1],)


def test_batchnorm_gradients_pass_a_gradient_check():
    case = teaching_case(1, (6, 3))
    check = gradient_check(*case.args, eps=1e-5, axis=0)
    result = batchnorm_via_transpose(*case.args, eps=1e-5)
    assert check.passed
    for name in ("dx", "dgamma", "dbeta"):
        np.testing.assert_allclose(
            getattr(result, name), getattr(check.numerical, name), rtol=1e-6, atol=1e-8
        )


def test_batchnorm_normalizes_each_feature_over_the_batch():
    case = teaching_case(2, (8, 3))
    unit = batchnorm_via_transpose(case.x, np.ones(3), np.zeros(3), case.dout, eps=0.0).out
    np.testing.assert_allclose(unit.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(unit.var(axis=0), 1.0, atol=1e-12)


def test_float32_stays_float32():
    x, gamma, beta, dout = teaching_case(3, (4, 3)).args
    comparison = compare_bn_ln(x.astype(np.float32), gamma, beta, dout)
    result = comparison.via_transpose
    assert result.out.dtype == result.dx.dtype == result.dgamma.dtype == np.float32
    assert comparison.max_error < 1e-5


def test_needs_a_batch_axis():
    with pytest.raises(ValueError, match="batch axis"):
        batchnorm_via_transpose(np.ones(3), np.ones(3), np.zeros(3), np.ones(3))


def test_single_sample_without_eps_names_the_transposed_view():
    with pytest.raises(ValueError, match=r"transposed view.*zero variance"):
        batchnorm_via_transpose(np.ones((1, 3)), np.ones(3), np.zeros(3), np.ones((1, 3)), 0.0)


def test_dout_of_the_wrong_shape_is_rejected():
    with pytest.raises(ValueError, match="dout has shape"):
        batchnorm_via_transpose(np.ones((2, 3)), np.ones(3), np.zeros(3), np.ones((3, 2)))
