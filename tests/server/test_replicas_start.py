"""`./run.sh --replicas N|auto`: the count is checked with a message a teacher understands,
auto starts one process per usable core behind HAProxy (real processes, real HAProxy), and a
stop during the start leaves nothing running."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
from pathlib import Path

import pytest
from replica_kit import alive, app_ports, health_reply, require_haproxy, supervisor, wait

from deploy.processes import free_port, stop
from deploy.replicas import PER_CORE_MAX, main, parse_options, replica_count, usable_cores

ROOT = Path(__file__).resolve().parents[2]
START_S = 180  # N cold app processes on a busy 2-core machine, with margin


@pytest.mark.parametrize(
    ("text", "cores", "count"),
    [("auto", 2, 2), ("auto", 1, 1), (" AUTO ", 8, 8), ("1", 2, 1), ("2", 2, 2), ("4", 2, 4)],
)
def test_a_count_is_a_whole_number_or_auto(text, cores, count):
    assert replica_count(text, cores) == count


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("0", "at least 1 process"),
        ("-1", "at least 1 process"),
        ("abc", "whole number of processes from 1 to 4, like 2, or auto"),
        ("2.5", "whole number"),
        ("", "whole number"),
        ("1e3", "whole number"),
        ("\u0662", "whole number"),  # an Arabic-Indic 2: int() would take it
        ("5", "at most 4 processes"),
        ("99999999", "from 1 to 4"),
    ],
)
def test_a_bad_count_is_refused_with_what_to_type(text, says):
    with pytest.raises(ValueError) as refused:
        replica_count(text, cores=2)
    message = str(refused.value)
    assert says in message and message.startswith("--replicas ")


def test_the_cap_is_per_core():
    assert replica_count(str(PER_CORE_MAX * 3), cores=3) == PER_CORE_MAX * 3
    with pytest.raises(ValueError, match="this machine has 3 cores"):
        replica_count(str(PER_CORE_MAX * 3 + 1), cores=3)


@pytest.mark.parametrize(
    ("cpu_max", "cores"),
    [
        (None, None),  # no cgroup v2 file: the affinity mask alone
        ("max 100000\n", None),  # no quota
        ("50000 100000\n", 1),  # half a core still runs one process
        ("150000 100000\n", 2),  # 1.5 cores run two processes faster than one
        ("not a quota\n", None),  # unreadable: the affinity mask alone
    ],
)
def test_usable_cores_follow_the_affinity_mask_and_a_cgroup_quota(tmp_path, cpu_max, cores):
    affinity = len(os.sched_getaffinity(0))
    path = tmp_path / "cpu.max"
    if cpu_max is not None:
        path.write_text(cpu_max)
    assert usable_cores(path) == min(affinity, cores or affinity)


def test_the_command_line_refuses_with_a_message_not_a_traceback(capsys):
    for argv in (["0"], ["-1"], ["abc"], ["9999"], ["2", "--port", "0"], ["2", "--port", "x"]):
        with pytest.raises(SystemExit) as stopped:
            parse_options(argv, cores=2)
        assert stopped.value.code == 2
        error = capsys.readouterr().err
        assert "./run.sh --replicas: error:" in error and "Traceback" not in error, error
    options = parse_options(["auto", "--port", "8600"], cores=2)
    assert (options.count, options.port, options.auto) == (2, 8600, True)
    assert parse_options(["2"], cores=2).port == 8501


def test_a_port_in_use_is_said_before_any_process_starts():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as stopped:
            main(["1", "--port", str(port)])
    assert f"cannot listen on 127.0.0.1:{port}" in str(stopped.value.code)
    assert "--port 8502" in str(stopped.value.code)


def test_run_sh_hands_replicas_to_deploy_replicas(tmp_path):
    # run.sh as shipped, with stand-ins for python3 and the venv's python that print their
    # arguments: what run.sh routes where, without installing anything.
    (tmp_path / "run.sh").write_text((ROOT / "run.sh").read_text())
    stub = '#!/bin/sh\necho "$*"\n'
    for path in (tmp_path / "bin" / "python3", tmp_path / ".venv" / "bin" / "python"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(stub)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}

    def last_line(*args: str) -> str:
        done = subprocess.run(
            ["bash", str(tmp_path / "run.sh"), *args], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()[-1]

    assert last_line("--replicas", "auto", "--port", "8600") == (
        "-m deploy.replicas auto --port 8600"
    )
    assert last_line("--replicas=auto") == "-m deploy.replicas auto"
    assert last_line("--replicas", "abc") == "-m deploy.replicas abc"  # checked there
    assert last_line("--server.port=8600") == "-m ui.server.launch --server.port=8600"


def test_replicas_auto_starts_one_process_per_core_behind_the_balancer():
    require_haproxy()
    cores = usable_cores()
    port = free_port()
    group = supervisor("auto", "--port", str(port))
    try:
        ready = group.stdout.readline() if group.stdout else ""
        assert f": {cores} process" in ready and "(one per core) behind HAProxy" in ready, ready
        apps = app_ports(group.pid)
        assert len(apps) == cores, apps
        # Browsers without a cookie are dealt to the processes in turn: each one serves.
        dealt = {health_reply(port) for _ in range(2 * cores)}
        assert dealt == {(200, f"app{i}") for i in range(cores)}, dealt
    finally:
        stop(group)
    wait(lambda: not any(alive(pid) for pid in apps), 30, "all stopped")


def test_a_stop_during_the_start_stops_what_was_started():
    require_haproxy()
    group = supervisor("2", "--port", str(free_port()))
    try:
        wait(lambda: len(app_ports(group.pid)) == 2, START_S, "both app processes spawned")
        apps = list(app_ports(group.pid))
        # SIGTERM to the supervisor alone (as `timeout` or a service manager sends it) while
        # the app processes are still starting.
        os.kill(group.pid, signal.SIGTERM)
        output, _ = group.communicate(timeout=60)
    finally:
        stop(group)
    assert "behind HAProxy" not in output, output  # it was still starting
    assert "stopped while starting" in output, output
    assert group.returncode != 0
    wait(lambda: not any(alive(pid) for pid in apps), 30, "no app process left running")
