"""CI installs on a new machine: `.ci/run` asks apt for each missing package of
.ci/apt-packages, one at a time, and never for npm or Node.js (the machine's Node.js ships its
own npm, and Debian's npm conflicts with it: "held broken packages", exit 100)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _packages() -> list[str]:
    lines = (ROOT / ".ci" / "apt-packages").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_the_list_names_the_three_servers_and_never_node_or_npm() -> None:
    packages = _packages()
    assert {"chromium", "haproxy", "postgresql"} <= set(packages)
    assert not {"npm", "nodejs", "node"} & set(packages)


def test_ci_run_installs_only_from_the_list_one_package_at_a_time() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    installs = re.findall(r"apt-get install[^\n]*", script)
    assert len(installs) == 1 and '"$pkg"' in installs[0], installs
    assert "grep -vE '^\\s*(#|$)' .ci/apt-packages" in script


def test_a_dry_run_of_the_list_meets_no_conflict_on_this_machine() -> None:
    """`apt-get install -s` resolves without installing: conflicts, as a new machine would meet
    them, show here. Only where apt exists; CI (LNLAB_REQUIRE_BROWSER=1) always has it."""
    if shutil.which("apt-get") is None:
        if os.environ.get("LNLAB_REQUIRE_BROWSER") == "1":
            pytest.fail("no apt-get on a CI machine", pytrace=False)
        pytest.skip("no apt-get here (not a Debian machine)")
    dry = subprocess.run(
        ["apt-get", "install", "-s", *_packages()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
