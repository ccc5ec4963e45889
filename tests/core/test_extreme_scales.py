"""Every scale a float holds: the library paths answer, the staged pass names what it cannot show.

LayerNorm forgets the scale of x, so the closed form (`layernorm_closed_form`) and the fused
kernel (`layernorm_forward_backward`) rescale each group before squaring and must match a
60-digit decimal reference to a few ulp from the dtype's largest numbers down to subnormal
spreads. The staged pass shows its nodes as they are: where one is not representable it
refuses with that node named, and wherever it answers it is as exact as the closed form.
"""

from __future__ import annotations

import warnings
from decimal import Context, Decimal, localcontext

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from kit import DTYPES, FAST

from ln_core import (
    backward,
    forward,
    jacobian,
    layernorm_closed_form,
    layernorm_forward_backward,
    rms_forward,
)

# A few ulp of the natural scale of each result (see _errors_in_ulp).
ULPS = 16
DECIMALS = Context(prec=60, Emax=10**6, Emin=-(10**6))


def decimal_reference(x, gamma, beta, dout, eps):
    """Rows of x (N, D) normalized over the last axis, in 60-digit decimals.

    Returns float64 arrays: out, dx, and each row's natural sizes: of out (max|gamma * xhat| +
    max|beta|), of dx (s * max|dout * gamma|) and of the Jacobian (s * max|gamma|), with
    s = 1/sqrt(var + eps). Every input is taken exactly as the float it is (eps as the dtype
    rounds it).
    """
    rows = []
    with localcontext(DECIMALS):
        e = Decimal(float(x.dtype.type(eps)))
        gs, bs = [Decimal(float(v)) for v in gamma], [Decimal(float(v)) for v in beta]
        for row, drow in zip(x, dout, strict=True):
            xs, d = [Decimal(float(v)) for v in row], len(row)
            mu = sum(xs) / d
            xc = [v - mu for v in xs]
            s = 1 / (sum(c * c for c in xc) / d + e).sqrt()
            xhat = [c * s for c in xc]
            g = [Decimal(float(a)) * b for a, b in zip(drow, gs, strict=True)]
            mean_g, mean_gx = sum(g) / d, sum(a * h for a, h in zip(g, xhat, strict=True)) / d
            out = [a * h + b for a, h, b in zip(gs, xhat, bs, strict=True)]
            dx = [s * (a - mean_g - h * mean_gx) for a, h in zip(g, xhat, strict=True)]
            out_size = max(abs(a * h) for a, h in zip(gs, xhat, strict=True)) + max(map(abs, bs))
            sizes = [out_size, s * max(map(abs, g)), s * max(map(abs, gs))]
            rows.append(([float(v) for v in out], [float(v) for v in dx], sizes))
    out, dx, sizes = zip(*rows, strict=True)
    # float() of a decimal rounds it once; a size beyond float64 becomes inf
    sizes = np.array([[float(v) for v in row] for row in sizes])
    return np.array(out), np.array(dx), sizes[:, :1], sizes[:, 1:2], sizes[:, 2:]


def _condition(x) -> np.ndarray:
    """Per row, max|x| / max|x - mean|: how much a common offset magnifies x's own rounding.

    The mean is rounded at x's scale and x - mean keeps that absolute error, so no float
    method gets closer than about this many ulp of the spread (1 to 3 without an offset).
    """
    with np.errstate(under="ignore"):
        x = x.astype(np.float64)
        unit = x / np.max(np.abs(x), axis=-1, keepdims=True)
        spread = np.abs(unit - np.mean(unit, axis=-1, keepdims=True))
    return 1 / np.max(spread, axis=-1, keepdims=True)


def _errors_in_ulp(got, expected, size, dtype, condition=1.0) -> float:
    """max |got - expected| in units of the dtype's rounding of each row's natural size.

    Where that size is itself below the subnormal range, the unit is the smallest subnormal:
    the result can then only be off by its final rounding.
    """
    unit = np.maximum(np.finfo(dtype).eps * size, np.finfo(dtype).smallest_subnormal)
    return float(np.max(np.abs(got.astype(np.float64) - expected) / unit / condition))


