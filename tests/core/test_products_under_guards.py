"""No matrix product in ln_core is judged by the floating-point flags it leaves.

numeric_guard turns NumPy's overflow and invalid flags into a refusal. OpenBLAS can raise the
invalid flag on finite inputs whose product it computes correctly (OpenBLAS #1924, NumPy
#24067), so a product taken inside the guard would refuse a good input at random: the CI of
2026-11-25 failed once that way in ln_core.fast. A product there must go through
validation.checked_product (judged by its value) or sit in a block with the flags ignored whose
results are checked. This reads every module's source, so a new product inside a guard fails
here the day it is written, not once in thousands of runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from ln_core.validation import checked_product

LN_CORE = Path(__file__).resolve().parents[2] / "ln_core"


def _is_call_to(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and (
        getattr(node.func, "attr", None) == name or getattr(node.func, "id", None) == name
    )


def _guarded_products(tree: ast.AST) -> list[int]:
    """Lines of `a @ b`, np.dot, np.matmul and np.einsum inside a `with numeric_guard(...)`
    block and not inside a nested `with np.errstate(...)` block."""
    found: list[int] = []

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.With):
            items = [item.context_expr for item in node.items]
            if any(_is_call_to(item, "numeric_guard") for item in items):
                guarded = True
            if any(_is_call_to(item, "errstate") for item in items):
                guarded = False
        if guarded and (
            (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult))
            or any(_is_call_to(node, name) for name in ("dot", "matmul", "einsum"))
        ):
            found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(tree, False)
    return found


@pytest.mark.parametrize("module", sorted(LN_CORE.rglob("*.py")), ids=lambda p: p.name)
def test_no_product_inside_a_guard_is_judged_by_its_flags(module: Path):
    lines = _guarded_products(ast.parse(module.read_text()))
    assert not lines, f"{module.name}: a matrix product inside numeric_guard at lines {lines}"


def test_the_rule_finds_a_product_inside_a_guard():
    source = """
with numeric_guard("x"):
    a = b @ c
    d = np.dot(b, c)
    with np.errstate(all="ignore"):
        e = np.dot(b, c)
f = b @ c
"""
    assert _guarded_products(ast.parse(source)) == [3, 4]


def test_checked_product_refuses_by_value_and_ignores_the_flags(blas_raising_invalid):
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(checked_product(a, np.ones(2), "A product"), [3.0, 7.0])
    with pytest.raises(ValueError, match=r"A product is not representable .*overflow"):
        checked_product(np.full((2, 2), 1e308), np.ones(2), "A product")
