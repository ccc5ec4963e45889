"""Recursive descent from tokens to a tree, over a vocabulary's names only.

    expression := term (("+" | "-") term)*
    term       := signed (("*" | "/") signed | signed)*      a product may omit its sign: 2 γ x̂
    signed     := ("-" | "+") signed | "Σ" (postfix | term) | power
                                                        Σ takes the bracket right after it,
                                                        else the product after it
    power      := postfix ("^" exponent)?                   x^2, x**-0.5, right to left
    exponent   := ("-" | "+") exponent | power
    postfix    := primary superscript*                      σ², s³, σ⁻¹
    primary    := number | symbol | function "(" expression ")" | "(" expression ")"
                | "√" postfix | "frac" group group                  LaTeX's \\frac{a}{b}

A few notations students write are read as the lab's (ln_core.formula.notation; here var(…),
std(…), μ(…), x̄ as statistics, np.sqrt as sqrt) or refused with the form to type.

Nesting is bounded (MAX_DEPTH) and so is the tree (MAX_NODES), so no typed text can exhaust
the stack or the evaluator.
"""

from __future__ import annotations

import difflib
import math
import unicodedata
from collections.abc import Callable
from dataclasses import replace

from ln_core.formula import notation
from ln_core.formula.errors import FormulaError, FormulaFailure
from ln_core.formula.tokens import OPENING, Token, tokenize
from ln_core.formula.tree import Binary, Call, Name, Negate, Node, Number
from ln_core.formula.vocabulary import SPLIT_CHARS, Vocabulary
from ln_core.validation import SMALLEST, too_small

MAX_DEPTH = 40
MAX_NODES = 200  # the tree's depth is bounded by this too: every walk of it recurses
MAX_NUMBER = 1e12  # a constant in a derivation is a small count or a power, never huge
SUM = "sum"  # the function Σ stands for
SQRT = "sqrt"  # the function √ stands for
MEAN = "mean"  # the function x̄, E[…] and μ(…) stand for
# Names that are a value alone and a statistic of what follows in brackets: var(x) is the
# variance of x over the features, not σ² times x. μ and mu only when the bracket touches
# them (μ(x)); with a space, μ (x − 1) is a product.
STATISTICS = {"var": "var", "variance": "var", "std": "std", "mu": MEAN, "μ": MEAN}
TOUCHING = frozenset(("mu", "μ"))
MACRON = "\u0304"  # x̄ is x with a combining macron


