"""The names a student's formula may use: the lab's node names and the documents' usual
symbols, each bound to its value in an audit Setting (ln_core.audit.setting).

Shapes follow the Setting: (C, V, D) per entry, (C, V, 1) for one value per vector (μ, σ², the
node gradients reduced over the features), (C, 1, D) per feature (γ, β), floats for D and ε.
`sum` and `mean` run over the features of each vector (the normalized axis), `sum_batch` and
`mean_batch` over the vectors.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ln_core.audit.setting import Setting
from ln_core.formula import Function, Symbol, Vocabulary

# The staged backward's gradients in the order it computes them: a formula for one of them
# may read only those before it (and never itself).
BACKWARD_ORDER = (
    "dout",
    "dgx",
    "dnormalized_x",
    "dx_sm_via_normalized_x",
    "dinv_sqrt_sve",
    "dsqrt_sve",
    "dsve",
    "dsample_var",
    "dsq_xsm",
    "dx_sm_via_sq_xsm",
    "dx_sm",
    "dx_via_x_sm",
    "dsample_mean",
    "dx_via_sample_mean",
    "dx",
)

_FORWARD = (
    Symbol("x", (), "x", "the input, one row per vector"),
    Symbol("sample_mean", ("mu", "μ"), r"\mu", "the mean of each vector"),
    Symbol("x_sm", (), r"x_{\mathrm{sm}}", "x − μ"),
    Symbol("sq_xsm", (), r"\mathrm{sq}_{\mathrm{xsm}}", "(x − μ)²"),
    Symbol(
        "sample_var",
        ("var", "variance", "σ2", "sigma2"),
        r"\sigma^{2}",
        "the variance of each vector (divided by D); σ² works too",
    ),
    Symbol("sigma", ("σ", "std"), r"\sigma", "√σ², the standard deviation without ε"),
    Symbol("sve", (), r"\left(\sigma^{2}+\varepsilon\right)", "σ² + ε"),
    Symbol("sqrt_sve", (), r"\sqrt{\sigma^{2}+\varepsilon}", "√(σ² + ε)"),
    Symbol("inv_sqrt_sve", ("rstd",), r"\frac{1}{\sqrt{\sigma^{2}+\varepsilon}}", "1/√(σ² + ε)"),
    Symbol("normalized_x", ("xhat", "x̂", "x_hat"), r"\hat{x}", "x̂ = (x − μ)/√(σ² + ε)"),
    Symbol("gamma", ("γ",), r"\gamma", "the scale γ, one per feature"),
    Symbol("beta", ("β",), r"\beta", "the shift β, one per feature"),
    Symbol("gx", (), r"\gamma\hat{x}", "γ x̂"),
    Symbol("out", ("y",), "y", "the output γ x̂ + β"),
    Symbol("eps", ("ε", "ϵ", "epsilon"), r"\varepsilon", "ε"),
    Symbol("D", ("N",), "D", "the number of features in a vector"),
)

_GRADIENTS = (
    Symbol("dout", ("dy",), r"\mathrm{d}y", "the upstream gradient ∂L/∂y"),
    Symbol("dgx", (), r"\mathrm{d}(\gamma\hat{x})", "the gradient at gx (equals dy)"),
    Symbol("dnormalized_x", ("dxhat", "dx̂", "dx_hat"), r"\mathrm{d}\hat{x}", "∂L/∂x̂ = dy γ"),
    Symbol("dx_sm_via_normalized_x", (), r"\mathrm{d}x_{\mathrm{sm}}^{(\hat{x})}", "node"),
    Symbol("dinv_sqrt_sve", (), r"\mathrm{d}\,\mathrm{inv\_sqrt\_sve}", "node"),
    Symbol("dsqrt_sve", (), r"\mathrm{d}\,\mathrm{sqrt\_sve}", "node"),
    Symbol("dsve", (), r"\mathrm{d}\,\mathrm{sve}", "node"),
    Symbol("dsample_var", ("dvar",), r"\mathrm{d}\sigma^{2}", "∂L/∂σ²"),
    Symbol("dsq_xsm", (), r"\mathrm{d}\,\mathrm{sq\_xsm}", "node"),
    Symbol("dx_sm_via_sq_xsm", (), r"\mathrm{d}x_{\mathrm{sm}}^{(\mathrm{sq})}", "node"),
    Symbol("dx_sm", (), r"\mathrm{d}x_{\mathrm{sm}}", "node"),
    Symbol("dx_via_x_sm", (), r"\mathrm{d}x^{(x_{\mathrm{sm}})}", "node"),
    Symbol("dsample_mean", ("dmu", "dμ"), r"\mathrm{d}\mu", "∂L/∂μ"),
    Symbol("dx_via_sample_mean", (), r"\mathrm{d}x^{(\mu)}", "node"),
    Symbol("dx", (), r"\mathrm{d}x", "∂L/∂x"),
)

_FUNCTIONS = (
    Function("sum", ("Sum",), (r"\sum_{j}\left(", r"\right)"), "sum over the features (Σ)"),
    Function("mean", (), (r"\operatorname{mean}_{j}\left(", r"\right)"), "mean over the features"),
    Function(
        "sum_batch", (), (r"\sum_{\mathrm{vectors}}\left(", r"\right)"), "sum over the vectors"
    ),
    Function(
        "mean_batch",
        (),
        (r"\operatorname{mean}_{\mathrm{vectors}}\left(", r"\right)"),
        "mean over the vectors",
    ),
    Function("sqrt", (), (r"\sqrt{", "}"), "square root (√)"),
    Function("abs", (), (r"\left|", r"\right|"), "absolute value"),
)

LAYERNORM = Vocabulary((*_FORWARD, *_GRADIENTS), _FUNCTIONS)
GRADIENT_NAMES = frozenset(s.name for s in _GRADIENTS)


def usable(target: str) -> frozenset[str]:
    """The gradient names a formula for `target` may read: the staged backward's gradients
    computed before it (dgamma and dbeta: only dout and dgx)."""
    if target in BACKWARD_ORDER:
        return frozenset(BACKWARD_ORDER[: BACKWARD_ORDER.index(target)])
    return frozenset(("dout", "dgx"))


def values(st: Setting) -> dict[str, np.ndarray | float]:
    """Every symbol of LAYERNORM bound to its value in `st` (see the module docstring)."""
    c = st.cache
    bound: dict[str, np.ndarray | float] = {
        "x": st.x,
        "sample_mean": c.sample_mean,
        "x_sm": c.x_sm,
        "sq_xsm": c.sq_xsm,
        "sample_var": c.sample_var,
        "sigma": np.sqrt(c.sample_var),
        "sve": c.sve,
        "sqrt_sve": c.sqrt_sve,
        "inv_sqrt_sve": c.inv_sqrt_sve,
        "normalized_x": st.xhat,
        "gamma": st.gamma,
        "beta": st.beta,
        "gx": st.gamma * st.xhat,
        "out": st.gamma * st.xhat + st.beta,
        "eps": float(c.eps),
        "D": float(st.n),
        # The Setting's staged backward ran with γ = 1 and upstream dy γ (see its module), so
        # dout and dgx are the student's dy, and every gradient from dnormalized_x on is exact.
        "dout": st.dy,
        "dgx": st.dy,
    }
    for name in BACKWARD_ORDER[2:]:
        bound[name] = st.grads.of(name[1:])
    return bound


def functions(st: Setting) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """The functions of LAYERNORM over the setting's axes."""

    def full(a: np.ndarray) -> np.ndarray:
        # Σ_j over a value shared by the D features (μ, a constant) counts it D times.
        return np.broadcast_to(a, np.broadcast_shapes(np.shape(a), st.x.shape))

    vectors = float(st.x.shape[-2])
    return {
        "sum": lambda a: st.group_sum(full(a)),
        "mean": lambda a: st.group_sum(full(a)) / st.n,
        "sum_batch": lambda a: st.batch_sum(full(a)),
        "mean_batch": lambda a: st.batch_sum(full(a)) / vectors,
        "sqrt": np.sqrt,
        "abs": np.abs,
    }
