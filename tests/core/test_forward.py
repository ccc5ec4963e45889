"""Unit tests for the staged forward pass (ln_core.forward)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from kit import ANALYTIC_RTOL, DTYPES, assert_close, direct_layernorm, make_case

from ln_core import NODE_INPUTS, NODE_NAMES, Cache, forward, forward_from

REDUCED = ("sample_mean", "sample_var", "sve", "sqrt_sve", "inv_sqrt_sve")
SHAPES = [(5,), (4, 6), (2, 3, 5)]


def test_node_names_are_the_ten_stages_in_order():
    assert NODE_NAMES == (
        "sample_mean",
        "x_sm",
        "sq_xsm",
        "sample_var",
        "sve",
        "sqrt_sve",
        "inv_sqrt_sve",
        "normalized_x",
        "gx",
        "out",
    )
    assert set(NODE_INPUTS) == set(NODE_NAMES)
    known = {"x", "gamma", "beta", "eps"}
    for name in NODE_NAMES:  # every node reads only inputs or earlier nodes
        assert set(NODE_INPUTS[name]) <= known, name
        known.add(name)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.5])
def test_forward_matches_direct_formula(shape, dtype, eps):
    case = make_case(1, shape, dtype, eps, offset=1.5, scale=3.0)
    cache = forward(*case.args, eps=eps)
    xhat, out = direct_layernorm(case.x, case.gamma, case.beta, eps)
    rtol = ANALYTIC_RTOL[np.dtype(dtype)]
    assert_close(cache.normalized_x, xhat, rtol, what="normalized_x")
    assert_close(cache.out, out, rtol, what="out")


@pytest.mark.parametrize("shape", SHAPES)
def test_node_values_are_the_documented_formulas(shape):
    case = make_case(2, shape, eps=1e-3)
    c = forward(*case.args, eps=1e-3)
    x = case.x
    mean = x.mean(axis=-1, keepdims=True)
    np.testing.assert_allclose(c.sample_mean, mean, rtol=1e-12)
    np.testing.assert_allclose(c.x_sm, x - mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.sq_xsm, (x - mean) ** 2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.sample_var, x.var(axis=-1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(c.sve, c.sample_var + 1e-3, rtol=1e-15)
    np.testing.assert_allclose(c.sqrt_sve, np.sqrt(c.sve), rtol=1e-15)
    np.testing.assert_allclose(c.inv_sqrt_sve, 1 / c.sqrt_sve, rtol=1e-15)
    np.testing.assert_allclose(c.normalized_x, c.x_sm * c.inv_sqrt_sve, rtol=1e-15)
    np.testing.assert_allclose(c.gx, case.gamma * c.normalized_x, rtol=1e-15)
    np.testing.assert_allclose(c.out, c.gx + case.beta, rtol=1e-15)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("axis", [-1, 0])
def test_variance_is_biased(shape, axis):
    case = make_case(3, shape, eps=0.0)
    cache = forward(*case.args, eps=0.0, axis=axis)
    biased = np.var(case.x, axis=axis, keepdims=True)
    np.testing.assert_allclose(cache.sample_var, biased, rtol=1e-12)
    n = case.x.shape[axis]
    if n > 1:  # and is not the unbiased (n - 1) one
        unbiased = np.var(case.x, axis=axis, keepdims=True, ddof=1)
        assert not np.allclose(cache.sample_var, unbiased)
    assert cache.n == n


@pytest.mark.parametrize(
    ("shape", "axis"), [(s, a) for s in SHAPES for a in (-1, 0, 1, -2) if -len(s) <= a < len(s)]
)
def test_node_shapes_keep_the_reduced_axis(shape, axis):
    case = make_case(4, shape)
    cache = forward(*case.args, axis=axis)
    reduced = list(shape)
    reduced[axis] = 1
    for name in NODE_NAMES:
        expected = tuple(reduced) if name in REDUCED else shape
        assert getattr(cache, name).shape == expected, name
    assert cache.gamma.shape == cache.beta.shape == (shape[-1],)
    assert cache.axis == ((axis - len(shape) if axis >= 0 else axis),)
    assert list(cache.nodes) == list(NODE_NAMES)


def test_cache_is_frozen():
    case = make_case(5, (3, 4))
    cache = forward(*case.args)
    assert dataclasses.is_dataclass(cache)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cache.out = np.zeros(3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cache.eps = 1.0
    assert isinstance(cache, Cache)


def test_cache_keeps_the_inputs():
    case = make_case(6, (2, 5))
    cache = forward(*case.args, eps=0.25)
    np.testing.assert_array_equal(cache.x, case.x)
    np.testing.assert_array_equal(cache.gamma, case.gamma)
    np.testing.assert_array_equal(cache.beta, case.beta)
    assert cache.eps == 0.25
    assert cache.axis == (-1,)


@pytest.mark.parametrize("shape", SHAPES)
def test_normalized_rows_have_zero_mean_unit_variance(shape):
    case = make_case(7, shape, scale=10.0, offset=-2.0)
    xhat = forward(*case.args, eps=0.0).normalized_x
    np.testing.assert_allclose(xhat.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(xhat.var(axis=-1), 1.0, rtol=1e-12)


def test_axis_zero_is_the_batchnorm_view():
    case = make_case(8, (6, 4), eps=1e-5)
    cache = forward(*case.args, eps=1e-5, axis=0)
    x = case.x
    xhat = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5)
    np.testing.assert_allclose(cache.normalized_x, xhat, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cache.out, case.gamma * xhat + case.beta, rtol=1e-12, atol=1e-12)
    assert cache.sample_mean.shape == (1, 4)
    assert cache.n == 6


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_is_preserved(dtype):
    case = make_case(9, (3, 4), dtype)
    cache = forward(*case.args)
    for name in ("x", "gamma", "beta", *NODE_NAMES):
        assert getattr(cache, name).dtype == dtype, name
    assert cache.dtype == dtype


def test_float32_x_with_float64_params_stays_float32():
    x = np.array([[1, 2, 4], [0, -1, 3]], dtype=np.float32)
    cache = forward(x, np.array([1.0, 2.0, 0.5]), [0, 0, 1])
    assert cache.out.dtype == np.float32
    assert cache.gamma.dtype == np.float32


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (np.array([1, 2, 4]), np.float64),
        (np.array([1, 2, 4], dtype=np.int8), np.float64),
        (np.array([1, 2, 4], dtype=np.uint64), np.float64),
        ([1, 2, 4], np.float64),
        ([True, False, True], np.float64),
        (np.array([1, 2, 4], dtype=np.float16), np.float32),
    ],
)
def test_integers_become_float64(x, expected):
    cache = forward(x, [1, 1, 1], [0, 0, 0])
    assert cache.out.dtype == expected
    assert np.all(np.isfinite(cache.out))


def test_constant_vector_with_positive_eps_is_defined():
    cache = forward(np.full((2, 4), 3.0), np.ones(4), np.arange(4.0), eps=1e-5)
    np.testing.assert_array_equal(cache.normalized_x, 0.0)
    np.testing.assert_array_equal(cache.out, np.broadcast_to(np.arange(4.0), (2, 4)))
    np.testing.assert_allclose(cache.inv_sqrt_sve, 1 / np.sqrt(1e-5))


@pytest.mark.parametrize("dtype", DTYPES)
def test_single_feature_with_positive_eps_is_defined(dtype):
    x = np.array([[3.0], [-7.0]], dtype=dtype)
    cache = forward(x, [2.0], [0.5], eps=1e-3)
    np.testing.assert_array_equal(cache.normalized_x, 0.0)
    np.testing.assert_array_equal(cache.out, 0.5)
    assert cache.out.dtype == dtype


@pytest.mark.parametrize(
    ("dtype", "scale", "eps"),
    [
        (np.float64, 1e100, 1e-5),
        (np.float64, 1e-100, 0.0),
        (np.float64, 1e-100, 1e-5),
        (np.float64, 1e-150, 0.0),
        (np.float32, 1e15, 1e-5),
        (np.float32, 1e-15, 0.0),
        (np.float32, 1e-15, 1e-5),
    ],
)
def test_extreme_magnitudes_work(dtype, scale, eps):
    x = (scale * np.array([[1.0, -2.0, 0.5, 3.0], [2.0, 2.5, -1.0, 0.0]])).astype(dtype)
    cache = forward(x, np.ones(4), np.zeros(4), eps=eps)
    for name, value in cache.nodes.items():
        assert np.all(np.isfinite(value)), name
    if eps == 0.0 or scale > 1:
        xhat, _ = direct_layernorm(
            np.array([[1.0, -2.0, 0.5, 3.0], [2.0, 2.5, -1.0, 0.0]]), 1, 0, 0
        )
        np.testing.assert_allclose(cache.normalized_x, xhat, rtol=1e-4, atol=1e-5)
    else:  # var << eps: everything is squashed towards 0
        assert np.max(np.abs(cache.normalized_x)) < 1e-3


def test_large_common_offset():
    x = 1e6 + np.array([0.5, -1.0, 2.0, 0.25])
    cache = forward(x, np.ones(4), np.zeros(4), eps=0.0)
    xhat, _ = direct_layernorm(x - 1e6, 1, 0, 0.0)
    np.testing.assert_allclose(cache.normalized_x, xhat, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("node", ["x", *NODE_NAMES])
def test_forward_from_unchanged_value_reproduces_the_pass(node):
    case = make_case(10, (3, 5), eps=1e-3)
    cache = forward(*case.args, eps=1e-3)
    value = case.x if node == "x" else getattr(cache, node)
    values = forward_from(cache, node, value)
    for name in NODE_NAMES:
        np.testing.assert_array_equal(values[name], getattr(cache, name), err_msg=name)


def test_forward_from_recomputes_only_downstream_with_stacked_copies():
    case = make_case(11, (2, 4), eps=1e-3)
    cache = forward(*case.args, eps=1e-3)
    stacked = np.stack([cache.sample_var, 2 * cache.sample_var])  # (2, 2, 1)
    values = forward_from(cache, "sample_var", stacked)
    assert values["out"].shape == (2, 2, 4)
    np.testing.assert_array_equal(values["x_sm"], cache.x_sm)  # upstream untouched
    np.testing.assert_allclose(values["out"][0], cache.out, rtol=1e-14)
    expected = case.gamma * cache.x_sm / np.sqrt(2 * cache.sample_var + 1e-3) + case.beta
    np.testing.assert_allclose(values["out"][1], expected, rtol=1e-12)
