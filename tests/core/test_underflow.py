"""Verdicts where a rounding underflows: "cannot resolve", never a fail of a right gradient.

data/f32_underflow.npz is an auditor's case: float32, N = 1, D = 8, x of about 1e2-1e3, every
|dout| between 1.2e-38 and 5.7e-38 (normal numbers). The exact dx is at most 8.0e-41
(subnormal): the staged dx is 1.5% off only because its intermediates underflow, and the
check used to fail it at 7.24x its (relative) bound.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ln_core import backward, check_node, forward, gradient_check
from ln_core.agreement import agreement
from ln_core.closed_form import closed_form_backward
from ln_core.dx_sum import dx_sum
from ln_core.forward import NODE_NAMES
from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS, judge
from teaching.presets import PRESETS
from teaching.upstream import one_hot
from teaching.verdicts import gradient_verdict

CASE = np.load(Path(__file__).parent / "data" / "f32_underflow.npz")
F32 = np.float32
# The auditor's second case: float32, D = 16, dout about 1e-38 with some entries subnormal.
SUBNORMAL_X = [-0.352, 0.265, -0.464, -0.479, -0.721, -0.52, 0.16, -0.38, 0.1, 1.901, 0.479]
SUBNORMAL_X += [-1.576, 1.734, 0.348, -0.941, 0.907]
SUBNORMAL_DOUT = [1.8e-40, -6.15e-39, -6.34e-39, -9.93e-39, 4.8e-40, 1.069e-38, -3.25e-39]
SUBNORMAL_DOUT += [4.21e-39, 1.876e-38, -1.215e-38, 2.58e-39, -3.06e-39, -1.059e-38, -1.026e-38]
SUBNORMAL_DOUT += [-1.5e-40, 4.34e-39]


def _case():
    return CASE["x"], CASE["g"], CASE["b"], CASE["d"]


def test_the_case_is_normal_float32_upstream_with_a_subnormal_dx():
    x, gamma, beta, dout = _case()
    assert x.dtype == dout.dtype == F32
    assert np.all(np.abs(dout) >= np.finfo(F32).tiny)
    dx = backward(dout, forward(x, gamma, beta)).dx
    assert np.max(np.abs(dx)) < np.finfo(F32).tiny


def test_the_gradient_check_cannot_resolve_what_underflowed_and_fails_nothing():
    check = gradient_check(*_case(), eps=1e-5, axis=(-1,))
    for method in check.errors:
        for tensor in check.tensors:
            assert check.status(method, tensor) == CANNOT_RESOLVE, (method, tensor)
    assert check.passed
    assert check.underflow
    sentence = gradient_verdict(check, "dx", "").sentence
    assert "smallest normal number, 1.18e-38" in sentence
    assert "Scale dout up" in sentence


def test_a_subnormal_dout_fails_neither_dgamma_nor_dbeta():
    x = np.array([SUBNORMAL_X], dtype=F32)
    dout = np.array([SUBNORMAL_DOUT], dtype=F32)
    check = gradient_check(x, np.ones(16, F32), np.zeros(16, F32), dout, 1e-5, axis=(-1,))
    statuses = {t: check.status("backward", t) for t in check.tensors}
    assert statuses == dict.fromkeys(("dx", "dgamma", "dbeta"), CANNOT_RESOLVE)


def test_the_stepper_checks_fail_nothing_on_the_case():
    x, gamma, beta, dout = _case()
    cache = forward(x, gamma, beta)
    grads = backward(dout, cache)
    for node in (*NODE_NAMES, "x"):
        assert check_node(cache, grads, node).status == CANNOT_RESOLVE, node
    staged_vs_closed = agreement(cache, grads.dout, grads, closed_form_backward(dout, cache))
    assert {j.status for j in staged_vs_closed.values()} == {CANNOT_RESOLVE}
    assert dx_sum(grads, cache).judgement.status == CANNOT_RESOLVE


def test_an_underflow_outweighs_the_gap_in_the_rule():
    judgement = judge([1.0], [0.0], 1e-3, underflow=np.dtype(F32))
    assert judgement.excess > 1 and judgement.status == CANNOT_RESOLVE
    assert judge([1.0], [0.0], 1e-3).status == FAIL
    assert judge([1.0], [1.0], 1e-3).status == PASS


def test_exact_results_below_the_smallest_normal_number_raise_no_flag():
    from ln_core.validation import underflowed

    subnormal = np.array([1e-40, -3e-41], dtype=F32)
    assert not underflowed(lambda: subnormal * F32(0.0))[1]
    assert not underflowed(lambda: subnormal * F32(1.0))[1]
    assert not underflowed(lambda: np.sum(subnormal))[1]
    assert underflowed(lambda: subnormal * F32(0.3))[1]
    assert underflowed(lambda: np.array([1e-20], F32) * np.array([1e-20], F32))[1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_no_preset_underflows_with_any_usual_upstream(preset, dtype):
    """Zeros of a one-hot or zero dout are exact: the usual inputs keep their verdicts."""
    rng = np.random.default_rng(0)
    shape = PRESETS[preset].shape or (3, 6)
    example = PRESETS[preset].make(shape, rng)
    x, gamma, beta = (a.astype(dtype) for a in (example.x, example.gamma, example.beta))
    for dout in (rng.standard_normal(shape), np.ones(shape), one_hot(shape, 1), np.zeros(shape)):
        cache = forward(x, gamma, beta)
        grads = backward(dout.astype(dtype), cache)
        assert not gradient_check(x, gamma, beta, dout.astype(dtype)).underflow
        assert not check_node(cache, grads, "x").underflow
