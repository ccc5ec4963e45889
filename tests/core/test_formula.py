"""The formula grammar: what it reads, how it refuses, and that no typed text can make it
raise or run Python. How long the longest typed formula takes is measured in bench/bench_pages.py
(Check your derivation's modes), not timed here."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ln_core.derivation import LAYERNORM, check_formula
from ln_core.formula import Carries, FormulaError, evaluate, evaluate_bounded, parse, to_latex
from ln_core.formula.evaluate import MAX_EXPONENT, U
from ln_core.formula.parser import MAX_DEPTH, MAX_NODES
from ln_core.formula.tokens import MAX_CHARS

X = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
ONES = np.ones(3)


def _check(text: str):
    return check_formula(text, "dx", X, ONES, np.zeros(3), X * 0.5 - 1.0, 1e-5)


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("γx̂ + 2x", r"\gamma \cdot \hat{x} + 2 \cdot x"),
        ("x^-2", "{x}^{-2}"),
        ("-x**2", "-{x}^{2}"),
        ("σ²", r"{\sigma}^{2}"),
        (
            "a - (b - c)".replace("a", "x").replace("b", "D").replace("c", "ε"),
            r"x - \left(D - \varepsilon\right)",
        ),
        ("Σ dy x̂ - 1", r"\sum_{j}\left(\mathrm{d}y \cdot \hat{x}\right) - 1"),
        # A bracket right after Σ is what it sums, as for sum(…).
        ("Σ(dy) x̂", r"\sum_{j}\left(\mathrm{d}y\right) \cdot \hat{x}"),
        ("-½ x", r"-0.5 \cdot x"),
        ("x_i / N", r"\frac{x}{D}"),
        ("1e-5", r"1 \times 10^{-5}"),
    ],
)
def test_reads_and_prints_what_it_understood(text, latex):
    tree = parse(text, LAYERNORM)
    assert not isinstance(tree, FormulaError), tree
    assert to_latex(tree, LAYERNORM) == latex


@pytest.mark.parametrize(
    ("text", "kind", "position"),
    [
        ("x + foo", "unknown-name", 4),
        ("(x + 1", "bracket", 0),
        ("x + 1)", "bracket", 5),
        ("(x + 1]", "bracket", 6),
        ("x +", "syntax", 3),
        ("", "syntax", 0),
        ("dx = x", "syntax", 3),
        ("x.__class__", "notation", 0),
        ("lambda: x", "character", 6),
        ("lambda x", "unknown-name", 0),
        ("x @ x", "character", 2),
        ("sqrt x", "syntax", 0),
        ("1e999", "number", 0),
        ("x + 1e-400", "number", 4),  # float64 would read it as 0
        ("1e-320 * x", "number", 0),  # and this with fewer digits
        ("х", "unknown-name", 0),  # a Cyrillic х looks like x
        # Each bracket is two levels of the grammar (the group and its signed value).
        ("(" * (MAX_DEPTH + 5) + "x" + ")" * (MAX_DEPTH + 5), "too-deep", MAX_DEPTH // 2),
        ("x" + "+x" * MAX_NODES, "too-big", 0),
        ("x" * (MAX_CHARS + 1), "too-long", MAX_CHARS),
    ],
)
def test_refuses_with_a_kind_and_a_place(text, kind, position):
    error = parse(text, LAYERNORM)
    assert isinstance(error, FormulaError)
    assert (error.kind, error.position) == (kind, position)


def test_an_unknown_name_lists_the_known_ones():
    error = parse("x + foo", LAYERNORM)
    assert error.found == "foo" and "xhat" in error.known and "sum" in error.known


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("xaht", "Did you mean xhat"),
        ("gama", "Did you mean gamma"),
        ("х", "U+0445 CYRILLIC SMALL LETTER HA"),  # looks like x
        ("ｘ", "U+FF58 FULLWIDTH LATIN SMALL LETTER X"),
        ("x\u200b+1", "U+200B ZERO WIDTH SPACE"),
        ("\u202ex", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ],
)
def test_look_alikes_and_near_misses_are_named(text, said):
    assert said in parse(text, LAYERNORM).problem


def test_operands_that_do_not_broadcast_are_a_shape_error():
    tree = parse("x + gamma", LAYERNORM)
    error = evaluate(tree, {"x": np.ones((2, 3)), "gamma": np.ones(4)}, {})
    assert (error.kind, error.position, error.end) == ("shape", 0, 9)
    assert "(2, 3)" in error.problem and "(4,)" in error.problem


@pytest.mark.parametrize(
    ("text", "kind", "found"),
    [
        ("x / x_sm", "division-by-zero", "x / x_sm"),  # x_sm is 0 at the middle entry
        ("x ^ 17", "exponent", "17"),
        ("x_sm ^ 0.5", "undefined", "x_sm ^ 0.5"),
        ("sqrt(x_sm)", "undefined", "sqrt(x_sm)"),
        ("(1e12 ^ 16) * (1e12 ^ 16) * x", "overflow", "(1e12 ^ 16) * (1e12 ^ 16)"),
    ],
)
def test_evaluation_problems_point_at_their_part(text, kind, found):
    x = np.array([[1.0, 2.0, 3.0]])
    result = check_formula(text, "dx", x, ONES, np.zeros(3), x, 1e-5)
    assert result.verdict is None and result.error.kind == kind
    assert result.error.found == found


def test_values_broadcast_and_sums_count_shared_values():
    tree = parse("Σ 1 + mean(x)", LAYERNORM)
    values = {"x": X}
    functions = {
        "sum": lambda a: np.sum(np.broadcast_to(a, X.shape), -1, keepdims=True),
        "mean": lambda a: np.mean(np.broadcast_to(a, X.shape), -1, keepdims=True),
    }
    np.testing.assert_allclose(evaluate(tree, values, functions), [[3 + 7 / 3], [3 + 2.5 / 3]])


def test_exponent_limit_is_the_documented_one():
    assert isinstance(_check(f"x^{MAX_EXPONENT:g}").verdict, str)
    assert _check(f"x^{MAX_EXPONENT + 1:g}").error.kind == "exponent"


ADVERSARIAL = [
    "__import__('os').system('ls')",
    "x.__class__.__mro__",
    "lambda: 0",
    "().__class__",
    "exec('1')",
    "eval",
    "{x for x in y}",
    "x if x else y",
    "9" * 30,
    "9**9**9**9",
    "x^x^x^x^x^x^x^x",
    "(((((((((((((((((((((((((((((((((((((((((((((((((x)))))))))))))))))))))))))))))))))))))))))))))))",
    "-" * 1000 + "x",
    "x" + "+x" * 999,
    "√" * 500 + "x",
    "Σ" * 500 + "x",
    "x²²²²²²²²",
    "ｘ + ｙ",  # fullwidth letters
    "x\u200b+1",  # a zero-width space
    "x\u0000",
    "\u202ex+1",
    "xˆ",
    "γ" * 30,
    "1/0",
    "0^-1",
    "(-1)^0.5",
    "abs(" * 60 + "x" + ")" * 60,
    "x" * 100_000,
]


def _refused_or_judged(text: str) -> None:
    result = _check(text)
    assert (result.error is None) != (result.verdict is None)
    if result.error is not None:
        assert result.error.problem and 0 <= result.error.position <= len(text)
    else:
        assert result.verdict in ("correct", "wrong", "cannot decide") and result.latex


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_text_is_refused_or_judged(text):
    _refused_or_judged(text)


ALPHABET = st.sampled_from(
    [
        *"xDNε() []{}+-−*/^·²³⁻¹√Σ.,=_ 0123456789e",
        *("xhat", "x̂", "dy", "dxhat", "γ", "mean(", "sum(", "sqrt(", "μ", "σ", "var", "rstd"),
        *("__class__", "lambda", "х", "ｘ", "\u0302", "\u200b", "**", "1e308", "99999"),
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_fuzz_made_of_formula_pieces(text):
    _refused_or_judged(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_any_text(text):
    _refused_or_judged(text)


def test_an_evaluation_stops_at_its_budgets():
    tree = parse("x + x", LAYERNORM)
    big = {"x": np.ones(1000)}
    assert evaluate(tree, big, {}, max_elements=100).kind == "too-big"
    assert evaluate(tree, big, {}, max_seconds=0.0).kind == "time"
    assert evaluate(tree, big, {}, max_elements=None, max_seconds=None).shape == (1000,)


def test_no_typed_or_stored_formula_is_run_as_python():
    # The grammar, the student's check and the audit (whose formulas it now reads) call no
    # eval, exec or compile, and no SymPy parser ever sees a formula.
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "ln_core"
    for folder in ("formula", "derivation", "audit"):
        for path in (root / folder).glob("*.py"):
            tree = ast.parse(path.read_text())
            called = {
                node.func.id
                for node in ast.walk(tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            }
            assert not called & {"eval", "exec", "compile", "__import__"}, path
            imported = {
                alias.name
                for node in ast.walk(tree)
                if isinstance(node, ast.Import)
                for alias in node.names
            } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
            assert not any(str(m).startswith("sympy") for m in imported), path


def test_a_misplaced_operator_is_named_as_typed():
    # ** reads as ^, but the student typed **: the message must name what they typed.
    error = parse("x * ** 2", LAYERNORM)
    assert isinstance(error, FormulaError)
    assert "not '**'" in error.problem, error.problem


# -- the round-off bound evaluate_bounded carries -------------------------------------------

MEAN_SQRT = {"mean": Carries("sum", 8), "sqrt": Carries("sqrt")}
VARIANCE_FORMS = {
    # text: the same variance in exact arithmetic, computed in 50 digits
    "mean(x^2) - mean(x)^2": lambda xs, m: mpmath.fsum(v * v for v in xs) / len(xs) - m * m,
    "mean((x - mean(x))^2)": lambda xs, m: mpmath.fsum((v - m) ** 2 for v in xs) / len(xs),
    "1/sqrt(mean(x*x) - mean(x)*mean(x) + 0.1)": lambda xs, m: (
        1 / mpmath.sqrt(mpmath.fsum(v * v for v in xs) / len(xs) - m * m + mpmath.mpf("0.1"))
    ),
}


def _functions(x: np.ndarray):
    """mean over x's one axis (counting a shared value n times) and sqrt."""
    return {"mean": lambda a: np.mean(np.broadcast_to(a, x.shape)), "sqrt": np.sqrt}


