"""The Export page's NumPy snippet runs on its own: a fresh interpreter in an empty folder, with
nothing but NumPy (never this repository), prints the dx the lab computes, to 1e-12."""

from __future__ import annotations

import ast
import subprocess
import sys

import numpy as np
import pytest

import ln_core


def _run_alone(code: str, folder) -> dict[str, np.ndarray]:
    """Run `code` with `python -I` (no PYTHONPATH, no user site, no current folder) in `folder`;
    the printed "name = [...]" lines, as arrays."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", code],
        cwd=folder,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = dict(line.split(" = ", 1) for line in done.stdout.splitlines())
    return {name: np.array(ast.literal_eval(values)) for name, values in printed.items()}


@pytest.mark.parametrize(
    ("preset", "dtype"),
    [
        ("Random normal", "float64"),
        ("Token batch (B x L x D)", "float64"),
        ("Large common offset (about 2000)", "float64"),
        ("Classroom (D = 4, integers)", "float32"),
    ],
)
def test_the_snippet_reproduces_dx_without_this_repository(lab, tmp_path, preset, dtype):
    lab.set_sidebar("preset", preset).set_sidebar("dtype", dtype).open("Export and share")
    lab.assert_clean()
    snippet = next(c.value for c in lab.at.main.code if c.language == "python")
    assert "ln_core" not in snippet and "import numpy as np" in snippet
    printed = _run_alone(snippet, tmp_path)

    s = lab.state
    x = s["x"].astype(dtype)
    cache = ln_core.forward(x, s["gamma"].astype(dtype), s["beta"].astype(dtype), s["eps"])
    grads = ln_core.backward(s["dout_random"].astype(dtype), cache)
    scale = float(np.max(np.abs(grads.dx)))
    assert printed["dx"].shape == grads.dx.shape
    np.testing.assert_allclose(printed["dx"], grads.dx, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(
        printed["out"], cache.out, rtol=0, atol=1e-12 * np.abs(cache.out).max()
    )
    np.testing.assert_allclose(printed["dgamma"], grads.dgamma, rtol=1e-12, atol=1e-12 * scale)
