"""The expression tree a formula is parsed into: five kinds of node, all frozen.

Every node keeps the characters [position, end) of the typed formula it came from, so an error
found while evaluating points at the part of the formula that caused it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Number:
    value: float
    position: int
    end: int


@dataclass(frozen=True)
class Name:
    """A symbol by its canonical name in the vocabulary (x̂ and xhat are both normalized_x)."""

    name: str
    position: int
    end: int


@dataclass(frozen=True)
class Negate:
    operand: Node
    position: int
    end: int


@dataclass(frozen=True)
class Binary:
    """op: one of + - * / ^. implicit: a product written without a sign (2 x, γ x̂)."""

    op: str
    left: Node
    right: Node
    position: int
    end: int
    implicit: bool = False


@dataclass(frozen=True)
class Call:
    """A function of the vocabulary applied to one argument (sqrt, sum, mean, ...)."""

    function: str
    argument: Node
    position: int
    end: int


Node = Number | Name | Negate | Binary | Call


def size(node: Node) -> int:
    """How many nodes the tree holds."""
    if isinstance(node, Negate):
        return 1 + size(node.operand)
    if isinstance(node, Binary):
        return 1 + size(node.left) + size(node.right)
    if isinstance(node, Call):
        return 1 + size(node.argument)
    return 1


def names(node: Node) -> frozenset[str]:
    """The canonical names the tree reads."""
    if isinstance(node, Name):
        return frozenset({node.name})
    if isinstance(node, Negate):
        return names(node.operand)
    if isinstance(node, Binary):
        return names(node.left) | names(node.right)
    if isinstance(node, Call):
        return names(node.argument)
    return frozenset()
