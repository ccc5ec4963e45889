"""Cutting a typed formula into tokens: numbers, names, operators and brackets.

Only the characters listed here are read; anything else is refused at its position. Names may
hold letters of any script, digits, underscores and combining accents (x̂ is x plus U+0302), so
a look-alike letter becomes an unknown name the parser reports, never a different symbol.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from ln_core.formula import notation
from ln_core.formula.errors import FormulaError, FormulaFailure

MAX_CHARS = 2000
MAX_NUMBER_CHARS = 24

# Every way of writing an operator, by the one the parser reads.
OPERATORS = {
    "+": "+",
    "-": "-",
    "−": "-",
    "–": "-",
    "*": "*",
    "·": "*",
    "⋅": "*",
    "∙": "*",
    "×": "*",
    "⊙": "*",
    "/": "/",
    "÷": "/",
    "^": "^",
    "√": "√",
    "Σ": "Σ",
    "∑": "Σ",
}
# Fractions typed as one character (−½ Σ …, (σ² + ε)^(−½)), read as the number they are.
FRACTIONS = {"½": "0.5", "¼": "0.25", "¾": "0.75"}
OPENING = {"(": ")", "[": "]", "{": "}"}
CLOSING = set(OPENING.values())
SUPERSCRIPTS = {
    "⁰": "0",
    "¹": "1",
    "²": "2",
    "³": "3",
    "⁴": "4",
    "⁵": "5",
    "⁶": "6",
    "⁷": "7",
    "⁸": "8",
    "⁹": "9",
    "⁻": "-",
}


# What to type instead of a character the language does not read.
INSTEAD = {
    ",": "A function takes one argument here: mean(…) and sum(…) run over the features of "
    "each vector, with no axis to give.",
    "∂": "Write dy for ∂L/∂y, dxhat for ∂L/∂x̂ (or dL/dy, ∂L/∂y as a whole).",
    "|": "Write abs(…) for an absolute value.",
    ".": "A point is read only inside a number (0.5).",
    "'": "Name each gradient as the list beside the box does: dy, dxhat, dvar, dmu.",
    "’": "Name each gradient as the list beside the box does: dy, dxhat, dvar, dmu.",
}
TYPE_ANY = (
    "Type numbers, the names listed beside the box, + − * / ^ ( ) [ ] Σ √ and powers such as ²."
)


@dataclass(frozen=True)
class Token:
    """kind: number, name, op, open, close, power (a superscript exponent), end.
    text: the operator, bracket, name or number as read (a superscript as plain digits; the
    op "frac" is LaTeX's \\frac)."""

    kind: str
    text: str
    position: int
    end: int


def _is_name_start(c: str) -> bool:
    return (c.isalpha() or c == "_") and c not in OPERATORS


def _is_name_part(c: str) -> bool:
    # ² is a digit to Python, but after a name it is a power (σ² is σ squared).
    if c in SUPERSCRIPTS:
        return False
    return _is_name_start(c) or c.isdigit() or unicodedata.category(c) in ("Mn", "Mc")


def _described(c: str) -> str:
    """A character by its code point and Unicode name: invisible and look-alike characters
    cannot be told apart on screen."""
    return f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}"


def _refuse(kind: str, problem: str, text: str, start: int, end: int) -> FormulaFailure:
    return FormulaFailure(FormulaError(kind, problem, start, end, text[start:end]))


def _number_end(text: str, i: int) -> int:
    """Where the number starting at i ends: digits, one point, an exponent e±digits."""
    j = i
    while j < len(text) and text[j].isascii() and text[j].isdigit():
        j += 1
    if j < len(text) and text[j] == ".":
        j += 1
        while j < len(text) and text[j].isascii() and text[j].isdigit():
            j += 1
    if j < len(text) and text[j] in "eE":
        k = j + 1
        if k < len(text) and text[k] in "+-":
            k += 1
        if k < len(text) and text[k].isascii() and text[k].isdigit():
            j = k
            while j < len(text) and text[j].isascii() and text[j].isdigit():
                j += 1
    return j


def _name(text: str, i: int) -> tuple[str, int]:
    """The name starting at text[i] and where it ends: x_{i} is x_i, and np.mean, x.mean are
    one dotted name (the parser reads or refuses it)."""
    j = i + 1
    while j < len(text) and _is_name_part(text[j]):
        j += 1
    name = text[i:j]
    while j + 1 < len(text) and text[j] == "." and _is_name_start(text[j + 1]):
        k = j + 2
        while k < len(text) and _is_name_part(text[k]):
            k += 1
        name, j = text[i:k], k
    return _subscripted(text, name, j)


def _subscripted(text: str, name: str, j: int) -> tuple[str, int]:
    """name with the LaTeX subscript at text[j] (x_{i}, or _i after \\hat{x}), NFC."""
    if name.endswith("_") and (group := notation.BRACED.match(text, j)):
        name, j = name + group.group(1).strip(), group.end()
    elif not name.endswith("_") and (index := notation.SUBSCRIPT.match(text, j)):
        name, j = name + "_" + index.group(1).strip("{} "), index.end()
    return unicodedata.normalize("NFC", name), j


