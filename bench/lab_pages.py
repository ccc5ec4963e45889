"""The lab's pages as app.py declares them, read from its source.

app.py is a Streamlit script (importing it would run the app), so its st.Page(...) calls are
read with ast: the benchmarks then cover whatever pages the app has, without a list of their own.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class AppPage:
    """script: path from the repository root; name: its stem, as used in ui/server/caps.py and
    links; url_path: the page's address ("" for the default page), as the navigation names it."""

    script: str
    name: str
    title: str
    url_path: str


def lab_pages(source: str | None = None) -> list[AppPage]:
    """Every st.Page(...) call in app.py (or in `source`) but hidden ones, in order."""
    tree = ast.parse(source if source is not None else (ROOT / "app.py").read_text())
    pages = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page"):
            continue
        script = ast.literal_eval(node.args[0])
        options = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
        if options.get("visibility") == "hidden":
            continue  # the instructor's Class page: no student opens it
        name = Path(script).stem
        url_path = "" if options.get("default") else options.get("url_path", name)
        pages.append(AppPage(script, name, options.get("title", name), url_path))
    return pages
