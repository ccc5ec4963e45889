"""Shared setup for the notebook tests.

pytest runs with --import-mode=importlib, so test modules cannot import each other: the helpers
live in `notebook_kit.py` next to this file, and this directory and the repository root go on
sys.path. `kernels` is a real Jupyter kernel spec, written into a temporary folder, that starts
this interpreter (the venv's python) with ipykernel, so nbclient never picks another Python.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for _path in (_HERE.parents[1], _HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from notebook_kit import KERNEL  # noqa: E402


@pytest.fixture(scope="session")
def kernels(tmp_path_factory):
    """A KernelSpecManager that knows only KERNEL: this python running ipykernel."""
    from jupyter_client.kernelspec import KernelSpecManager

    folder = tmp_path_factory.mktemp("kernels")
    (folder / KERNEL).mkdir()
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "LayerNorm Lab tests",
        "language": "python",
    }
    (folder / KERNEL / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(folder)])
