"""Shared setup for the ln_core tests.

pytest runs with --import-mode=importlib, so test modules cannot import each other. The shared
helpers and hypothesis strategies live in `kit.py` next to this file; putting this
directory (and the repository root, for `ln_core`) on sys.path lets every test module import it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

_HERE = Path(__file__).resolve().parent
for _path in (_HERE.parents[1], _HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


@pytest.fixture
def blas_raising_invalid(monkeypatch: pytest.MonkeyPatch) -> None:
    """np.dot as OpenBLAS sometimes behaves: the right product, with the invalid flag raised.

    Its kernels work on padding they then discard (OpenBLAS #1924, NumPy #24067), so NumPy
    reports "invalid value encountered in dot" on finite inputs, at random, wherever the caller
    asked for floating-point errors to raise. Here it happens on every call, so a path that
    trusts BLAS's flags fails every time instead of once in thousands of CI runs.
    """
    real_dot = np.dot

    def dot(*args, **kwargs):
        product = real_dot(*args, **kwargs)
        if np.geterr()["invalid"] == "raise":
            raise FloatingPointError("invalid value encountered in dot")
        return product

    monkeypatch.setattr(np, "dot", dot)
