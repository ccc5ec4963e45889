"""Run a measurement in a fresh Python process, for what one process cannot show about itself
(peak memory, or the allocator's state before anything else has run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def run_child(module: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """`python -m module --child *args` from the repository root; returns the JSON it prints
    on its last line of standard output."""
    completed = subprocess.run(
        [sys.executable, "-m", module, "--child", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def report(payload: Any) -> None:
    """The child's side: print the result for `run_child` to read."""
    print(json.dumps(payload))
