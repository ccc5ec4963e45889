"""The tree written back as LaTeX: what the lab understood, never the typed text.

Every piece comes from the tree and the vocabulary (numbers are re-formatted from their
values, names from the vocabulary's LaTeX), so typed text cannot reach a LaTeX renderer.
Brackets are added by precedence; divisions are shown as fractions, products with a dot.
"""

from __future__ import annotations

from ln_core.formula.tree import Binary, Call, Name, Negate, Node, Number
from ln_core.formula.vocabulary import Vocabulary

# Binding strength: a child weaker than its parent needs brackets.
_STRENGTH = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "^": 4}


def _number(value: float) -> str:
    text = f"{value:.12g}"
    if "e" in text:
        mantissa, power = text.split("e")
        return f"{mantissa} \\times 10^{{{int(power)}}}"
    return text


def _strength(node: Node) -> int:
    if isinstance(node, Binary):
        return _STRENGTH[node.op]
    if isinstance(node, Negate):
        return _STRENGTH["neg"]
    if isinstance(node, Number) and node.value < 0:
        return _STRENGTH["neg"]
    return 5


def _bracketed(text: str) -> str:
    return f"\\left({text}\\right)"


def to_latex(node: Node, vocabulary: Vocabulary) -> str:
    """LaTeX for st.latex or KaTeX."""

    def side(child: Node, least: int) -> str:
        text = write(child)
        return _bracketed(text) if _strength(child) < least else text

    def write(node: Node) -> str:
        if isinstance(node, Number):
            return _number(node.value)
        if isinstance(node, Name):
            return vocabulary.latex_of(node.name)
        if isinstance(node, Negate):
            return "-" + side(node.operand, _STRENGTH["*"] + 1)
        if isinstance(node, Call):
            before, after = vocabulary.function_named(node.function).latex
            return f"{before}{write(node.argument)}{after}"
        if node.op == "/":
            return f"\\frac{{{write(node.left)}}}{{{write(node.right)}}}"
        if node.op == "^":
            base = write(node.left)
            if _strength(node.left) <= _STRENGTH["^"] or isinstance(node.left, Call):
                base = _bracketed(base)
            return f"{{{base}}}^{{{write(node.right)}}}"
        strength = _STRENGTH[node.op]
        left = side(node.left, strength)
        # a - (b + c) and a - (b - c) keep their brackets; a + (b + c) needs none.
        right = side(node.right, strength + (node.op in "-/"))
        if node.op == "*":
            return f"{left} \\cdot {right}"
        return f"{left} {node.op} {right}"

    return write(node)
