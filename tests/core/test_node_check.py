"""Unit tests for the per-node gradient check (ln_core.node_check)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from kit import DTYPES, make_case

from ln_core import NODE_NAMES, NodeCheck, backward, check_node, forward
from ln_core.node_check import node_step

NODES = (*NODE_NAMES, "x")


def staged(case):
    cache = forward(*case.args, eps=case.eps, axis=case.axis)
    return cache, backward(case.dout, cache)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("shape", "axis"), [((6,), -1), ((3, 5), -1), ((2, 3, 4), -1), ((5, 3), 0), ((2, 4, 3), 1)]
)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_node_checks_good_on_random_data(dtype, shape, axis, eps, seed):
    case = make_case(70 + seed, shape, dtype, eps=eps, axis=axis, scale=2.0, offset=1.0)
    cache, grads = staged(case)
    for node in NODES:
        result = check_node(cache, grads, node)
        assert result.status == "pass", (node, result.judgement)
        assert result.analytic.shape == result.numerical.shape
        assert result.numerical.shape == (cache.x if node == "x" else getattr(cache, node)).shape
        # Every node's differences run in float64 whatever the dtype (the gradient check's
        # reference does the same).
        assert result.numerical.dtype == np.float64


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_nodes_are_exact_or_nearly(dtype):
    """gx and out feed only additions: the central difference is exact up to one rounding."""
    case = make_case(73, (3, 4), dtype)
    cache, grads = staged(case)
    for node in ("gx", "out"):
        result = check_node(cache, grads, node)
        assert result.rel_error <= 10 * np.finfo(dtype).eps, node
    np.testing.assert_array_equal(grads.dout, grads.dgx)


def test_identical_arrays_pass_with_a_zero_bound():
    same = np.array([1.0, 2.0])
    check = NodeCheck("out", same, same.copy(), np.array([1e-5, 1e-5]), np.zeros(2))
    assert check.status == "pass"
    assert check.rel_error == 0.0 and check.max_abs_diff == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("node", [n for n in NODES if n != "out"])
def test_a_wrong_node_gradient_is_flagged(dtype, node):
    """(Not "out": its gradient is dout itself, which also defines the numerical loss.)"""
    case = make_case(74, (3, 5), dtype, eps=1e-3)
    cache, grads = staged(case)
    field = "dx" if node == "x" else f"d{node}"
    broken = dataclasses.replace(grads, **{field: -grads.of(node)})
    result = check_node(cache, broken, node)
    assert result.status == "fail", (node, result.judgement)
    half = dataclasses.replace(grads, **{field: 0.5 * grads.of(node)})
    assert check_node(cache, half, node).status == "fail"


def test_max_abs_diff_and_h():
    case = make_case(75, (2, 4))
    cache, grads = staged(case)
    result = check_node(cache, grads, "sample_var", h=1e-6)
    assert np.all(result.h == 1e-6)
    diff = np.max(np.abs(result.analytic - result.numerical))
    assert result.max_abs_diff == pytest.approx(diff)
    assert result.status == "pass"


def test_default_steps_are_per_element_and_positive():
    case = make_case(76, (3, 5), eps=0.0, scale=1e-3)
    cache, _ = staged(case)
    for node in NODES:
        step = node_step(cache, node)
        value = cache.x if node == "x" else getattr(cache, node)
        assert step.shape == value.shape, node
        assert np.all(step > 0) and np.all(np.isfinite(step)), node
    # tiny deviations get a tiny step, in the units of the standard deviation
    assert np.max(node_step(cache, "x_sm")) < 1e-3 * 1e-3


@pytest.mark.parametrize("dtype", DTYPES)
def test_large_offset_widens_the_step_of_x(dtype):
    """x = 100 + N(0, 0.1): a step of cbrt(eps) * sigma is too small next to 100 in float32."""
    case = make_case(77, (3, 5), dtype, scale=0.1, offset=1000.0, eps=0.0)
    cache, grads = staged(case)
    for node in ("x", "sample_mean"):
        step = node_step(cache, node)
        value = getattr(cache, node)
        assert np.all((value + step) - (value - step) > 0), node
        result = check_node(cache, grads, node)
        # In float32 an offset of 1e4 sigma leaves the difference about 3 digits: it may not
        # resolve dx, but it must never call it wrong.
        expected = ("pass",) if dtype == np.float64 else ("pass", "cannot resolve")
        assert result.status in expected, (node, result.judgement)


@pytest.mark.parametrize("seed", range(5))
def test_large_beta_does_not_drown_the_change_in_float32(seed):
    """L = sum(dout * (gx + beta)): the difference is taken before beta is added."""
    case = make_case(seed, (3, 5), np.float32, eps=1e-5)
    beta = (100 * np.sign(case.beta)).astype(np.float32)
    cache = forward(case.x, case.gamma, beta, eps=1e-5)
    grads = backward(case.dout, cache)
    for node in NODES:
        result = check_node(cache, grads, node)
        assert result.status == "pass", (node, result.judgement)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiny_spread_far_from_zero_still_has_a_step(dtype):
    """sample_mean = 3 with a spread of 1e-6 (eps = 0): the step must not round to 0."""
    x = np.array([3.0, 3.0 + 2e-6, 3.0 - 1e-6, 3.0 + 3e-6], dtype=dtype)
    cache = forward(x, np.ones(4), np.zeros(4), eps=0.0)
    grads = backward(np.array([1.0, -0.5, 0.25, 2.0]), cache)
    for node in NODES:
        result = check_node(cache, grads, node)
        assert np.all(np.isfinite(result.numerical)), node
        assert result.status != "fail", (node, result.judgement)


def test_unknown_node():
    case = make_case(78, (4,))
    cache, grads = staged(case)
    with pytest.raises(ValueError, match=r"Unknown node 'dx'.*sample_mean.*and x"):
        check_node(cache, grads, "dx")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "x", [np.array([[3.0], [-7.0], [0.5]]), np.full((2, 4), 3.0)], ids=["D=1", "constant"]
)
def test_nodes_where_only_eps_keeps_the_math_defined(dtype, x):
    d = x.shape[-1]
    cache = forward(x.astype(dtype), np.linspace(-1.0, 2.0, d), np.zeros(d), eps=1e-3)
    grads = backward((np.arange(x.size).reshape(x.shape) - 1.0).astype(dtype), cache)
    for node in NODES:
        assert check_node(cache, grads, node).status != "fail", node


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("x", "eps", "upstream", "gamma", "nodes"),
    [
        # ?d=2&eps=0&step=20: with D = 2 and no eps every vector normalizes to (-1, 1).
        ([[0.3, 1.7], [-2.0, 0.5]], 0.0, "random", "random", ("x",)),
        # ?d=8&eps=0.00001&upstream=ones&affine=neither&step=14 and 17: these are exactly 0.
        (None, 1e-5, "ones", "none", ("inv_sqrt_sve", "sample_var", "sqrt_sve", "sve")),
        # D = 1 with a mean far from 0: four ulp of the mean are far above sqrt(eps).
        ([[3e10], [-1e10]], 1e-12, "random", "random", ("sample_mean", "x")),
    ],
)
def test_the_issue_examples_cannot_resolve_instead_of_failing(
    dtype, x, eps, upstream, gamma, nodes
):
    """Issue 19: the Stepper showed these correct gradients failing at 1.00."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 8)) if x is None else np.asarray(x)
    x = x.astype(dtype)
    d = x.shape[-1]
    gammas = None if gamma == "none" else rng.uniform(0.5, 2.0, d)
    cache = forward(x, gammas, None if gamma == "none" else np.zeros(d), eps=eps)
    dout = np.ones_like(x) if upstream == "ones" else rng.standard_normal(x.shape)
    grads = backward(dout.astype(dtype), cache)
    for node in nodes:
        result = check_node(cache, grads, node)
        assert result.status == "cannot resolve", (node, result.judgement)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_node_bug_far_above_the_bound_fails(dtype):
    """The bound is not so loose that a real mistake hides: flip dsample_var's sign."""
    case = make_case(79, (3, 8), dtype, eps=1e-3)
    cache, grads = staged(case)
    broken = dataclasses.replace(grads, dsample_var=-grads.dsample_var)
    result = check_node(cache, broken, "sample_var")
    assert result.status == "fail", result.judgement


