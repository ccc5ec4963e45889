"""The install is reproducible: constraints.txt pins what CI tested, and every install uses it.

What the lab takes from Streamlit's private parts is checked in test_streamlit_private.py.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "ui" / "export" / "cells"  # notebook cells, run in Jupyter, not the app
REQUIREMENT_FILES = ("requirements.txt", "requirements-dev.txt", "requirements-bench.txt")
INSTALLERS = ("run.sh", "test.sh", "bench/run.sh")


def _requirements(name: str) -> list[Requirement]:
    found = []
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            found += _requirements(line[3:].strip())
        elif line:
            found.append(Requirement(line))
    return found


def _pins() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")  # anything but an exact pin fails here
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_constraints_pin_every_requirement_exactly_within_its_range() -> None:
    pins = _pins()
    for requirement in {r.name: r for f in REQUIREMENT_FILES for r in _requirements(f)}.values():
        pinned = pins.get(canonicalize_name(requirement.name))
        assert pinned is not None, f"{requirement.name} is not pinned in constraints.txt"
        assert requirement.specifier.contains(pinned), f"{requirement} excludes pin {pinned}"


def test_the_installed_app_libraries_are_the_pinned_ones() -> None:
    pins = _pins()
    for requirement in _requirements("requirements-dev.txt"):
        installed = Version(metadata.version(requirement.name))
        assert installed == pins[canonicalize_name(requirement.name)], (
            f"{requirement.name} {installed} is installed but constraints.txt pins "
            f"{pins[canonicalize_name(requirement.name)]}: update and re-test, or reinstall"
        )


def test_every_install_command_uses_the_constraints() -> None:
    for script in INSTALLERS:
        installs = re.findall(r"pip install .*", (ROOT / script).read_text())
        assert installs, f"{script} installs nothing"
        assert all("-c constraints.txt" in line for line in installs), (script, installs)


def test_the_launcher_starts_without_a_warning() -> None:
    """What ./run.sh imports before Streamlit's runtime exists (the launcher, the app it
    serves) declares no cache: Streamlit checks a cache's limits where it is declared and,
    with no runtime, warns once per cache (twenty "No runtime found" lines greeted every
    start)."""
    started = subprocess.run(
        [sys.executable, "-c", "import ui.server.launch, deploy.asgi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "WARNING" not in started.stderr and "No runtime" not in started.stderr, started.stderr


def test_every_library_the_app_imports_is_named_in_requirements() -> None:
    """A library the app imports itself is a requirement of its own, not something that comes
    with another (pyarrow and Pillow arrive with Streamlit, but the lab uses them directly)."""
    named = {canonicalize_name(r.name) for r in _requirements("requirements.txt")}
    files = [ROOT / "app.py", ROOT / "deploy" / "asgi.py"]
    for folder in ("pages", "ui", "ln_core", "teaching"):
        files += (ROOT / folder).rglob("*.py")
    assert _unnamed_imports([f for f in files if TEMPLATES not in f.parents], named) == set()


def test_every_library_a_notebook_imports_is_named_in_the_dev_requirements() -> None:
    """The notebook templates (ui/export/cells) run in a student's Jupyter, not in the app: what
    they import is what tests/notebooks executes them with (requirements-dev.txt)."""
    named = {canonicalize_name(r.name) for r in _requirements("requirements-dev.txt")}
    templates = sorted(TEMPLATES.glob("*.py"))
    assert len(templates) >= 3, templates
    assert _unnamed_imports(templates, named) == set()


def _unnamed_imports(files: list[Path], named: set[str]) -> set[str]:
    """'library (distribution) in file' for each import of a library no name in `named` installs."""
    distributions = metadata.packages_distributions()
    missing = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                dists = {canonicalize_name(d) for d in distributions.get(top, [])}
                if dists and not dists & named:
                    missing.add(f"{top} ({', '.join(sorted(dists))}) in {path.relative_to(ROOT)}")
    return missing