def _problem(dtype, scale: float, d: int = 6, rows: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = (scale * rng.normal(size=(rows, d))).astype(dtype)
    gamma = rng.uniform(0.5, 2.0, d).astype(dtype)
    beta = rng.normal(size=d).astype(dtype)
    dout = rng.normal(size=(rows, d)).astype(dtype)
    return x, gamma, beta, dout


def _assert_matches_reference(result, args, eps, what):
    x = args[0]
    out, dx, out_size, dx_size, _ = decimal_reference(*args, eps)
    condition = _condition(x)
    assert result.out.dtype == x.dtype and result.dx.dtype == x.dtype, what
    assert _errors_in_ulp(result.out, out, out_size, x.dtype, condition) <= ULPS, what
    assert _errors_in_ulp(result.dx, dx, dx_size, x.dtype, condition) <= ULPS, what


SCALES = {
    np.dtype(np.float64): [
        1e307,
        1e200,
        1.3e154,
        1e100,
        1.0,
        1e-100,
        1e-154,
        1e-160,
        1e-162,
        1e-200,
        1e-300,
    ],
    np.dtype(np.float32): [1e37, 1e19, 1e10, 1.0, 1e-10, 1e-19, 1e-20, 1e-25, 1e-30],
}
SCALE_CASES = [(dtype, scale) for dtype in DTYPES for scale in SCALES[dtype]]


def _assert_library_paths_match_reference(args, eps) -> None:
    """The closed form and the fused kernel answer (no NumPy warning) and match the reference."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        closed = layernorm_closed_form(*args, eps=eps)
        fused = layernorm_forward_backward(*args, eps=eps)
    _assert_matches_reference(closed, args, eps, "closed form")
    _assert_matches_reference(fused, args, eps, "fused")


@pytest.mark.parametrize(("dtype", "scale"), SCALE_CASES, ids=lambda v: f"{v}")
@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_library_paths_match_a_decimal_reference_at_every_scale(dtype, scale, eps):
    _assert_library_paths_match_reference(_problem(dtype, scale), eps)


def test_the_largest_numbers_and_a_subnormal_spread():
    big = np.array([[np.finfo(np.float64).max, -np.finfo(np.float64).max, 1e308, -3e307]])
    tiny = np.array([[5e-324, 1e-323, 0.0, -2e-323]])  # spread a few subnormal steps
    dout = np.array([[1.0, -2.0, 0.5, 3.0]])
    for x, dout_scale in ((big, 1.0), (tiny, 1e-300)):  # s * dout within range
        _assert_library_paths_match_reference((x, np.ones(4), np.zeros(4), dout_scale * dout), 0.0)


@pytest.mark.parametrize(
    ("scale", "dtype", "node"),
    [
        (1e155, np.float64, r"sq_xsm = x_sm \*\* 2 at index \(0, \d\): it is not representable"),
        (1e20, np.float32, r"sq_xsm = x_sm \*\* 2 at index \(0, \d\): it is not representable"),
        (1e-160, np.float64, r"sq_xsm = x_sm \*\* 2 for the vector in row 0.*underflow"),
        (1e-162, np.float64, r"sq_xsm = x_sm \*\* 2 for the vector in row 0.*underflow"),
        (1e-20, np.float32, r"sq_xsm = x_sm \*\* 2 for the vector in row 0.*underflow"),
    ],
)
def test_the_staged_pass_names_the_node_it_cannot_show(scale, dtype, node):
    args = _problem(dtype, scale)
    with pytest.raises(ValueError, match=r"The staged pass cannot show " + node) as info:
        forward(*args[:3], eps=0.0)
    assert "layernorm_closed_form" in str(info.value)
    assert "zero variance" not in str(info.value)  # the entries differ: not "all equal"


def test_the_staged_backward_names_the_gradient_node_it_cannot_show():
    """sigma = 1e-154 at eps = 0: every node is fine, but dsve ~ D |dout| / var is not."""
    args = _problem(np.float64, 1e-153)
    cache = forward(*args[:3], eps=0.0)
    with pytest.raises(ValueError, match=r"staged backward pass cannot show dsve at index"):
        backward(args[3] * 1e6, cache)
    _assert_matches_reference(
        layernorm_closed_form(*args[:3], args[3] * 1e6, eps=0.0),
        (*args[:3], args[3] * 1e6),
        0.0,
        "closed form",
    )


@st.composite
def problems(draw):
    """x = 2**k * (normal draws) for k anywhere in the dtype's range, a few entries per row."""
    dtype = draw(st.sampled_from(DTYPES))
    info = np.finfo(dtype)
    k = draw(st.integers(info.minexp - info.nmant + 8, info.maxexp - 4))
    d = draw(st.integers(1, 8))
    eps = draw(st.sampled_from([0.0, 1e-12, 1e-5, 1.0]))
    offset = draw(st.sampled_from([0.0, 0.0, 3.0]))  # a common offset of 3 spreads
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    with np.errstate(over="ignore", under="ignore"):
        x = (np.ldexp(offset + rng.normal(size=(2, d)), k)).astype(dtype)
    assume(np.isfinite(x).all() and (np.ptp(x, axis=-1) > 0).all())
    gamma = rng.uniform(0.5, 2.0, d).astype(dtype)
    beta = rng.normal(size=d).astype(dtype)
    # dout small enough that s * dout stays in range even for a subnormal spread
    dout = (rng.normal(size=(2, d)) * (1.0 if k > info.minexp // 2 else 1e-30)).astype(dtype)
    return (x, gamma, beta, dout), eps


@FAST
@given(problems())
def test_all_paths_agree_on_what_they_accept_and_on_the_answer(problem):
    """The library paths accept every such input and match the reference; the staged pass
    either matches it too or refuses naming a node; the Jacobian accepts wherever its own
    entries are in range."""
    args, eps = problem
    if args[0].shape[-1] == 1 and eps == 0:
        for call in (layernorm_closed_form, layernorm_forward_backward):
            with pytest.raises(ValueError, match="zero variance"):
                call(*args, eps=eps)
        return
    _assert_library_paths_match_reference(args, eps)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reference = decimal_reference(*args, eps)
        if reference[4][0, 0] < np.finfo(args[0].dtype).max / 8:  # J's entries are in range
            assert np.isfinite(jacobian(args[0][0], args[1], eps)).all()
        try:
            cache = forward(*args[:3], eps=eps)
            staged = backward(args[3], cache)
        except ValueError as err:
            assert "cannot show" in str(err) and "layernorm_closed_form" in str(err), err
            return
    out, dx, out_size, dx_size, _ = reference
    condition = _condition(args[0])
    assert _errors_in_ulp(cache.out, out, out_size, args[0].dtype, condition) <= ULPS
    assert _errors_in_ulp(staged.dx, dx, dx_size, args[0].dtype, condition) <= ULPS


# --- float16 in, float16 out, computed in float32 ------------------------------------------


@pytest.mark.parametrize("path", [layernorm_closed_form, layernorm_forward_backward])
def test_float16_gives_float16_computed_in_float32(path):
    args = _problem(np.float16, 3.0)
    result = path(*args, eps=1e-5)
    wide = path(*(a.astype(np.float32) for a in args), eps=1e-5)
    for name in ("out", "dx", "dgamma", "dbeta"):
        got, expected = getattr(result, name), getattr(wide, name)
        assert got.dtype == np.float16, name
        np.testing.assert_array_equal(got, expected.astype(np.float16), err_msg=name)
    out, _, out_size, _, _ = decimal_reference(*args, 1e-5)
    assert _errors_in_ulp(result.out, out, out_size, np.float16, _condition(args[0])) <= 2


@pytest.mark.parametrize("path", [layernorm_closed_form, layernorm_forward_backward])
def test_a_float16_result_beyond_its_range_is_refused(path):
    x, _, beta, dout = _problem(np.float16, 1.0)
    gamma = np.full(6, 60000, np.float16)  # out = gamma * xhat reaches 120000 > 65504
    with pytest.raises(ValueError, match="float16 result is not representable"):
        path(x, gamma, beta, dout, eps=1e-5)


def test_the_staged_pass_shows_float16_input_as_its_float32_nodes():
    cache = forward(np.array([1.0, 2.0, 4.0], np.float16), eps=1e-5)
    assert cache.dtype == np.float32 and cache.out.dtype == np.float32


@pytest.mark.parametrize(
    ("scale", "message"),
    [
        (1e155, r"cannot show sq_x = x \*\* 2 at index \(0, \d\): it is not representable"),
        (1e-160, r"cannot show sq_x = x \*\* 2 for the vector in row 0: its squares under"),
    ],
)
def test_the_staged_rmsnorm_names_the_node_it_cannot_show(scale, message):
    x = _problem(np.float64, scale)[0]
    with pytest.raises(ValueError, match=message):
        rms_forward(x, eps=0.0)
    # at eps = 0 the scale of x does not matter: the refused x rescaled has the same output
    rescaled = rms_forward(x * (1e-150 if scale > 1 else 1e150), eps=0.0)
    np.testing.assert_allclose(rescaled.out, rms_forward(x / scale, eps=0.0).out, rtol=1e-14)


@pytest.mark.parametrize("threads", [1, 2])
def test_fused_blocks_out_of_range_take_the_closed_form_on_any_thread(threads):
    """Rows of every scale side by side: each block of one row goes its own way."""
    rng = np.random.default_rng(8)
    scales = np.array([1.0, 1e300, 1e-160, 3.0, 1e-300, 1e155])[:, None]
    x = scales * rng.normal(size=(6, 5))
    args = (x, rng.uniform(0.5, 2.0, 5), rng.normal(size=5), rng.normal(size=(6, 5)))
    fused = layernorm_forward_backward(*args, eps=0.0, block_rows=1, threads=threads)
    _assert_matches_reference(fused, args, 0.0, "fused")
    whole = layernorm_forward_backward(*args, eps=0.0, threads=threads)  # one mixed block
    _assert_matches_reference(whole, args, 0.0, "fused, one block")
    np.testing.assert_allclose(fused.dgamma, whole.dgamma, rtol=1e-13)