def test_a_node_check_too_large_to_finish_is_refused_with_its_size():
    # 4,097 x 4,097 entries: every copy of x_sm re-runs the lines after it on all of x.
    x = np.random.default_rng(0).normal(size=(4097, 8))
    cache = forward(x)
    grads = backward(np.ones_like(x), cache)
    with pytest.raises(ValueError, match=r"x_sm moves each of its 32,776 entries"):
        check_node(cache, grads, "x_sm")
    # The stepper's largest input (32 x 64) is checked.
    small = forward(x[:32, :].repeat(8, axis=1))
    assert check_node(small, backward(np.ones((32, 64)), small), "x_sm").judgement.status == "pass"


@pytest.mark.parametrize("node", ["x", "sample_mean", "sve", "out"])
def test_every_perturbed_stack_fits_in_a_mebibyte(monkeypatch, node):
    """Each copy stack the check recomputes has at most 2^17 entries per node (1 MiB in
    float64) at the Stepper's largest input: with 2^21, five students on the last step at
    once took a server past a gigabyte."""
    import ln_core.node_check as node_check

    sizes, recompute = [], node_check.forward_from

    def counted(cache, name, value):
        nodes = recompute(cache, name, value)
        sizes.append(max(a.size for a in nodes.values()))
        return nodes

    monkeypatch.setattr(node_check, "forward_from", counted)
    case = make_case(58, (32, 64))
    cache = forward(*case.args)
    check_node(cache, backward(case.dout, cache), node)
    assert len(sizes) >= 2 and max(sizes) <= 2**17
