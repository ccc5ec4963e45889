"""The rules README.md states about the code, each checked here by reading the source, where
`lint-imports` (the import contracts in pyproject.toml) cannot: it sees imports, not calls.

A rule broken fails here the day it is written, naming the file and the line.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = sorted(
    [
        ROOT / "app.py",
        *(p for d in ("ln_core", "teaching", "ui", "pages") for p in (ROOT / d).rglob("*.py")),
    ]
)
DRAWING = sorted((ROOT / "ui" / "draw").rglob("*.py"))
PAGES = sorted([ROOT / "app.py", *(ROOT / "pages").rglob("*.py")])


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), filename=str(path))


@pytest.mark.parametrize("module", DRAWING, ids=_name)
def test_drawing_reads_no_session(module: Path):
    """ui/draw draws the values it is handed: it never reads or writes the session (the
    "plain-drawing" contract keeps ui.session's modules out; this keeps st.session_state and
    the link's query parameters out)."""
    lines = [
        node.lineno
        for node in ast.walk(_tree(module))
        if isinstance(node, ast.Attribute) and node.attr in {"session_state", "query_params"}
    ]
    assert not lines, f"{_name(module)} reads the session at lines {lines}"


@pytest.mark.parametrize("module", PRODUCT, ids=_name)
def test_nothing_is_run_as_python(module: Path):
    """No typed formula, link or cell is run as Python: the product calls no eval, exec or
    compile and builds no class at run time (ln_core/formula reads formulas with its grammar)."""
    forbidden = {"eval", "exec", "compile", "__import__", "make_dataclass"}
    methods = forbidden - {"compile"}  # re.compile builds a pattern, not code
    lines = [
        node.lineno
        for node in ast.walk(_tree(module))
        if isinstance(node, ast.Call)
        and (
            getattr(node.func, "id", None) in forbidden
            or getattr(node.func, "attr", None) in methods
        )
    ]
    assert not lines, f"{_name(module)} calls an interpreter at lines {lines}"


def _ln_core_functions(tree: ast.AST) -> set[str]:
    """The names a module imports from ln_core that are functions (lower case), and "ln_core"
    itself where the package is imported."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ln_core"):
            names |= {a.asname or a.name for a in node.names if a.name[:1].islower()}
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name.startswith("ln_core")}
    return names


@pytest.mark.parametrize("module", PAGES, ids=_name)
def test_pages_compute_through_the_cached_wrappers(module: Path):
    """Pages read the state and draw; what they show is computed by ln_core through
    ui/server/compute.py (cached), never called from the page itself. Its constants and types
    a page may name."""
    tree = _tree(module)
    functions = _ln_core_functions(tree)
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        while isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.value.id in functions:
                called = func.attr
                break
            func = func.value
        else:
            called = func.id if isinstance(func, ast.Name) and func.id in functions else None
        if called and called[:1].islower():
            lines.append(node.lineno)
    assert not lines, f"{_name(module)} calls ln_core itself at lines {lines}"


def test_the_server_listens_on_this_machine_only_and_sends_nothing_out():
    """The lab binds to 127.0.0.1 unless started for a classroom on purpose, and Streamlit's
    usage statistics are off: it runs offline (tests/browser/test_offline.py loads every page
    with the network cut)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["browser"]["gatherUsageStats"] is False
