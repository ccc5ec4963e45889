"""The notations students write besides the lab's own, read by the tokenizer into the lab's
tokens or refused with the plain form to type.

- LaTeX: \\hat{x} is x̂, \\bar{x} is x̄, \\frac{a}{b} is (a)/(b), \\sum (with its bounds) is Σ,
  \\sqrt is √, \\cdot and \\times are ·, \\left and \\right are dropped, Greek letters are
  the letters; x_{i} is x_i, and a power in braces ^{…} is already a bracket.
- Σ_j, Σ_{j=1}^{N}, \\sum_j: the bounds of a sum are read and dropped (a sum runs over the
  features of the vector).
- dL/dy and ∂L/∂y are dy (dL/dx̂ is dx̂, and so on).
- np.sqrt, torch.sqrt are sqrt; np.mean, torch.sum, x.mean() are refused with the form to
  type (their axis is not the lab's to guess).
"""

from __future__ import annotations

import re

GREEK = {
    "mu": "μ",
    "sigma": "σ",
    "gamma": "γ",
    "beta": "β",
    "epsilon": "ε",
    "varepsilon": "ε",
}
# LaTeX commands read as an operator token of the lab's grammar, by the operator.
OPERATOR_COMMANDS = {"cdot": "*", "times": "*", "sum": "Σ", "sqrt": "√", "frac": "frac"}
SPACING_COMMANDS = frozenset(("left", "right", "big", "Big", "bigl", "bigr", ",", ";", "!", " "))
ACCENTS = {"hat": "\u0302", "bar": "\u0304", "overline": "\u0304"}
KNOWN_COMMANDS = (
    "\\hat{x}, \\bar{x}, \\frac{a}{b}, \\sum, \\sqrt{…}, \\cdot, \\left( \\right) and the Greek "
    "letters \\mu \\sigma \\gamma \\beta \\epsilon"
)
# NumPy and PyTorch functions the lab reads as its own, and those it refuses, with the form to
# type.
PREFIXES = ("np", "numpy", "torch", "math", "F")
READ_AS = {"sqrt": "sqrt", "abs": "abs"}
TYPE_INSTEAD = {
    "mean": "mean(…) (it averages over the features of each vector)",
    "sum": "sum(…) or Σ (it sums over the features of each vector)",
    "var": "var(…) (the variance over the features of each vector)",
    "std": "std(…) (the standard deviation over the features of each vector)",
    "rsqrt": "1/sqrt(…)",
    "pow": "a ^ b",
    "square": "(…)²",
}
GRADIENT = re.compile(r"[d∂]L\s*/\s*[d∂]")
LATEX_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
# A brace group without nested braces, as in \hat{x}, x_{i}, Σ_{j=1}^{N}.
BRACED = re.compile(r"\{([^{}]*)\}")
SUBSCRIPT = re.compile(r"_(\{[^{}]*\}|[A-Za-z0-9])")
SUPERSCRIPT_BOUND = re.compile(r"\^(\{[^{}]*\}|[A-Za-z0-9])")


def sum_bounds_end(text: str, i: int) -> int:
    """Where the bounds written after a sum sign at text[:i] end (Σ_j, Σ_{j=1}^{N}); i when
    there are none. An upper bound is read only after a lower one: Σ^2 is not a sum's."""
    lower = SUBSCRIPT.match(text, i)
    if lower is None:
        return i
    upper = SUPERSCRIPT_BOUND.match(text, lower.end())
    return upper.end() if upper else lower.end()


def braced_name(text: str, i: int) -> tuple[str, int] | None:
    """The name in braces at text[i] ({x}), or a name written right after a space (\\hat x),
    and where it ends; None when neither is there."""
    group = BRACED.match(text, i)
    if group is not None:
        inner = group.group(1).strip()
        return (inner, group.end()) if inner.replace("_", "").isalnum() else None
    bare = re.compile(r"\s*([A-Za-z]+)").match(text, i)
    return (bare.group(1), bare.end()) if bare else None


def is_read(dotted: str) -> bool:
    """Whether a dotted name is one the lab reads as its own (np.sqrt, torch.abs)."""
    prefix, _, last = dotted.rpartition(".")
    return prefix in PREFIXES and last in READ_AS


def dotted_problem(last: str) -> str:
    """What to type instead of a dotted name ending in `last` (np.mean, x.mean, x.__class__)."""
    if last in TYPE_INSTEAD:
        return (
            f"The lab does not read NumPy, PyTorch or Python methods: write {TYPE_INSTEAD[last]}."
        )
    if last in READ_AS:
        return f"Write {READ_AS[last]}(…) with its argument in brackets."
    return (
        "The lab does not read NumPy, PyTorch or Python names with a point: write the formula "
        "with the names listed beside the box, such as mean(…), sum(…), sqrt(…)."
    )
