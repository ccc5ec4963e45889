"""Shared setup for the ln_core tests.

pytest runs with --import-mode=importlib, so test modules cannot import each other. The shared
helpers and hypothesis strategies live in `kit.py` next to this file; putting this
directory (and the repository root, for `ln_core`) on sys.path lets every test module import it.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _path in (_HERE.parents[1], _HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
