"""Evaluating a tree over NumPy arrays, node by node, within a budget.

Values are bound by the caller: each symbol to an array (or a float) and each function to a
NumPy function of one array. Every node's result is checked as it is made, so a division by
zero, an overflow or a root of a negative number is reported at the part of the formula that
made it, and no evaluation runs past MAX_ELEMENTS element operations or MAX_SECONDS.

evaluate_bounded also carries, beside each node's value, a bound on how far float64's
round-off can have moved it from the same formula in exact arithmetic on the same bound
values (forward error analysis, one rule per operation, U the unit round-off):

- a ± b: err_a + err_b + U |a ± b|;
- a · b: |a| err_b + |b| err_a + err_a err_b + U |a b|;
- a / b: (err_a + |a/b| err_b) / (|b| − err_b) + U |a/b| (no bound where |b| ≤ err_b: the
  exact b may be 0);
- a ^ p: |p| |ξ|^(p−1) err_a at the end of |a| ± err_a where that is largest, plus
  |a^p ln|a|| err_p for a computed exponent, plus 2 U |a^p| (a power is within an ulp);
- sqrt(a): min(err_a / sqrt(a), sqrt(err_a)) + U sqrt(a); abs moves no error;
- a function that adds n entries with weights ≥ 0 (sum, mean): f(err) + n U f(|a|), since
  n − 1 additions in any order and a mean's division round at most that much.

So a formula that subtracts nearly equal numbers (mean(x²) − mean(x)² with a large common
offset) gets a bound as large as the digits it loses, and a judge can say so instead of
calling a right formula wrong.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ln_core.formula.errors import FormulaError, FormulaFailure
from ln_core.formula.tree import Binary, Call, Name, Negate, Node, Number, names, size

MAX_EXPONENT = 16.0
MAX_ELEMENTS = 40_000_000
MAX_SECONDS = 0.5
# The unit round-off of float64: one correctly rounded operation is off by at most U |result|.
U = float(np.finfo(np.float64).eps) / 2.0
EXACT_INTEGERS = 2.0**53  # every integer up to this size is a float64 exactly

Value = np.ndarray | float


@dataclass(frozen=True)
class Carries:
    """How a function of a vocabulary carries round-off, for evaluate_bounded.

    kind: "sum" for a function that adds entries of its argument with weights ≥ 0 (sum, mean,
    over either axis): an error e in the argument becomes at most f(e), and `terms` (the n
    entries it adds) bounds its own roundings on the size f(|a|); "sqrt"; "abs", which is exact
    and moves no error.
    """

    kind: str
    terms: int = 0


@dataclass(frozen=True)
class Bounded:
    """A value and a bound on its round-off: |value − exact| ≤ error entry by entry, where
    exact is the same formula in exact arithmetic on the same bound values. error broadcasts
    to value's shape; it is inf where nothing can be promised."""

    value: np.ndarray
    error: np.ndarray


def _fail(kind: str, problem: str, node: Node) -> FormulaFailure:
    return FormulaFailure(FormulaError(kind, problem, node.position, node.end))


def _number_error(value: np.ndarray) -> np.ndarray:
    # A typed decimal such as 0.1 is rounded once when read; a small integer is exact.
    exact = (value == np.round(value)) & (np.abs(value) <= EXACT_INTEGERS)
    return np.where(exact, 0.0, U * np.abs(value))


def _sum_error(left: Bounded, right: Bounded, result: np.ndarray) -> np.ndarray:
    return left.error + right.error + U * np.abs(result)


def _product_error(left: Bounded, right: Bounded, result: np.ndarray) -> np.ndarray:
    a, b = np.abs(left.value), np.abs(right.value)
    return a * right.error + b * left.error + left.error * right.error + U * np.abs(result)


def _quotient_error(left: Bounded, right: Bounded, result: np.ndarray) -> np.ndarray:
    # |a*/b* − a/b| ≤ (err_a + |a/b| err_b) / |b*|, and |b*| ≥ |b| − err_b.
    floor = np.abs(right.value) - right.error
    spread = left.error + np.abs(result) * right.error
    moved = np.divide(spread, floor, out=np.full(np.shape(floor + spread), np.inf), where=floor > 0)
    return moved + U * np.abs(result)