class _Parser:
    def __init__(self, text: str, vocabulary: Vocabulary) -> None:
        self.text = text
        self.vocabulary = vocabulary
        self.tokens = tokenize(text)
        self.at = 0
        self.depth = 0
        self.nodes = 0

    # -- reading tokens ------------------------------------------------------------------

    @property
    def token(self) -> Token:
        return self.tokens[self.at]

    def take(self) -> Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def is_op(self, *ops: str) -> bool:
        return self.token.kind == "op" and self.token.text in ops

    def fail(self, kind: str, problem: str, token: Token, **extra: object) -> FormulaFailure:
        found = self.text[token.position : token.end]
        return FormulaFailure(
            FormulaError(kind, problem, token.position, token.end, found, **extra)
        )

    def made(self, node: Node) -> Node:
        """Count every node as it is made: a long flat chain (x + x + ...) is as deep a tree
        as deep brackets, and the evaluator and printer recurse through it."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise FormulaFailure(
                FormulaError(
                    "too-big",
                    f"The formula has more than {MAX_NODES} parts; the lab reads at most that.",
                    node.position,
                    node.end,
                    self.text[node.position : node.end],
                )
            )
        return node

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(
                "too-deep", f"The formula nests deeper than {MAX_DEPTH} levels here.", self.token
            )

    # -- the grammar -----------------------------------------------------------------------

    def expression(self) -> Node:
        node = self.term()
        while self.is_op("+", "-"):
            op = self.take().text
            right = self.term()
            node = self.made(Binary(op, node, right, node.position, right.end))
        return node

    def starts_factor(self) -> bool:
        token = self.token
        return token.kind in ("name", "open", "number") or (
            token.kind == "op" and token.text in ("√", "Σ", "frac")
        )

    def term(self) -> Node:
        node = self.signed()
        while True:
            if self.is_op("*", "/"):
                op = self.take().text
                right = self.signed()
                node = self.made(Binary(op, node, right, node.position, right.end))
            elif self.starts_factor():
                right = self.signed()
                node = self.made(Binary("*", node, right, node.position, right.end, implicit=True))
            else:
                return node

    def signed(self) -> Node:
        token = self.token
        if self.is_op("Σ"):
            self.enter()
            self.take()
            if not self.starts_factor() and not self.is_op("-"):
                raise self.fail("syntax", "Σ needs something to sum after it.", self.token)
            # Σ(…) sums the bracket, as sum(…) does: in Σ(dx̂ (x − μ)) 2(x − μ)/N the factor
            # after the bracket is outside the sum. Without a bracket Σ takes the product.
            argument = self.postfix() if self.token.kind == "open" else self.term()
            self.depth -= 1
            return self.made(Call(SUM, argument, token.position, argument.end))
        return self.sign(self.signed)

    def power(self) -> Node:
        base = self.postfix()
        if not self.is_op("^"):
            return base
        self.take()
        exponent = self.exponent()
        return self.made(Binary("^", base, exponent, base.position, exponent.end))

    def exponent(self) -> Node:
        return self.sign(self.exponent)

    def sign(self, after_sign: Callable[[], Node]) -> Node:
        """A leading + or - and what `after_sign` reads next, or a power: the unary minus of
        a value (-x²) and of an exponent (x^-2) bind the same way."""
        self.enter()
        token = self.token
        if self.is_op("-", "+"):
            self.take()
            operand = after_sign()
            if token.text == "-":
                operand = self.made(Negate(operand, token.position, operand.end))
        else:
            operand = self.power()
        self.depth -= 1
        return operand

    def postfix(self) -> Node:
        node = self.primary()
        while self.token.kind == "power":
            token = self.take()
            exponent = self.made(Number(float(int(token.text)), token.position, token.end))
            node = self.made(Binary("^", node, exponent, node.position, token.end))
        return node

    def primary(self) -> Node:
        token = self.token
        if token.kind == "number":
            return self.number(self.take())
        if token.kind == "name":
            return self.name(self.take())
        if token.kind == "open":
            return self.group()
        if self.is_op("√"):
            self.take()
            self.enter()
            argument = self.postfix()
            self.depth -= 1
            return self.made(Call(SQRT, argument, token.position, argument.end))
        if self.is_op("frac"):
            return self.fraction()
        if token.kind == "close":
            raise self.fail("bracket", f"This {token.text} closes no bracket.", token)
        if token.kind == "end":
            raise self.fail("syntax", "The formula ends where a value is expected.", token)
        if token.kind == "power":
            raise self.fail("syntax", "This power has nothing before it.", token)
        # As typed: ** reads as ^, and the student must see their own **.
        typed = self.text[token.position : token.end]
        raise self.fail("syntax", f"A value is expected here, not '{typed}'.", token)

    def fraction(self) -> Node:
        token = self.take()
        parts = []
        for _ in range(2):
            if self.token.kind != "open":
                raise self.fail(
                    "notation",
                    "Write \\frac{a}{b} with both parts in braces, or type (a)/(b).",
                    token,
                )
            parts.append(self.group())
        return self.made(Binary("/", parts[0], parts[1], token.position, parts[1].end))

    def statistic(self, which: str, token: Token) -> Node:
        """var(a), std(a) or mean(a), spelt with the vocabulary's mean and sqrt: the tree
        shows and computes what the lab read."""
        argument = self.group()
        at = (token.position, argument.end)
        if which == MEAN:
            return self.made(Call(MEAN, argument, *at))
        centred = self.made(Binary("-", argument, self.made(Call(MEAN, argument, *at)), *at))
        square = self.made(Binary("^", centred, self.made(Number(2.0, *at)), *at))
        variance = self.made(Call(MEAN, square, *at))
        return variance if which == "var" else self.made(Call(SQRT, variance, *at))

    def dotted(self, token: Token) -> Node:
        """np.sqrt(…) and torch.sqrt(…) read as sqrt(…) (the tokenizer refused the others)."""
        last = token.text.rpartition(".")[2]
        if self.token.kind != "open":
            raise self.fail("notation", notation.dotted_problem(last), token)
        argument = self.group()
        function = notation.READ_AS[last]
        return self.made(Call(function, argument, token.position, argument.end))

    def number(self, token: Token) -> Number:
        value = float(token.text)
        if not math.isfinite(value) or abs(value) > MAX_NUMBER:
            raise self.fail(
                "number", f"This number is too large; the lab reads up to {MAX_NUMBER:.0e}.", token
            )
        if too_small(token.text, value):
            raise self.fail(
                "number",
                "This number is too small; the lab reads numbers other than 0 down to "
                f"{SMALLEST:.1e} (float64 would store it as another number, or as 0).",
                token,
            )
        return self.made(Number(value, token.position, token.end))

    def group(self) -> Node:
        opening = self.take()
        self.enter()
        inner = self.expression()
        closing = self.token
        if closing.kind != "close":
            if closing.kind == "end":
                raise self.fail(
                    "bracket",
                    f"The {opening.text} at character {opening.position + 1} is never closed.",
                    opening,
                )
            raise self.fail("syntax", "An operator or a closing bracket is expected here.", closing)
        if closing.text != OPENING[opening.text]:
            raise self.fail(
                "bracket",
                f"This {closing.text} does not match the {opening.text} at character "
                f"{opening.position + 1}.",
                closing,
            )
        self.take()
        self.depth -= 1
        return _regroup(inner, opening.position, closing.end)

    def name(self, token: Token) -> Node:
        if "." in token.text:
            return self.dotted(token)
        statistic = STATISTICS.get(token.text)
        touching = token.text not in TOUCHING or self.token.position == token.end
        if statistic is not None and self.token.kind == "open" and touching:
            return self.statistic(statistic, token)
        if token.text.endswith(MACRON) and (averaged := self.vocabulary.symbol(token.text[:-1])):
            value = self.made(Name(averaged.name, token.position, token.end))
            return self.made(Call(MEAN, value, token.position, token.end))
        function = self.vocabulary.function(token.text)
        if function is not None:
            if self.token.kind != "open":
                raise self.fail(
                    "syntax",
                    f"{function.name} needs brackets around what it applies to: "
                    f"{function.name}( … ).",
                    token,
                )
            argument = self.group()
            return self.made(Call(function.name, argument, token.position, argument.end))
        symbol = self.vocabulary.symbol(token.text)
        if symbol is not None:
            return self.made(Name(symbol.name, token.position, token.end))
        parts = self.vocabulary.split(token.text)
        if parts is None:
            raise self.fail(
                "unknown-name",
                "This name is not one the lab knows." + self.hints(token.text),
                token,
                known=self.vocabulary.known(),
            )
        # The parts share the token's characters: an error about one points at all of them.
        node: Node = self.made(Name(parts[0].name, token.position, token.end))
        for part in parts[1:]:
            right = self.made(Name(part.name, token.position, token.end))
            node = self.made(Binary("*", node, right, token.position, token.end, implicit=True))
        return node

    def hints(self, spelling: str) -> str:
        """The known names closest to an unknown one, and its letters that no known name uses
        (a Cyrillic х, a fullwidth ｘ): on screen those look like the letters meant."""
        known = self.vocabulary.known()
        text = ""
        close = (
            difflib.get_close_matches(spelling, known, n=3, cutoff=0.6)
            if len(spelling) <= SPLIT_CHARS
            else []
        )
        if close:
            text += f" Did you mean {' or '.join(close)}?"
        else:
            text += " Type one of the names listed beside the box."
        used = {c for name in known for c in name}
        strange = sorted({c for c in spelling if c not in used and not c.isascii()})
        if strange:
            named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in strange)
            text += f" It holds characters no known name uses: {named}."
        return text


def _regroup(node: Node, position: int, end: int) -> Node:
    """The node spanning its brackets too, so an error about it points at the whole group."""
    return replace(node, position=position, end=end)


def parse(text: str, vocabulary: Vocabulary) -> Node | FormulaError:
    """The tree of `text` over `vocabulary`, or the first problem found in it."""
    try:
        parser = _Parser(text, vocabulary)
        if parser.token.kind == "end":
            raise parser.fail("syntax", "The formula is empty.", parser.token)
        tree = parser.expression()
        token = parser.token
        if token.kind == "close":
            raise parser.fail("bracket", f"This {token.text} closes no bracket.", token)
        if token.kind != "end":
            raise parser.fail("syntax", "An operator is expected here.", token)
        return tree
    except FormulaFailure as failure:
        return failure.error