def _latex(text: str, i: int, tokens: list[Token]) -> int:
    """Read the LaTeX command at text[i] (a backslash) into `tokens`; where it ends."""
    command = notation.LATEX_COMMAND.match(text, i)
    word = command.group(1) if command else ""
    j = command.end() if command else i + 1
    if word in notation.SPACING_COMMANDS:
        return j
    if word in notation.OPERATOR_COMMANDS:
        op = notation.OPERATOR_COMMANDS[word]
        tokens.append(Token("op", op, i, j))
        return notation.sum_bounds_end(text, j) if op == "Σ" else j
    if word in notation.GREEK:
        name, end = _subscripted(text, notation.GREEK[word], j)
        tokens.append(Token("name", name, i, end))
        return end
    if word in notation.ACCENTS:
        inner = notation.braced_name(text, j)
        if inner is None:
            raise _refuse(
                "notation",
                f"Write \\{word}{{x}} with one name in the braces, or type the name: x̂ or "
                "xhat, x̄ for the mean of x.",
                text,
                i,
                j,
            )
        base, end = inner
        name, end = _subscripted(text, notation.GREEK.get(base, base) + notation.ACCENTS[word], end)
        tokens.append(Token("name", name, i, end))
        return end
    if word == "partial":
        raise _refuse("notation", INSTEAD["∂"], text, i, j)
    raise _refuse(
        "notation",
        f"The lab reads only these LaTeX commands: {notation.KNOWN_COMMANDS}. Type this one as a "
        "plain name or operator (the names are listed beside the box).",
        text,
        i,
        j,
    )


def tokenize(text: str) -> list[Token]:
    """The tokens of `text`, ending with an `end` token. Raises FormulaFailure."""
    if len(text) > MAX_CHARS:
        raise FormulaFailure(
            FormulaError(
                "too-long",
                f"The formula has {len(text)} characters; the lab reads at most {MAX_CHARS}.",
                MAX_CHARS,
                len(text),
            )
        )
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "*" and text[i : i + 2] == "**":
            tokens.append(Token("op", "^", i, i + 2))
            i += 2
        elif c in OPERATORS:
            tokens.append(Token("op", OPERATORS[c], i, i + 1))
            i = notation.sum_bounds_end(text, i + 1) if OPERATORS[c] == "Σ" else i + 1
        elif c == "\\":
            i = _latex(text, i, tokens)
        elif (gradient := notation.GRADIENT.match(text, i)) is not None:
            j = k = gradient.end()
            while k < len(text) and (_is_name_start(text[k]) if k == j else _is_name_part(text[k])):
                k += 1
            if k == j:
                raise _refuse(
                    "notation", "Write the gradient's name after dL/d: dL/dy is dy.", text, i, k
                )
            tokens.append(Token("name", unicodedata.normalize("NFC", "d" + text[j:k]), i, k))
            i = k
        elif c in FRACTIONS:
            tokens.append(Token("number", FRACTIONS[c], i, i + 1))
            i += 1
        elif c in OPENING:
            tokens.append(Token("open", c, i, i + 1))
            i += 1
        elif c in CLOSING:
            tokens.append(Token("close", c, i, i + 1))
            i += 1
        elif c in SUPERSCRIPTS:
            j = i
            while j < len(text) and text[j] in SUPERSCRIPTS:
                j += 1
            digits = "".join(SUPERSCRIPTS[s] for s in text[i:j])
            if not digits.lstrip("-").isdigit() or digits.count("-") > 1 or len(digits) > 3:
                raise _refuse("number", "This superscript is not a whole power.", text, i, j)
            tokens.append(Token("power", digits, i, j))
            i = j
        elif (c.isascii() and c.isdigit()) or (
            c == "." and i + 1 < len(text) and text[i + 1].isascii() and text[i + 1].isdigit()
        ):
            j = _number_end(text, i)
            if j - i > MAX_NUMBER_CHARS:
                raise _refuse(
                    "number",
                    f"This number is {j - i} characters long; at most {MAX_NUMBER_CHARS}.",
                    text,
                    i,
                    j,
                )
            tokens.append(Token("number", text[i:j], i, j))
            i = j
        elif _is_name_start(c):
            name, j = _name(text, i)
            if "." in name and not notation.is_read(name):
                raise _refuse(
                    "notation", notation.dotted_problem(name.rpartition(".")[2]), text, i, j
                )
            tokens.append(Token("name", name, i, j))
            i = j
        elif c == "=":
            raise _refuse(
                "syntax",
                "Type only the right-hand side, the formula after '=' (the quantity is "
                "chosen above the box).",
                text,
                i,
                i + 1,
            )
        else:
            raise _refuse(
                "character",
                f"This character ({_described(c)}) is not part of the formula language. "
                + INSTEAD.get(c, TYPE_ANY),
                text,
                i,
                i + 1,
            )
    tokens.append(Token("end", "", len(text), len(text)))
    return tokens
