"""Every command the app prints for its operator is run: a flag the app names must exist.

The Class page once told instructors to restart with `--address 0.0.0.0`, which Streamlit
answers with "No such option". The commands come from ui.session.address (the one place the
app words them); each is run as printed, through ./run.sh, with only the address changed to
127.0.0.1 (tests stay on this machine) and a free port, until it answers its health check.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

import pytest

from deploy.processes import free_port, healthy, stop
from ui.session.address import EVERY_INTERFACE, Listening

START_S = 120
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("replicas", [0, 2], ids=["one-server", "replicas"])
def test_the_restart_command_the_app_prints_starts_the_lab(replicas):
    port = free_port()
    printed = Listening("127.0.0.1", port, replicas).command(EVERY_INTERFACE[1])
    args = shlex.split(printed)
    assert args[0] == "./run.sh" and "0.0.0.0" in args
    args[args.index("0.0.0.0")] = "127.0.0.1"
    proc = subprocess.Popen(
        args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + START_S
        while not healthy(port) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert proc.poll() is None, f"{printed} stopped: {proc.stdout.read()[-2000:]}"
        assert healthy(port), f"{printed} did not answer within {START_S} s"
    finally:
        stop(proc)