def _bounded(text: str, x: np.ndarray):
    """The formula on x (taken as given: error 0) with its round-off bound."""
    tree = parse(text, LAYERNORM)
    return evaluate_bounded(tree, {"x": x}, _functions(x), {"x": 0.0}, MEAN_SQRT)


def _exact(text: str, x: np.ndarray) -> float:
    with mpmath.workdps(50):
        xs = [mpmath.mpf(float(v)) for v in x]
        return float(VARIANCE_FORMS[text](xs, mpmath.fsum(xs) / len(xs)))


@pytest.mark.parametrize("text", sorted(VARIANCE_FORMS))
@pytest.mark.parametrize("offset", [0.0, 1e2, 1e4, 1e6])
def test_the_bound_holds_the_exact_value(text, offset):
    """The computed value sits within the bound of the formula's exact value on the same
    numbers (evaluated in 50 digits), and the bound does not change the value."""
    x = offset + np.random.default_rng(3).standard_normal(8)
    found = _bounded(text, x)
    assert float(found.value) == float(evaluate(parse(text, LAYERNORM), {"x": x}, _functions(x)))
    assert abs(float(found.value) - _exact(text, x)) <= float(found.error)


def test_the_bound_sees_the_digits_mean_x2_minus_mean_x_squared_loses():
    """mean(x²) − mean(x)² loses about 2 log10(offset / spread) digits; written with x − μ
    it loses at most the mean's rounding, log10(offset / spread). The bound says so: against
    the value it grows as offset² for the first, as offset for the second."""
    spread = np.random.default_rng(0).standard_normal(8)
    for offset in (1e4, 1e8):
        x = offset + spread
        cancelling = _bounded("mean(x^2) - mean(x)^2", x)
        centred = _bounded("mean((x - mean(x))^2)", x)
        assert float(cancelling.error) > 1e-16 * offset**2
        assert float(centred.error) < 1e-14 * offset * float(centred.value)
    # At 1e8 the subtraction keeps no digit: the bound is larger than the value itself.
    assert float(cancelling.error) > abs(float(cancelling.value))


