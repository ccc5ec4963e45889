"""Shared setup for the tests of ln_core's extension modules.

pytest runs with --import-mode=importlib, so test modules cannot import each other: the shared
helpers live in `core_ext_kit.py` next to this file, and this directory (and the repository
root, for `ln_core`) go on sys.path.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _path in (_HERE.parents[1], _HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
