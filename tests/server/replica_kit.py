"""What the replica tests share: a real `python -m deploy.replicas` supervisor (what
`./run.sh --replicas` runs), the app processes it runs, and requests through its HAProxy."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from deploy.replicas import COOKIE, HAPROXY

ROOT = Path(__file__).resolve().parents[2]


def require_haproxy() -> None:
    """Skip without haproxy, except in CI (LNLAB_REQUIRE_BROWSER=1), where it must be there."""
    if shutil.which("haproxy") or os.access(HAPROXY, os.X_OK):
        return
    if os.environ.get("LNLAB_REQUIRE_BROWSER") == "1":
        pytest.fail("no haproxy; CI installs it", pytrace=False)
    pytest.skip("no haproxy (apt-get install haproxy)")


def supervisor(*args: str) -> subprocess.Popen:
    """`python -m deploy.replicas *args` in its own process group, its output on stdout."""
    return subprocess.Popen(
        [sys.executable, "-m", "deploy.replicas", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def app_ports(supervisor_pid: int) -> dict[int, int]:
    """pid -> port of every app process the supervisor runs."""
    found = {}
    for child in children(supervisor_pid):
        command = Path(f"/proc/{child}/cmdline").read_text().replace("\0", " ")
        match = re.search(r"--server\.port=(\d+)", command)
        if match:
            found[child] = int(match.group(1))
    return found


def health_reply(port: int, replica: str = "") -> tuple[int, str]:
    """(status, the replica cookie HAProxy set) of a health check through the balancer;
    `replica` sends a cookie naming a process, as a browser pinned to it does. (0, "") if none."""
    headers = {"Cookie": f"{COOKIE}={replica}"} if replica else {}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/_stcore/health", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=3) as reply:
            cookie = " ".join(reply.headers.get_all("Set-Cookie") or [])
            match = re.search(rf"{COOKIE}=(\w+)", cookie)
            return reply.status, match.group(1) if match else ""
    except OSError:
        return 0, ""


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def wait(condition: Callable[[], bool], seconds: float, what: str) -> float:
    """Seconds until condition() held; AssertionError naming `what` after `seconds`."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > seconds:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(0.5)
    return time.monotonic() - start
