"""Bad input: every public function raises ValueError with a message that names the problem,
and never a NumPy warning, a NaN/inf result, or another exception type."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ln_core import (
    Sublayer,
    backward,
    central_difference,
    check_node,
    closed_form_backward,
    forward,
    gradient_check,
    jacobian,
    jacobian_parts,
    layernorm_closed_form,
    make_sublayer,
    numerical_gradients,
    residual_backward,
    residual_forward,
    residual_numerical_grads,
)
from ln_core.forward import ZeroVariance

X = np.array([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]])
G = np.array([1.0, 0.5, 2.0])
B = np.array([0.0, 0.1, -0.2])
DOUT = np.array([[0.3, -1.0, 2.0], [1.0, 0.5, -0.5]])
SUB = make_sublayer(3, seed=0)


def with_nan(a, index=(0, 1)):
    a = np.array(a, dtype=float)
    a[index] = np.nan
    return a


def with_inf(a, index=(0,), sign=1.0):
    a = np.array(a, dtype=float)
    a[index] = sign * np.inf
    return a


def cache():
    return forward(X, G, B)


def cache32():
    return forward(X.astype(np.float32), G, B)


def rcache():
    return residual_forward(X, SUB, G, B)


CASES = {
    # --- NaN or inf in any input ------------------------------------------------------------
    "forward x NaN": (lambda: forward(with_nan(X), G, B), r"x contains NaN at index \(0, 1\)"),
    "forward x inf": (lambda: forward(with_inf(X, (1, 2)), G, B), r"x contains an infinite value"),
    "forward x -inf": (lambda: forward(with_inf(X, (0, 0), -1), G, B), r"x contains an infinite"),
    "forward gamma NaN": (lambda: forward(X, with_nan(G, 2), B), r"gamma contains NaN"),
    "forward beta inf": (lambda: forward(X, G, with_inf(B)), r"beta contains an infinite value"),
    "forward eps NaN": (lambda: forward(X, G, B, eps=float("nan")), r"eps must be a finite"),
    "forward eps inf": (lambda: forward(X, G, B, eps=np.inf), r"eps must be a finite"),
    "backward dout NaN": (lambda: backward(with_nan(DOUT), cache()), r"dout contains NaN"),
    "backward dout inf": (
        lambda: backward(with_inf(DOUT, (1, 1)), cache()),
        r"dout contains an inf",
    ),
    "closed dout NaN": (
        lambda: closed_form_backward(with_nan(DOUT), cache()),
        r"dout contains NaN",
    ),
    "closed dout inf": (
        lambda: closed_form_backward(with_inf(DOUT, (0, 2)), cache()),
        r"dout contains an infinite",
    ),
    "numerical x NaN": (
        lambda: numerical_gradients(with_nan(X), G, B, DOUT),
        r"x contains NaN",
    ),
    "numerical dout NaN": (
        lambda: numerical_gradients(X, G, B, with_nan(DOUT)),
        r"dout contains NaN",
    ),
    "numerical beta inf": (
        lambda: numerical_gradients(X, G, with_inf(B), DOUT),
        r"beta contains an infinite",
    ),
    "gradcheck gamma NaN": (
        lambda: gradient_check(X, with_nan(G, 0), B, DOUT),
        r"gamma contains NaN",
    ),
    "gradcheck dout inf": (
        lambda: gradient_check(X, G, B, with_inf(DOUT, (1, 0))),
        r"dout contains an infinite",
    ),
    "jacobian x NaN": (lambda: jacobian(with_nan(X[0], 1), G), r"x contains NaN"),
    "jacobian gamma inf": (lambda: jacobian(X[0], with_inf(G)), r"gamma contains an infinite"),
    "jacobian_parts x inf": (lambda: jacobian_parts(with_inf(X[0]), G), r"x contains an inf"),
    "residual x NaN": (lambda: residual_forward(with_nan(X), SUB, G, B), r"x contains NaN"),
    "residual W NaN": (
        lambda: residual_forward(X, Sublayer(with_nan(SUB.W), SUB.c), G, B),
        r"W contains NaN",
    ),
    "residual c inf": (
        lambda: residual_forward(X, Sublayer(SUB.W, with_inf(SUB.c)), G, B),
        r"c contains an infinite",
    ),
    "residual gamma NaN": (
        lambda: residual_forward(X, SUB, with_nan(G, 1), B),
        r"gamma contains NaN",
    ),
    "residual backward dout NaN": (
        lambda: residual_backward(with_nan(DOUT), rcache()),
        r"dout contains NaN",
    ),
    "residual numerical dout inf": (
        lambda: residual_numerical_grads(X, SUB, G, B, with_inf(DOUT, (0, 0))),
        r"dout contains an infinite",
    ),
    # --- wrong shapes -----------------------------------------------------------------------
    "gamma too long": (
        lambda: forward(X, np.ones(4), B),
        r"gamma has shape \(4,\) but must have shape \(3,\).*D = 3",
    ),
    "gamma 2-D": (lambda: forward(X, np.ones((1, 3)), B), r"gamma has shape \(1, 3\)"),
    "gamma scalar": (lambda: forward(X, 1.0, B), r"gamma has shape \(\) but must have shape"),
    "beta too short": (lambda: forward(X, G, np.zeros(2)), r"beta has shape \(2,\)"),
    "dout transposed": (
        lambda: backward(DOUT.T, cache()),
        r"dout has shape \(3, 2\) but must have shape \(2, 3\)",
    ),
    "dout broadcastable is still wrong": (
        lambda: backward(DOUT[0], cache()),
        r"dout has shape \(3,\) but must have shape \(2, 3\)",
    ),
    "closed dout wrong": (
        lambda: closed_form_backward(np.ones((2, 4)), cache()),
        r"dout has shape \(2, 4\)",
    ),
    "numerical dout wrong": (
        lambda: numerical_gradients(X, G, B, np.ones(3)),
        r"dout has shape \(3,\)",
    ),
    "numerical gamma wrong": (
        lambda: numerical_gradients(X, np.ones(2), B, DOUT),
        r"gamma has shape \(2,\)",
    ),
    "gradcheck beta wrong": (
        lambda: gradient_check(X, G, np.zeros(5), DOUT),
        r"beta has shape \(5,\)",
    ),
    "gradcheck dout wrong": (
        lambda: gradient_check(X, G, B, np.ones((1, 2, 3))),
        r"dout has shape \(1, 2, 3\)",
    ),
    "jacobian of a batch": (lambda: jacobian(X, G), r"one vector x of shape \(D,\).*\(2, 3\)"),
    "jacobian gamma wrong": (lambda: jacobian(X[0], np.ones(2)), r"gamma has shape \(2,\)"),
    "x scalar": (lambda: forward(3.0, [1.0], [0.0]), r"x is a single number"),
    "jacobian x scalar": (lambda: jacobian(3.0, [1.0]), r"x is a single number"),
    "residual W wrong": (
        lambda: residual_forward(X, Sublayer(np.ones((3, 2)), SUB.c), G, B),
        r"W has shape \(3, 2\) but must have shape \(3, 3\)",
    ),
    "residual c wrong": (
        lambda: residual_forward(X, Sublayer(SUB.W, np.ones(4)), G, B),
        r"c has shape \(4,\) but must have shape \(3,\)",
    ),
    "residual backward dout wrong": (
        lambda: residual_backward(np.ones((3, 3)), rcache()),
        r"dout has shape \(3, 3\)",
    ),
    "residual gamma wrong": (
        lambda: residual_forward(X, SUB, np.ones(2), B),
        r"gamma has shape \(2,\)",
    ),
    # --- empty input --------------------------------------------------------------------------
    "x empty list": (lambda: forward([], [], []), r"x is empty"),
    "x no features": (lambda: forward(np.zeros((2, 0)), [], []), r"x is empty"),
    "x no rows": (lambda: forward(np.zeros((0, 3)), G, B), r"x is empty"),
    "gamma empty": (lambda: forward(X, [], B), r"gamma is empty"),
    "beta empty": (lambda: forward(X, G, np.zeros(0)), r"beta is empty"),
    "dout empty": (lambda: backward(np.zeros((0,)), cache()), r"dout is empty"),
    "jacobian x empty": (lambda: jacobian([], []), r"x is empty"),
    "numerical x empty": (lambda: numerical_gradients([], [], [], []), r"x is empty"),
    "residual x empty": (lambda: residual_forward(np.zeros((0, 3)), SUB, G, B), r"x is empty"),
    # --- eps < 0 ------------------------------------------------------------------------------
    "forward eps negative": (lambda: forward(X, G, B, eps=-1e-5), r"eps must be >= 0, got -1e-05"),
    "jacobian eps negative": (lambda: jacobian(X[0], G, -0.1), r"eps must be >= 0"),
    "numerical eps negative": (
        lambda: numerical_gradients(X, G, B, DOUT, eps=-1.0),
        r"eps must be >= 0",
    ),
    "gradcheck eps negative": (
        lambda: gradient_check(X, G, B, DOUT, eps=-1e-9),
        r"eps must be >= 0",
    ),
    "residual eps negative": (lambda: residual_forward(X, SUB, G, B, eps=-1), r"eps must be >= 0"),
    "eps not a number": (lambda: forward(X, G, B, eps="small"), r"eps must be a number"),
    "eps None": (lambda: forward(X, G, B, eps=None), r"eps must be a number"),
    "eps array": (lambda: forward(X, G, B, eps=np.array([1e-5, 1e-3])), r"eps must be a number"),
    # --- zero variance with eps = 0 -----------------------------------------------------------
    "constant row eps 0": (
        lambda: forward([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]], G, B, eps=0.0),
        r"vector in row 1 has zero variance.*eps = 0",
    ),
    "constant vector eps 0": (
        lambda: forward([2.0, 2.0, 2.0], G, B, eps=0),
        r"zero variance.*Set eps > 0",
    ),
    "single feature eps 0": (lambda: forward([[3.0], [4.0]], [1.0], [0.0], eps=0.0), r"zero var"),
    "constant column axis 0 eps 0": (
        lambda: forward([[1.0, 7.0, 3.0], [2.0, 7.0, 5.0]], G, B, eps=0.0, axis=0),
        r"feature \(normalized over the batch\) number 1 has zero variance",
    ),
    "squares round to 0": (
        lambda: forward([0.0, 1e-200, 0.0], [1, 1, 1], [0, 0, 0], eps=0.0),
        r"cannot show sq_xsm = x_sm \*\* 2 for the vector: its entries differ, but their "
        r"squares underflow \(sve = 0\.0e\+00.*layernorm_closed_form",
    ),
    "variance subnormal": (
        lambda: forward(1e-160 * np.array([[1.0, 2.0, 4.0]] * 2), eps=0.0),
        r"for the vector in row 0: .*sve = \d\.\de-3\d\d, below float64's smallest normal",
    ),
    "eps rounds to 0 in float32": (
        lambda: forward(np.ones(3, np.float32), [1, 1, 1], [0, 0, 0], eps=1e-50),
        r"zero variance.*eps = 1e-50 rounds to 0 in float32",
    ),
    "jacobian constant eps 0": (lambda: jacobian([1.0, 1.0, 1.0], G, 0.0), r"zero variance"),
    "numerical constant eps 0": (
        lambda: numerical_gradients(np.ones((2, 3)), G, B, DOUT, eps=0.0),
        r"zero variance",
    ),
    "gradcheck constant eps 0": (
        lambda: gradient_check(np.ones((2, 3)), G, B, DOUT, eps=0.0),
        r"zero variance",
    ),
    "residual constant z eps 0": (
        lambda: residual_forward(np.ones((2, 3)), Sublayer(np.zeros((3, 3)), np.zeros(3)), G, B, 0),
        r"zero variance",
    ),
    # --- axis out of range / not an integer --------------------------------------------------
    "axis too big": (
        lambda: forward(X, G, B, axis=2),
        r"axis 2 is out of range for an input with 2 dimension\(s\); use an axis from -2 to 1",
    ),
    "axis too negative": (lambda: forward(X, G, B, axis=-3), r"axis -3 is out of range"),
    "axis 1 on a vector": (lambda: forward(X[0], G, B, axis=1), r"axis 1 is out of range"),
    "axis float": (lambda: forward(X, G, B, axis=0.0), r"axis must be an integer, got 0.0"),
    "axis bool": (lambda: forward(X, G, B, axis=True), r"axis must be an integer"),
    "axis string": (lambda: forward(X, G, B, axis="0"), r"axis must be an integer"),
    "numerical axis": (
        lambda: numerical_gradients(X, G, B, DOUT, axis=5),
        r"axis 5 is out of range",
    ),
    "gradcheck axis": (lambda: gradient_check(X, G, B, DOUT, axis=-4), r"axis -4 is out of range"),
    # --- non-numeric arrays -------------------------------------------------------------------
    "x text": (lambda: forward(["a", "b", "c"], G, B), r"x must contain numbers, but it holds str"),
    "x numeric text": (lambda: forward(["1", "2", "3"], G, B), r"x must contain numbers"),
    "x mixed objects": (
        lambda: forward(np.array([1.0, "a", 2.0], dtype=object), G, B),
        r"x must contain only numbers",
    ),
    "x None": (lambda: forward(None, G, B), r"x contains None"),
    "x with a None": (lambda: forward([1.0, None, 2.0], G, B), r"x contains None"),
    "x dict": (lambda: forward({"a": 1}, G, B), r"x must contain only numbers"),
    "x ragged": (lambda: forward([[1.0, 2.0], [3.0]], G, B), r"x must be an array of numbers"),
    "x complex": (lambda: forward(np.array([1 + 2j, 3, 4]), G, B), r"x must contain real numbers"),
    "x dates": (
        lambda: forward(np.array(["2020-01-01"] * 3, dtype="datetime64[D]"), G, B),
        r"x must contain numbers, but it holds datetime64",
    ),
    "gamma text": (lambda: forward(X, ["1", "x", "y"], B), r"gamma must contain numbers"),
    "beta objects": (
        lambda: forward(X, G, np.array([object(), 1, 2], dtype=object)),
        r"beta must contain only numbers",
    ),
    "dout text": (lambda: backward(np.full((2, 3), "g"), cache()), r"dout must contain numbers"),
    "jacobian x ragged": (
        lambda: jacobian([[1.0, 2.0], [3.0]], G),
        r"x must be an array of numbers",
    ),
    "jacobian x text": (lambda: jacobian(["a", "b", "c"], G), r"x must contain numbers"),
    "residual W text": (
        lambda: residual_forward(X, Sublayer(np.full((3, 3), "w"), SUB.c), G, B),
        r"W must contain numbers",
    ),
    # --- magnitudes that are not representable -----------------------------------------------
    "squares overflow": (
        lambda: forward(1e200 * X, G, B),
        r"cannot show sq_xsm = x_sm \*\* 2 at index \(0, 0\): it is not representable in "
        r"float64 .*rescales x before squaring",
    ),
    "float64 gamma too large for float32": (
        lambda: forward(X.astype(np.float32), np.array([1e300, 1.0, 1.0]), B),
        r"gamma has a value at index \(0,\) that is too large for float32",
    ),
    "float64 dout too large for float32": (
        lambda: backward(np.full((2, 3), 1e100), cache32()),
        r"dout has a value at index \(0, 0\) that is too large for float32",
    ),
    "python int too large": (lambda: forward([10**400, 1, 2], G, B), r"too large for float64"),
    "eps too large for float32": (
        lambda: forward(X.astype(np.float32), G, B, eps=1e39),
        r"not representable",
    ),
    # --- steps, nodes, sublayer size ----------------------------------------------------------
    "h zero": (lambda: numerical_gradients(X, G, B, DOUT, h=0.0), r"step h must be a positive"),
    "h negative": (lambda: gradient_check(X, G, B, DOUT, h=-1e-5), r"step h must be a positive"),
    "h NaN": (lambda: numerical_gradients(X, G, B, DOUT, h=np.nan), r"step h must be a positive"),
    "h text": (lambda: numerical_gradients(X, G, B, DOUT, h="tiny"), r"step h must be a number"),
    "central difference h": (
        lambda: central_difference(lambda v: float(v.sum()), np.ones(2), -1.0),
        r"step h must be a positive",
    ),
    "residual numerical h": (
        lambda: residual_numerical_grads(X, SUB, G, B, DOUT, h=0),
        r"step h must be a positive",
    ),
    "unknown node": (
        lambda: check_node(cache(), backward(DOUT, cache()), "mean"),
        r"Unknown node 'mean'",
    ),
    "sublayer size": (lambda: make_sublayer(0), r"needs D >= 1 features, got 0"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_raises_a_clear_value_error(name):
    call, message = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a NumPy warning would surface as an exception here
        with pytest.raises(ValueError, match=message) as info:
            call()
    # The lab's own refusals only, not a NumPy-specific error; ZeroVariance is the lab's, so the
    # app can offer its ways out.
    assert type(info.value) in (ValueError, ZeroVariance)
    assert len(str(info.value)) < 400


def test_errors_name_the_index_of_the_first_bad_entry():
    x = np.ones((2, 3, 4))
    x[1, 2, 3] = np.nan
    x[1, 0, 0] = np.inf
    with pytest.raises(ValueError, match=r"x contains an infinite value at index \(1, 0, 0\) \(2 "):
        forward(x, np.ones(4), np.zeros(4))


def test_float32_staged_backward_with_an_unrepresentable_node_gradient():
    """float32, eps = 0 and a spread of 1e-19: var ~ 3e-38 (normal), but d(loss)/d(sve) ~
    D |dout| / (2 var) ~ 1e39 > float32 max.

    The staged pass cannot show that node and names it (ValueError, no warning); the closed
    form, which never forms dsve, still gives a finite dx.
    """
    x = (1e-19 * np.array([1.0, -2.0, 0.5, 3.0])).astype(np.float32)
    dout = np.array([10.0, 20.0, 30.0, -10.0], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache = forward(x, np.ones(4), np.zeros(4), eps=0.0)
        with pytest.raises(ValueError, match=r"staged backward pass cannot show dsve at index"):
            backward(dout, cache)
        closed = closed_form_backward(dout, cache)
        library = layernorm_closed_form(x, np.ones(4), np.zeros(4), dout, eps=0.0)
    assert np.all(np.isfinite(closed.dx))
    np.testing.assert_allclose(library.dx, closed.dx, rtol=1e-5)


def test_float32_variance_below_the_normal_range_is_refused_by_the_staged_pass():
    """A spread of 1e-20 in float32: var ~ 1e-40 is subnormal, so sample_var lost digits."""
    x = (1e-20 * np.array([1.0, -2.0, 0.5, 3.0])).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"cannot show sq_xsm .* below float32's smallest"):
            forward(x, eps=0.0)
        assert np.all(np.isfinite(layernorm_closed_form(x, None, None, np.ones(4), 0.0).dx))
