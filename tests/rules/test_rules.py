"""The rules README.md states about the code, each checked here by reading the source, where
`lint-imports` (the import contracts in pyproject.toml) cannot: it sees imports, not calls.

A rule broken fails here the day it is written, naming the file and the line.
"""

from __future__ import annotations

import ast
import re
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
# app.py and the page scripts it registers (a view beside its page calls ln_core as ui/ may).
SCRIPTS = re.findall(r'st\.Page\(\s*"([^"]+)"', (ROOT / "app.py").read_text())
PAGES = sorted([ROOT / "app.py", *(ROOT / script for script in SCRIPTS)])


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


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The modules a file imports: `import a.b`, `from a import b` (a.b if b is a module) and
    `from a.b import c` (a.b)."""
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return found


# Kept in ui/ though no page uses them, and why: each is read as text or run on its own, never
# imported by a page (test_kept_modules_are_no_pages_code holds this).
KEPT = {
    "ui.export.cells.layernorm": "a notebook template, read as text (ui/export/notebook_norm.py)",
    "ui.export.cells.notebook": "a notebook template, read as text",
    "ui.export.cells.rmsnorm": "a notebook template, read as text",
    "ui.server.launch": "the launcher ./run.sh runs (python -m ui.server.launch)",
}


def _users() -> dict[str, set[str]]:
    """Who uses each module of ui/ and pages/, directly or through other modules of ui/:
    "app" for app.py (it runs around every page), else the page folders (pages/<name>)."""
    sources = [ROOT / "app.py", *(p for d in ("ui", "pages") for p in (ROOT / d).rglob("*.py"))]
    importers: dict[str, set[str]] = {}
    for path in sources:
        for name in _imports(path) - {_module(path)}:
            importers.setdefault(name, set()).add(_module(path))

    def users(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        found = set()
        for importer in importers.get(name, set()) - seen:
            if importer == "app":
                found.add("app")
            elif importer.startswith("pages."):
                found.add("/".join(importer.split(".")[:2]))
            else:
                found |= users(importer, seen | {name})
        return found

    return {_module(p): users(_module(p)) for p in sources if p.name != "__init__.py"}


def test_code_one_page_uses_lives_beside_that_page():
    """A module of ui/ is shared: app.py (which runs around every page) or at least two pages
    use it, directly or through other parts of ui/. A module under pages/<name>/ is used by that
    page only (and by app.py where the page needs a hook on every run: the Stepper's browser
    part takes the step a student moved to). So what one page alone uses sits in its folder."""
    users = _users()
    lonely = {
        name: sorted(used)
        for name, used in users.items()
        if name.startswith("ui.") and name not in KEPT and "app" not in used and len(used) < 2
    }
    assert lonely == {}, "used by one page only: move each beside its page"
    strays = {
        name: sorted(used)
        for name, used in users.items()
        if name.startswith("pages.") and used - {"/".join(name.split(".")[:2]), "app"}
    }
    assert strays == {}, "a page's view used by another page"


def test_kept_modules_are_no_pages_code():
    """An exception to the rule above is a module no page and not app.py reaches (a template
    read as text, the launcher run with -m): a reason in words cannot keep one page's view in
    ui/ (the Class page's view sat in ui/live so), nor outlive the module's last lonely day."""
    users = _users()
    reached = {name: sorted(users[name]) for name in KEPT if users.get(name)}
    assert reached == {}, "kept in ui/ though imported: drop each from KEPT (or move it)"


def _folder(module: str) -> str | None:
    """The project folder a module sits in, as issue 40 counts them: ln_core whole, each
    folder under teaching/ and ui/ on its own (teaching/quiz, ui/draw, ...), teaching's own
    modules as teaching; None for pages/ and what is not the project's."""
    parts = module.split(".")
    if parts[0] == "ln_core":
        return "ln_core"
    if parts[0] not in {"teaching", "ui"} or len(parts) < 2:
        return None
    return "/".join(parts[:2]) if (ROOT / parts[0] / parts[1]).is_dir() else parts[0]


def fan_out(script: Path) -> set[str]:
    """The project folders a page script imports from, itself or through the modules beside
    it (pages/<name>/*.py): how many places a reader opens to follow one page."""
    folders: set[str] = set()
    todo, seen = [script], set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports(path):
            beside = ROOT.joinpath(*name.split(".")).with_suffix(".py")
            if name.startswith("pages.") and beside.parent == script.parent and beside.exists():
                todo.append(beside)
            folders |= {_folder(name)} - {None}
    return folders


# Each page's fan-out at most: none may grow, and a ceiling comes down when a page's does
# (issue 40: the Stepper's was 10, the Jacobian's 7).
FAN_OUT = {
    "pages/home/home.py": 4,
    "pages/inputs/inputs.py": 5,
    "pages/stepper/stepper.py": 8,
    "pages/jacobian/jacobian.py": 5,
    "pages/gradcheck/gradcheck.py": 5,
    "pages/audit/audit.py": 5,
    "pages/derive/derive.py": 6,
    "pages/residual/residual.py": 4,
    "pages/batchnorm/batchnorm.py": 5,
    "pages/export/export.py": 6,
    # 1 while its view sat in ui/live (ui/live/teacher.py); beside it, the view's imports count.
    "pages/teach/class.py": 3,
}


def test_no_pages_fan_out_grows():
    """A page reads from no more project folders than it did: a new import from another
    folder is a reason to ask whether that code belongs beside the page or in the folder it
    already uses. `python tests/rules/test_rules.py` prints each page's folders."""
    assert sorted(FAN_OUT) == sorted(SCRIPTS), "every page registered in app.py has a ceiling"
    grown = {
        script: sorted(fan_out(ROOT / script))
        for script, most in FAN_OUT.items()
        if len(fan_out(ROOT / script)) > most
    }
    assert grown == {}, "a page imports from more project folders than its ceiling in FAN_OUT"


if __name__ == "__main__":
    for script in SCRIPTS:
        folders = sorted(fan_out(ROOT / script))
        print(f"{script:32} {len(folders):2}  {' '.join(folders)}")
