"""Every cache in the app is bounded, so no sequence of visitors grows the server without end.

Each st.cache_data / st.cache_resource names max_entries and a ttl, and each functools cache a
number of entries; the st.cache_data sizes in ui/server/compute.py add up to at most
CACHE_BUDGET_MB (ui.server.cache_budget), the ceiling .streamlit/config.toml gives Streamlit
for all cached data together.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

from ui.server import compute
from ui.server.cache_budget import CACHE_BUDGET_MB

ROOT = Path(__file__).resolve().parents[2]
APP_SOURCES = [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py"))]
APP_SOURCES += sorted((ROOT / "pages").rglob("*.py"))
CACHES = ("cache_data", "cache_resource")


def _cache_uses(path: Path) -> list[tuple[int, bool]]:
    """(line, bounded) of every st.cache_data / st.cache_resource in the file: bounded when it
    names max_entries and a ttl (a bare decorator names neither)."""
    uses = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in CACHES:
            uses.append((node.lineno, {"max_entries", "ttl"} <= {k.arg for k in node.keywords}))
        elif isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if getattr(decorator, "attr", "") in CACHES:
                    uses.append((decorator.lineno, False))
    return uses


def _unbounded(uses_in: Callable[[Path], list[tuple[int, bool]]]) -> tuple[int, list[str]]:
    """How many caches `uses_in` finds in the app's sources, and where the unbounded ones are."""
    uses = [(path, line, bounded) for path in APP_SOURCES for line, bounded in uses_in(path)]
    return len(uses), [f"{p.relative_to(ROOT)}:{line}" for p, line, bounded in uses if not bounded]


def test_every_cache_has_a_number_of_entries_and_a_time_to_live() -> None:
    found, unbounded = _unbounded(_cache_uses)
    assert found >= 2, "no caches found: has the way they are declared changed?"
    assert not unbounded, f"caches without max_entries and ttl: {unbounded}"


def _functools_caches(path: Path) -> list[tuple[int, bool]]:
    """(line, bounded) of every functools cache in the file: lru_cache with a whole maxsize
    is bounded; functools.cache, a bare lru_cache and maxsize=None are not."""
    uses = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call else decorator
            name = getattr(target, "attr", getattr(target, "id", ""))
            if name not in ("lru_cache", "cache"):
                continue
            sizes = [k.value for k in call.keywords if k.arg == "maxsize"] if call else []
            sizes += call.args[:1] if call else []
            bounded = name == "lru_cache" and any(
                isinstance(v, ast.Constant) and isinstance(v.value, int) for v in sizes
            )
            uses.append((decorator.lineno, bounded))
    return uses


def test_every_functools_cache_has_a_number_of_entries() -> None:
    found, unbounded = _unbounded(_functools_caches)
    assert found >= 4, "no functools caches found: has the way they are declared changed?"
    assert not unbounded, f"functools caches without a maxsize: {unbounded}"


def test_an_unbounded_functools_cache_is_found(tmp_path: Path) -> None:
    source = tmp_path / "page.py"
    source.write_text(
        "import functools\nfrom functools import cache, lru_cache\n"
        "@functools.lru_cache(maxsize=8)\ndef a(): ...\n@lru_cache(16)\ndef b(): ...\n"
        "@functools.cache\ndef c(): ...\n@lru_cache\ndef d(): ...\n"
        "@lru_cache(maxsize=None)\ndef e(): ...\n"
    )
    bounded = [bounded for _, bounded in _functools_caches(source)]
    assert bounded == [True, True, False, False, False]


def test_the_cached_results_fit_the_documented_budget() -> None:
    assert len(compute.SIZES_MB) >= 10, compute.SIZES_MB
    assert sum(compute.SIZES_MB.values()) <= CACHE_BUDGET_MB, compute.SIZES_MB


def test_streamlit_is_given_the_same_ceiling_for_all_cached_data() -> None:
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    found = re.findall(r'^maxCacheDataSize = "(\d+)mb"', config, flags=re.MULTILINE)
    assert found == [str(CACHE_BUDGET_MB)], found
