"""Evaluating a tree over NumPy arrays, node by node, within a budget.

Values are bound by the caller: each symbol to an array (or a float) and each function to a
NumPy function of one array. Every node's result is checked as it is made, so a division by
zero, an overflow or a root of a negative number is reported at the part of the formula that
made it, and no evaluation runs past MAX_ELEMENTS element operations or MAX_SECONDS.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import numpy as np

from ln_core.formula.errors import FormulaError, FormulaFailure
from ln_core.formula.tree import Binary, Call, Name, Negate, Node, Number, names, size

MAX_EXPONENT = 16.0
MAX_ELEMENTS = 40_000_000
MAX_SECONDS = 0.5

Value = np.ndarray | float


def _fail(kind: str, problem: str, node: Node) -> FormulaFailure:
    return FormulaFailure(FormulaError(kind, problem, node.position, node.end))


class _Evaluator:
    def __init__(
        self,
        values: Mapping[str, Value],
        functions: Mapping[str, Callable[[np.ndarray], np.ndarray]],
        max_seconds: float | None,
    ) -> None:
        self.values = values
        self.functions = functions
        self.max_seconds = max_seconds
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds

    def run(self, node: Node) -> np.ndarray:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _fail(
                "time", f"Evaluating the formula took longer than {self.max_seconds} s.", node
            )
        if isinstance(node, Number):
            return np.asarray(node.value)
        if isinstance(node, Name):
            return np.asarray(self.values[node.name], dtype=np.float64)
        if isinstance(node, Negate):
            return -self.run(node.operand)
        if isinstance(node, Call):
            argument = self.run(node.argument)
            if node.function in ("sqrt",) and np.any(argument < 0):
                raise _fail(
                    "undefined", "This square root is of a negative number on these inputs.", node
                )
            return self.checked(self.functions[node.function](argument), node)
        return self.binary(node)

    def binary(self, node: Binary) -> np.ndarray:
        left, right = self.run(node.left), self.run(node.right)
        try:
            np.broadcast_shapes(np.shape(left), np.shape(right))
        except ValueError:
            raise _fail(
                "shape",
                f"The two sides of this {node.op} do not fit together: one has shape "
                f"{np.shape(left)}, the other {np.shape(right)}.",
                node,
            ) from None
        if node.op == "+":
            result = left + right
        elif node.op == "-":
            result = left - right
        elif node.op == "*":
            result = left * right
        elif node.op == "/":
            if np.any(right == 0):
                raise _fail(
                    "division-by-zero",
                    "This division divides by 0 on these inputs (the part after / is 0 somewhere).",
                    node,
                )
            result = left / right
        else:
            result = self.power(node, left, right)
        return self.checked(result, node)

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
            evaluator = _Evaluator(values, functions, max_seconds)
            return np.asarray(evaluator.run(tree), dtype=np.float64)
    except FormulaFailure as failure:
        return failure.error