def _power_error(base: Bounded, exponent: Bounded, result: np.ndarray) -> np.ndarray:
    p = exponent.value
    low, high = np.abs(base.value) - base.error, np.abs(base.value) + base.error
    # |ξ|^(p−1) grows with |ξ| for p ≥ 1 and shrinks for p < 1: its largest value on
    # |a| ± err_a is at one end, and unbounded where that interval reaches 0 (or, for a
    # fractional power, where the exact base may be negative).
    slope = np.where(p >= 1, high ** (p - 1), np.where(low > 0, np.abs(low) ** (p - 1), np.inf))
    slope = np.where((low < 0) & (p != np.round(p)), np.inf, slope)
    from_base = np.where((base.error > 0) & (p != 0), np.abs(p) * slope * base.error, 0.0)
    log_base = np.log(np.abs(base.value), out=np.zeros(np.shape(base.value)), where=base.value != 0)
    from_exponent = np.where(exponent.error > 0, np.abs(result * log_base) * exponent.error, 0.0)
    return from_base + from_exponent + 2.0 * U * np.abs(result)


class _Evaluator:
    def __init__(
        self,
        values: Mapping[str, Value],
        functions: Mapping[str, Callable[[np.ndarray], np.ndarray]],
        max_seconds: float | None,
        errors: Mapping[str, Value] | None = None,
        carries: Mapping[str, Carries] | None = None,
    ) -> None:
        self.values = values
        self.functions = functions
        self.max_seconds = max_seconds
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        # Bounds are carried only when asked for (errors given): evaluate skips their cost.
        self.errors = errors
        self.carries = carries or {}

    def bound(self, rule: Callable[..., np.ndarray], *args) -> np.ndarray:
        """rule(*args) when bounds are carried, else 0. Its arithmetic raises no float64
        flags (an underflow in a bound is not the formula's), and a 0 · inf in it counts as
        no promise (inf)."""
        if self.errors is None:
            return np.zeros(())
        with np.errstate(all="ignore"):
            error = np.asarray(rule(*args), dtype=np.float64)
        return np.where(np.isnan(error), np.inf, error)

    def run(self, node: Node) -> Bounded:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _fail(
                "time", f"Evaluating the formula took longer than {self.max_seconds} s.", node
            )
        if isinstance(node, Number):
            value = np.asarray(node.value)
            return Bounded(value, self.bound(_number_error, value))
        if isinstance(node, Name):
            value = np.asarray(self.values[node.name], dtype=np.float64)
            return Bounded(value, self.bound(lambda: self.errors.get(node.name, np.inf)))
        if isinstance(node, Negate):
            operand = self.run(node.operand)
            return Bounded(-operand.value, operand.error)
        if isinstance(node, Call):
            return self.call(node)
        return self.binary(node)

    def call(self, node: Call) -> Bounded:
        argument = self.run(node.argument)
        if node.function in ("sqrt",) and np.any(argument.value < 0):
            raise _fail(
                "undefined", "This square root is of a negative number on these inputs.", node
            )
        function = self.functions[node.function]
        result = self.checked(function(argument.value), node)
        return Bounded(result, self.bound(self.function_error, node.function, argument, result))

    def function_error(self, name: str, argument: Bounded, result: np.ndarray) -> np.ndarray:
        carries = self.carries.get(name)
        if carries is None:
            return np.full(np.shape(result), np.inf)  # a function whose rounding is unknown
        if carries.kind == "abs":
            return argument.error
        if carries.kind == "sqrt":
            moved = np.divide(
                argument.error,
                result,
                out=np.full(np.shape(result + argument.error), np.inf),
                where=result > 0,
            )
            return np.minimum(moved, np.sqrt(argument.error)) + U * result
        function = self.functions[name]
        error = np.broadcast_to(argument.error, np.shape(argument.value))
        return function(error) + carries.terms * U * function(np.abs(argument.value))

    def binary(self, node: Binary) -> Bounded:
        left, right = self.run(node.left), self.run(node.right)
        try:
            np.broadcast_shapes(np.shape(left.value), np.shape(right.value))
        except ValueError:
            raise _fail(
                "shape",
                f"The two sides of this {node.op} do not fit together: one has shape "
                f"{np.shape(left.value)}, the other {np.shape(right.value)}.",
                node,
            ) from None
        a, b = left.value, right.value
        if node.op in ("+", "-"):
            result, rule = (a + b if node.op == "+" else a - b), _sum_error
        elif node.op == "*":
            result, rule = a * b, _product_error
        elif node.op == "/":
            if np.any(b == 0):
                raise _fail(
                    "division-by-zero",
                    "This division divides by 0 on these inputs (the part after / is 0 somewhere).",
                    node,
                )
            result, rule = a / b, _quotient_error
        else:
            result, rule = self.power(node, a, b), _power_error
        result = self.checked(result, node)
        return Bounded(result, self.bound(rule, left, right, result))

    def power(self, node: Binary, base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
        if np.any(np.abs(exponent) > MAX_EXPONENT):
            raise _fail(
                "exponent",
                f"This exponent is larger than {MAX_EXPONENT:g} in size; a derivation needs "
                "small powers.",
                node.right,
            )
        if np.any((base == 0) & (exponent < 0)):
            raise _fail(
                "division-by-zero",
                "This negative power of 0 divides by 0 on these inputs.",
                node,
            )
        if np.any((base < 0) & (exponent != np.round(exponent))):
            raise _fail(
                "undefined",
                "This fractional power is of a negative number on these inputs.",
                node,
            )
        return base**exponent

    def checked(self, result: np.ndarray, node: Node) -> np.ndarray:
        if not np.all(np.isfinite(result)):
            raise _fail(
                "overflow", "This part of the formula overflows float64 on these inputs.", node
            )
        return result


def _run(
    tree: Node, values: Mapping[str, Value], evaluator: _Evaluator, max_elements: int | None
) -> Bounded | FormulaError:
    """The tree run by `evaluator` within the budget, or the problem met on the way."""
    biggest = max((np.size(values[name]) for name in names(tree)), default=1)
    if max_elements is not None and size(tree) * biggest > max_elements:
        return FormulaError(
            "too-big",
            f"This formula on these inputs would take over {max_elements:.0e} operations; "
            "use fewer entries or a shorter formula.",
            tree.position,
            tree.end,
        )
    try:
        # Underflow is left to the caller, who may want to know of it (the audit's verdict).
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            found = evaluator.run(tree)
            return Bounded(np.asarray(found.value, dtype=np.float64), found.error)
    except FormulaFailure as failure:
        return failure.error


def evaluate(
    tree: Node,
    values: Mapping[str, Value],
    functions: Mapping[str, Callable[[np.ndarray], np.ndarray]],
    max_elements: int | None = MAX_ELEMENTS,
    max_seconds: float | None = MAX_SECONDS,
) -> np.ndarray | FormulaError:
    """The tree's value on `values`, or the problem met while computing it.

    values: every symbol the tree names, bound to a float or an array; the arrays must
    broadcast together (the caller's layout; a symbol of one value per vector keeps a size-1
    feature axis). functions: every function it names, on one array.
    max_elements, max_seconds: the budget for typed text; None lifts it for the lab's own
    formulas (the audit's), whose size is the caller's to bound.
    """
    found = _run(tree, values, _Evaluator(values, functions, max_seconds), max_elements)
    return found if isinstance(found, FormulaError) else found.value


def evaluate_bounded(
    tree: Node,
    values: Mapping[str, Value],
    functions: Mapping[str, Callable[[np.ndarray], np.ndarray]],
    errors: Mapping[str, Value],
    carries: Mapping[str, Carries],
    max_elements: int | None = MAX_ELEMENTS,
    max_seconds: float | None = MAX_SECONDS,
) -> Bounded | FormulaError:
    """The tree's value on `values` with a bound on its round-off (the module docstring), or
    the problem met while computing it; the value is evaluate's.

    errors: for each symbol, how far its bound value may be from the exact one (0 for an
    input taken as given; a float or an array that broadcasts with the value; a symbol left
    out gets no promise, inf). carries: how each function passes round-off on (a function
    left out gets inf). The rest as for evaluate.
    """
    evaluator = _Evaluator(values, functions, max_seconds, errors, carries)
    return _run(tree, values, evaluator, max_elements)
