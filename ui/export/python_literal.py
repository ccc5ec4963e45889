"""Numbers written as Python source: the only thing an exported file's code holds from a view.

repr() of a float reads back as exactly that float, and a float32 value is exact in float64, so
`np.array(..., dtype=np.float32)` of the written numbers rebuilds the array bit for bit. Text of
any other kind never passes through here, so nothing a user typed can become code.
"""

from __future__ import annotations

import math

import numpy as np


def float_literal(value: float) -> str:
    """A finite number as Python source that reads back as the same float64."""
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{number} is not a finite number, so it cannot be written as code.")
    return repr(number)


def _nested(array: np.ndarray, column: int) -> str:
    """The entries as nested lists; each row of a table starts on its own line at `column`."""
    if array.ndim == 1:
        return "[" + ", ".join(float_literal(v) for v in array) + "]"
    rows = [_nested(row, column + 1) for row in array]
    return "[" + f",\n{' ' * (column + 1)}".join(rows) + "]"


def array_literal(array: np.ndarray, column: int = 0) -> str:
    """`np.array([...], dtype=np.<dtype>)` rebuilding a float array exactly.

    column: where the text starts on its line, so the rows of a table line up under each other.
    """
    a = np.asarray(array)
    opening = "np.array("
    return f"{opening}{_nested(np.atleast_1d(a), column + len(opening))}, dtype=np.{a.dtype.name})"


def assignment(name: str, array: np.ndarray) -> str:
    """`name = np.array(...)` for one of the lab's own names (x, gamma, beta, dout)."""
    return f"{name} = {array_literal(array, column=len(name) + 3)}"
