"""`python -m deploy.replicas 2` starts again a process that dies, and HAProxy sends browsers
to it again (real processes, real HAProxy)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from deploy.processes import free_port, healthy, stop
from deploy.replicas import COOKIE, HAPROXY

ROOT = Path(__file__).resolve().parents[2]
BACK_WITHIN_S = 120  # a cold start of one app process on a busy 2-core machine, with margin


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _app_ports(supervisor: int) -> dict[int, int]:
    """pid -> port of every app process the supervisor runs."""
    found = {}
    for child in _children(supervisor):
        command = Path(f"/proc/{child}/cmdline").read_text().replace("\0", " ")
        match = re.search(r"--server\.port=(\d+)", command)
        if match:
            found[child] = int(match.group(1))
    return found


def _through_balancer(port: int, replica: str) -> bool:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/_stcore/health", headers={"Cookie": f"{COOKIE}={replica}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=3) as reply:
            return reply.status == 200
    except OSError:
        return False


def _wait(condition, seconds: float, what: str) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > seconds:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(0.5)
    return time.monotonic() - start


def test_a_replica_that_dies_is_started_again_and_rejoins_the_balancer():
    if not (shutil.which("haproxy") or os.access(HAPROXY, os.X_OK)):
        if os.environ.get("LNLAB_REQUIRE_BROWSER") == "1":
            pytest.fail("no haproxy; CI installs it", pytrace=False)
        pytest.skip("no haproxy (apt-get install haproxy)")
    port = free_port()
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "deploy.replicas", "2", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        # Its first line comes once every process answers and the balancer is up: a process
        # killed before then fails the start itself, not the supervision this test is about.
        ready = supervisor.stdout.readline() if supervisor.stdout else ""
        assert "processes behind HAProxy" in ready, ready
        _wait(lambda: all(healthy(p) for p in _app_ports(supervisor.pid).values()), 180, "apps")
        (victim, victim_port), _ = sorted(_app_ports(supervisor.pid).items(), key=lambda i: i[1])
        os.killpg(victim, signal.SIGKILL)  # a crash: no clean shutdown

        def back() -> bool:
            ports = _app_ports(supervisor.pid)
            return victim not in ports and victim_port in ports.values() and healthy(victim_port)

        try:
            took = _wait(back, BACK_WITHIN_S, "the dead replica started again")
            # The balancer's health check takes it back: both cookies reach a working process.
            _wait(lambda: all(_through_balancer(port, f"app{i}") for i in (0, 1)), 30, "rejoined")
        except AssertionError as err:
            stop(supervisor)
            said = supervisor.stdout.read() if supervisor.stdout else ""
            raise AssertionError(f"{err}; the supervisor said:\n{said}") from err
        print(f"replica back and healthy after {took:.1f} s")
        running = list(_app_ports(supervisor.pid))
    finally:
        stop(supervisor)
    # Stopping the replicas stops the process started again too (none is left serving).
    _wait(lambda: not any(Path(f"/proc/{pid}").exists() for pid in running), 30, "all stopped")
    output = supervisor.stdout.read() if supervisor.stdout else ""
    assert "had stopped: started again on its port" in output, output
