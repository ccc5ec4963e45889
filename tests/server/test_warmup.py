"""ui.server.warmup imports every library module any page imports, so none is imported by two first
runs at once (see ui/server/warmup.py). A page that starts using a new library, trace type or table
feature fails this test until ui.server.warmup rehearses it too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_every_library_module_a_page_imports_is_imported_by_the_warmup() -> None:
    out = subprocess.run(
        [sys.executable, str(HERE / "page_imports.py")],
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    ).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert len(found["pages"]) >= 9, found["pages"]
    assert found["missed"] == [], "imported by a page but not by ui.server.warmup: " + ", ".join(
        found["missed"]
    )