def test_a_division_by_a_value_round_off_may_make_0_has_no_bound():
    x = 1e8 + np.random.default_rng(0).standard_normal(8)
    assert np.isinf(_bounded("1/(mean(x^2) - mean(x)^2)", x).error)
    # An exact integer is exact; a typed decimal is rounded once when read.
    ones = np.ones(8)
    assert np.max(_bounded("3 * x", ones).error) == 3 * U
    assert np.min(_bounded("0.1 * x", ones).error) > 0.1 * U


# -- the notations students write ------------------------------------------------------------

RIGHT_DX = "rstd (dxhat - mean(dxhat) - x̂ mean(dxhat x̂))"


@pytest.mark.parametrize(
    ("text", "same_as"),
    [
        ("var(x)", "mean((x - mean(x))^2)"),
        ("std(x)", "sqrt(mean((x - mean(x))^2))"),
        ("variance(dy)", "mean((dy - mean(dy))^2)"),
        ("μ(x)", "mean(x)"),
        ("mu(dy)", "mean(dy)"),
        ("μ (x - 1)", "μ * (x - 1)"),  # with a space, a product
        ("var", "sample_var"),  # alone, the symbol
        ("E[dxhat]", "mean(dxhat)"),
        ("x̄", "mean(x)"),
        ("np.sqrt(sve)", "sqrt(sve)"),
        ("torch.sqrt(sve)", "sqrt(sve)"),
        ("dL/dy", "dy"),
        ("∂L/∂y", "dy"),
        ("dL/dx̂ γ", "dxhat γ"),
        ("∂L / ∂xhat", "dxhat"),
        ("\\hat{x}", "x̂"),
        ("\\hat x", "x̂"),
        ("\\bar{x}", "mean(x)"),
        ("\\frac{dy}{\\sqrt{\\sigma^{2}+\\epsilon}}", "(dy)/(√(σ^2+ε))"),
        ("\\gamma \\cdot dy \\times \\mu", "γ * dy * μ"),
        ("\\left(x + 1\\right)^{2}", "(x + 1)^2"),
        ("\\sum_{j=1}^{N} dy_j \\hat{x}_j", "Σ dy x̂"),
        ("\\sum_j dy", "Σ dy"),
        ("Σ_j dxhat_j x̂_j", "Σ dxhat x̂"),
        ("Σ_{j} dy", "Σ dy"),
        ("x_{i} / N", "x / N"),
        ("(σ²+ε)^(-½)", "(σ²+ε)^(-0.5)"),
        ("Σ(dy) x̂", "sum(dy) * x̂"),
    ],
)
def test_a_notation_students_write_is_read_as_meant(text, same_as):
    read, meant = parse(text, LAYERNORM), parse(same_as, LAYERNORM)
    assert not isinstance(read, FormulaError), read
    assert to_latex(read, LAYERNORM) == to_latex(meant, LAYERNORM)


