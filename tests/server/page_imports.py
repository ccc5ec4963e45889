"""Which libraries the pages import that ui.server.warmup did not: run as a script, prints JSON.

    python tests/server/page_imports.py   ->   {"pages": [...], "missed": ["pkg.module", ...]}

In a fresh interpreter: one AppTest run imports ui.server.warmup (and starts Streamlit's runtime),
then app.py runs every lab page. "missed" lists the modules of third-party libraries
that appeared only then. Python's standard library, Streamlit itself (its lazy imports are
plain imports under Python's module locks) and the app's own packages are left out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
OWN = {"app", "pages", "ln_core", "teaching", "ui", "deploy", "streamlit"}


def _library(module: str) -> bool:
    top = module.split(".")[0]
    return top not in sys.stdlib_module_names and top not in OWN and not top.startswith("_cython")


def missed_imports() -> dict[str, list[str]]:
    sys.path.insert(0, str(ROOT))
    warm = AppTest.from_string("import ui.server.warmup", default_timeout=120)
    warm.run()
    assert not warm.exception, [e.message for e in warm.exception]
    before = set(sys.modules)
    pages = sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "pages").glob("*/*.py")
        if p.stem == p.parent.name
    )
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.run()
    for page in pages:
        app.switch_page(page).run()
        assert not app.exception, (page, [e.message for e in app.exception])
    missed = sorted(m for m in set(sys.modules) - before if _library(m))
    return {"pages": pages, "missed": missed}


if __name__ == "__main__":
    print(json.dumps(missed_imports()))
