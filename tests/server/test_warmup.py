"""ui.server.warmup imports every library module any page imports, so none is imported by two first
runs at once (see ui/server/warmup.py). A page that starts using a new library, trace type or table
feature fails this test until ui.server.warmup rehearses it too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.local_server import LocalServer

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


def test_the_launcher_has_the_libraries_loaded_before_it_answers() -> None:
    # What ./run.sh and every replica run: healthy means a class's first runs wait for no
    # import. Seen from outside: the libraries' compiled parts are mapped into the server
    # process before any session has run (plain `streamlit run` maps none of them).
    with LocalServer(launcher=True) as server:
        maps = Path(f"/proc/{server.pid}/maps").read_text()
    for library in ("numpy/", "pandas/_libs/", "pyarrow/"):
        assert library in maps, f"{library} not loaded by the launcher before its first session"