@pytest.mark.parametrize(
    ("text", "to_type"),
    [
        ("np.mean(dxhat)", "write mean(…)"),
        ("torch.mean(dxhat, dim=-1)", "write mean(…)"),
        ("np.sum(dy)", "write sum(…) or Σ"),
        ("x.mean()", "write mean(…)"),
        ("dy.var()", "write var(…)"),
        ("torch.rsqrt(sve)", "write 1/sqrt(…)"),
        ("x.__class__", "such as mean(…), sum(…), sqrt(…)"),
        ("mean(x, axis=-1)", "no axis to give"),
        ("\\partial L", "Write dy for ∂L/∂y"),
        ("∂y", "Write dy for ∂L/∂y"),
        ("\\alpha x", "Type this one as a plain name"),
        ("\\hat{}", "or type the name: x̂ or xhat"),
        ("\\frac12", "type (a)/(b)"),
        ("|x|", "Write abs(…)"),
        ("dL/d 1", "dL/dy is dy"),
        ("qq", "Type one of the names listed beside the box"),
        ("x @ x", "Type numbers, the names listed beside the box"),
    ],
)
def test_a_notation_the_lab_does_not_read_is_refused_with_what_to_type(text, to_type):
    error = parse(text, LAYERNORM)
    assert isinstance(error, FormulaError)
    assert to_type in error.problem
    assert 0 <= error.position < max(len(text), 1)


def test_a_derivation_in_latex_or_numpy_notation_is_judged_like_the_plain_one():
    for text in (
        "\\frac{1}{\\sqrt{\\sigma^{2}+\\epsilon}} (dxhat - \\frac{1}{N}\\sum_{j} dxhat_j"
        " - \\hat{x} \\frac{1}{N} \\sum_{j=1}^{N} dxhat_j \\hat{x}_j)",
        "np.sqrt(sve)^(-1) (dL/dy γ - E[∂L/∂y γ] - x̂ E[dL/dx̂ x̂])",
        "(dxhat - mean(dxhat) - (x - x̄)/sqrt(var(x)+ε) mean(dxhat (x - μ(x))/sqrt(var(x)+ε)))"
        " / sqrt(var(x) + ε)",
    ):
        result = _check(text)
        assert result.error is None, (text, result.error)
        assert result.verdict == _check(RIGHT_DX).verdict
