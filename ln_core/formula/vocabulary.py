"""The names a formula may use: symbols (with every accepted spelling) and functions.

A vocabulary is data: the parser looks names up in it, the LaTeX printer takes each symbol's
LaTeX from it, and a page lists it beside the input box. Values are bound only when a tree is
evaluated, so one vocabulary serves every input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

# x_i, x̂_j, dy_k: an index on a symbol names the entry's own value.
_INDEXED = re.compile(r"^(.+)_([ijkln])$")
SPLIT_CHARS = 24  # longer runs of letters are not read as several symbols


@dataclass(frozen=True)
class Spelled:
    """name: canonical (the lab's node name where there is one); aliases: other spellings."""

    name: str
    aliases: tuple[str, ...]

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass(frozen=True)
class Symbol(Spelled):
    """A value. latex: how the printer writes it; meaning: one line for the names list."""

    latex: str
    meaning: str


@dataclass(frozen=True)
class Function(Spelled):
    """A function of one argument. latex: the printer's text before and after the argument;
    meaning: one line for the names list. Σ and √ are written before what they take, without
    brackets (the parser reads them as sum and sqrt)."""

    latex: tuple[str, str]
    meaning: str


@dataclass(frozen=True)
class Vocabulary:
    symbols: tuple[Symbol, ...]
    functions: tuple[Function, ...]

    @cached_property
    def _symbols(self) -> dict[str, Symbol]:
        return {s: symbol for symbol in self.symbols for s in symbol.spellings}

    @cached_property
    def _functions(self) -> dict[str, Function]:
        return {s: function for function in self.functions for s in function.spellings}

    def symbol(self, spelling: str) -> Symbol | None:
        """The symbol written `spelling` (x_i reads as x), or None."""
        found = self._symbols.get(spelling)
        if found is None and (indexed := _INDEXED.match(spelling)):
            found = self._symbols.get(indexed.group(1))
        return found

    def function(self, spelling: str) -> Function | None:
        found = self._functions.get(spelling)
        if found is None and (indexed := _INDEXED.match(spelling)):
            found = self._functions.get(indexed.group(1))
        return found

    def split(self, spelling: str) -> list[Symbol] | None:
        """`spelling` read as symbols written together (γx̂ is γ x̂), longest first; None when
        it cannot be read so or is longer than SPLIT_CHARS."""
        if len(spelling) > SPLIT_CHARS:
            return None
        # rest[i]: the reading of spelling[i:], filled from the end (no recursion).
        rest: list[list[Symbol] | None] = [None] * len(spelling) + [[]]
        for i in range(len(spelling) - 1, -1, -1):
            for cut in range(len(spelling), i, -1):
                head = self._symbols.get(spelling[i:cut])
                if head is not None and rest[cut] is not None:
                    rest[i] = [head, *rest[cut]]
                    break
        return rest[0]

    def known(self) -> tuple[str, ...]:
        """Every spelling, for an unknown name's message."""
        return (*self._symbols, *self._functions)

    def latex_of(self, name: str) -> str:
        return next(s.latex for s in self.symbols if s.name == name)

    def function_named(self, name: str) -> Function:
        return next(f for f in self.functions if f.name == name)

    def plus(self, symbols: tuple[Symbol, ...], functions: tuple[Function, ...]) -> Vocabulary:
        return Vocabulary((*self.symbols, *symbols), (*self.functions, *functions))
