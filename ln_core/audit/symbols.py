"""The names a formula may use, bound to their values in a Setting: LAYERNORM (the lab's node
names and the documents' usual symbols, what a student types) and AUDIT (LAYERNORM plus the
Jacobian helpers the documents' partial derivatives need).

Shapes follow the Setting: (C, V, D) per entry, (C, V, 1) for one value per vector (μ, σ², the
node gradients reduced over the features), (C, 1, D) per feature (γ, β), floats for D and ε.
`sum` and `mean` run over the normalized axis (the features of each vector in LayerNorm),
`sum_batch` and `mean_batch` over the vectors. Jacobian-shaped values are (C, V, R, D), entry
[c, v, r, l] for k = rows[r] (Setting.rows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.setting import Setting
from ln_core.formula import Carries, Function, Symbol, Vocabulary
from ln_core.formula.evaluate import U
from ln_core.nodes import NODES
from ln_core.staged import PARAMETERS

# The staged backward's gradients in the order it computes them (the lesson's table undone, but
# the parameters' dgamma and dbeta): a formula for one of them may read only those before it
# (and never itself).
BACKWARD_ORDER = (
    "dout",
    *(name for node in reversed(NODES) for name, _ in node.undo if name[1:] not in PARAMETERS),
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
    Symbol(
        "D",
        ("N",),
        "D",
        "the number of features of one vector; N is D too (the sidebar counts the vectors as rows)",
    ),
)

_GRADIENTS = (
    Symbol("dout", ("dy",), r"\mathrm{d}y", "the upstream gradient ∂L/∂y"),
    Symbol("dgx", (), r"\mathrm{d}(\gamma\hat{x})", "the gradient at gx (equals dy)"),
    Symbol("dnormalized_x", ("dxhat", "dx̂", "dx_hat"), r"\mathrm{d}\hat{x}", "∂L/∂x̂ = dy γ"),
    Symbol(
        "dx_sm_via_normalized_x",
        (),
        r"\mathrm{d}x_{\mathrm{sm}}^{(\hat{x})}",
        "the part of dx_sm from normalized_x",
    ),
    Symbol(
        "dinv_sqrt_sve", (), r"\mathrm{d}\,\mathrm{inv\_sqrt\_sve}", "the gradient at inv_sqrt_sve"
    ),
    Symbol("dsqrt_sve", (), r"\mathrm{d}\,\mathrm{sqrt\_sve}", "the gradient at sqrt_sve"),
    Symbol("dsve", (), r"\mathrm{d}\,\mathrm{sve}", "the gradient at sve"),
    Symbol("dsample_var", ("dvar",), r"\mathrm{d}\sigma^{2}", "∂L/∂σ²"),
    Symbol("dsq_xsm", (), r"\mathrm{d}\,\mathrm{sq\_xsm}", "the gradient at sq_xsm"),
    Symbol(
        "dx_sm_via_sq_xsm",
        (),
        r"\mathrm{d}x_{\mathrm{sm}}^{(\mathrm{sq})}",
        "the part of dx_sm from sq_xsm",
    ),
    Symbol("dx_sm", (), r"\mathrm{d}x_{\mathrm{sm}}", "the gradient at x_sm (both parts)"),
    Symbol("dx_via_x_sm", (), r"\mathrm{d}x^{(x_{\mathrm{sm}})}", "the part of dx through x_sm"),
    Symbol("dsample_mean", ("dmu", "dμ"), r"\mathrm{d}\mu", "∂L/∂μ"),
    Symbol("dx_via_sample_mean", (), r"\mathrm{d}x^{(\mu)}", "the part of dx through μ"),
    Symbol("dx", (), r"\mathrm{d}x", "∂L/∂x"),
)

_FUNCTIONS = (
    Function("sum", ("Sum",), (r"\sum_{j}\left(", r"\right)"), "sum over the features (Σ)"),
    Function(
        "mean", ("E",), (r"\operatorname{mean}_{j}\left(", r"\right)"), "mean over the features"
    ),
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

AUDIT = LAYERNORM.plus(
    (
        Symbol("diagonal", (), r"\delta_{kl}", "1 where k = l (Jacobian-shaped)"),
        Symbol("off_diagonal", (), r"(1-\delta_{kl})", "1 where k ≠ l (Jacobian-shaped)"),
        Symbol("ones", (), r"\mathbf{1}", "an array of ones, x's shape"),
        Symbol("dvar_dx", (), r"\frac{\partial\sigma^2}{\partial x_k}", "∂σ²/∂x_k, numerically"),
        Symbol("dz_block", (), r"\frac{\partial C}{\partial z}", "dz of the residual block"),
    ),
    (
        Function("total", (), (r"\sum_{n,j}\left(", r"\right)"), "sum over vectors and features"),
        Function("rows", (), (r"\left(", r"\right)_k"), "a per-entry value at k = rows"),
        Function("at_rows", (), (r"\left(", r"\right)_k"), "a value at k, Jacobian-shaped"),
        Function("at_columns", (), (r"\left(", r"\right)_l"), "a value at l, Jacobian-shaped"),
        Function(
            "jacobian_times",
            (),
            (r"\left(", r"\right)\frac{\partial\hat{x}}{\partial x}"),
            "row times ∂x̂/∂x",
        ),
        Function(
            "sublayer_times",
            (),
            (r"\left(", r"\right)\frac{\partial y}{\partial x}"),
            "row times ∂y/∂x of F",
        ),
    ),
)


class Bound(Mapping[str, np.ndarray | float]):
    """A setting's values by name, each computed on first use: a numerical derivative or the
    residual block costs something, and most formulas read a handful of names."""

    def __init__(self, getters: Mapping[str, Callable[[], np.ndarray | float]]) -> None:
        self._getters = getters
        self._made: dict[str, np.ndarray | float] = {}

    def __getitem__(self, name: str) -> np.ndarray | float:
        if name not in self._made:
            self._made[name] = self._getters[name]()
        return self._made[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._getters)

    def __len__(self) -> int:
        return len(self._getters)


def _layernorm_getters(st: Setting) -> dict[str, Callable[[], np.ndarray | float]]:
    c = st.cache
    getters: dict[str, Callable[[], np.ndarray | float]] = {
        "x": lambda: st.x,
        "sample_mean": lambda: c.sample_mean,
        "x_sm": lambda: c.x_sm,
        "sq_xsm": lambda: c.sq_xsm,
        "sample_var": lambda: c.sample_var,
        "sigma": lambda: np.sqrt(c.sample_var),
        "sve": lambda: c.sve,
        "sqrt_sve": lambda: c.sqrt_sve,
        "inv_sqrt_sve": lambda: c.inv_sqrt_sve,
        "normalized_x": lambda: st.xhat,
        "gamma": lambda: st.gamma,
        "beta": lambda: st.beta,
        "gx": lambda: st.gamma * st.xhat,
        "out": lambda: st.gamma * st.xhat + st.beta,
        "eps": lambda: float(c.eps),
        "D": lambda: float(st.n),
        # The Setting's staged backward ran with γ = 1 and upstream dy γ (see its module), so
        # dout and dgx are the student's dy, and every gradient from dnormalized_x on is exact.
        "dout": lambda: st.dy,
        "dgx": lambda: st.dy,
    }
    for name in BACKWARD_ORDER[2:]:
        getters[name] = lambda node=name[1:]: st.grads.of(node)
    return getters


def values(st: Setting) -> Bound:
    """Every symbol of LAYERNORM bound to its value in `st` (see the module docstring)."""
    return Bound(_layernorm_getters(st))


# The student's own numbers, taken as given: every other value was computed by the forward
# pass or the staged backward, in float64.
GIVEN = frozenset(("x", "beta", "eps", "D", "dout", "dgx"))


def value_errors(st: Setting) -> Bound:
    """For every symbol of LAYERNORM, how far its value in `st` may be from the exact one, for
    ln_core.formula.evaluate_bounded: 0 for the student's own numbers; for a computed value,
    n + 2 roundings of its size (a sum of n terms in any order, a division and one more
    step). What a large common offset does to x − μ and σ² is the judge's own allowance
    (ln_core.audit.verdict); this is what a formula written from these values adds to it
    where it amplifies their rounding."""
    computed = (st.n + 2) * U
    known = values(st)
    return Bound(
        {
            name: (lambda: 0.0)
            if name in GIVEN
            else (lambda name=name: computed * np.abs(np.asarray(known[name], np.float64)))
            for name in known
        }
    )


def carries(st: Setting) -> dict[str, Carries]:
    """How each function of LAYERNORM passes round-off on, for evaluate_bounded: sums and
    means add the n entries of a vector (or the vectors of a batch), with weights ≥ 0."""
    vectors = int(st.x.shape[-2])
    return {
        "sum": Carries("sum", st.n),
        "mean": Carries("sum", st.n),
        "sum_batch": Carries("sum", vectors),
        "mean_batch": Carries("sum", vectors),
        "sqrt": Carries("sqrt"),
        "abs": Carries("abs"),
    }


def _sublayer_times(st: Setting, row: np.ndarray) -> np.ndarray:
    """row · ∂y/∂x for the residual block's sublayer y = tanh(x W + c):
    ∂y_j/∂x_i = (1 - y_j²) W_ij. (C, V, D)."""
    block, _ = st.residual
    # A BLAS product may raise float flags on finite numbers (see validation.checked_product):
    # its flags must not count as the formula's underflow.
    with np.errstate(all="ignore"):
        return (row * (1.0 - block.f**2)) @ block.sublayer.W.T


def audit_values(st: Setting) -> Bound:
    """Every symbol of AUDIT bound to its value in `st`."""
    return Bound(
        {
            **_layernorm_getters(st),
            "diagonal": st.diagonal,
            "off_diagonal": st.off_diagonal,
            "ones": lambda: np.ones_like(st.x),
            "dvar_dx": lambda: q.DVAR_DX.compute(st),
            "dz_block": lambda: st.residual[1].ln.dx,
        }
    )


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


def audit_functions(st: Setting) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """The functions of AUDIT over the setting's axes."""
    return {
        **functions(st),
        "total": st.total,
        "rows": lambda a: a[..., st.rows],
        "at_rows": st.at_rows,
        "at_columns": st.at_columns,
        "jacobian_times": lambda a: q.applied_jacobian(st, a),
        "sublayer_times": lambda a: _sublayer_times(st, a),
    }
