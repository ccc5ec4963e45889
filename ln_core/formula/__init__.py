"""Typed formulas, read safely: a whitelist grammar parsed into a frozen expression tree,
evaluated over NumPy and written back as LaTeX.

No typed text is ever run as Python: `tokens` reads only the characters of the language,
`parser` builds a tree from a vocabulary's names (vocabulary), `evaluate` computes it within a
budget (evaluate_bounded also bounds its round-off), `latex` prints what was understood. Every
problem is a FormulaError with its place.
"""

from ln_core.formula.errors import FormulaError
from ln_core.formula.evaluate import Bounded, Carries, evaluate, evaluate_bounded
from ln_core.formula.latex import to_latex
from ln_core.formula.parser import parse
from ln_core.formula.tree import Node, names
from ln_core.formula.vocabulary import Function, Symbol, Vocabulary

__all__ = [
    "Bounded",
    "Carries",
    "FormulaError",
    "Function",
    "Node",
    "Symbol",
    "Vocabulary",
    "evaluate",
    "evaluate_bounded",
    "names",
    "parse",
    "to_latex",
]
