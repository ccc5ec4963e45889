"""N LayerNorm Lab processes behind HAProxy on one port, each browser kept on one process.

    python -m deploy.replicas 2 --port 8501        (what `./run.sh --replicas 2` starts)
    python -m deploy.replicas auto                 (`./run.sh --replicas auto`: one per core)

Streamlit keeps a session's state, and the files its download buttons serve, in the memory of
the process that holds the session's websocket. So the balancer must send every request of a
browser to the same process: HAProxy (Debian's package) sets a cookie naming the process on the
first response, and the page, its websocket, its downloads and its reconnects all carry it.
The processes share one cookie secret, so a browser moved to another process (its own process
stopped) is still accepted there, with fresh state.

An app process that dies is started again on its port (`revive`, every REVIVE_S seconds while
the replicas run): HAProxy's health check sees it answer and sends browsers to it again.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from deploy.processes import HOST, free_port, healthy, stop

ROOT = Path(__file__).resolve().parents[1]
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
COOKIE = "lnlab_replica"
BALANCER_ENV = "LNLAB_BALANCER"  # "<processes> <address> <port>" of the HAProxy in front
REVIVE_S = 1.0  # how often a running set of replicas looks for a process that died
# Script runs hold the GIL, so a process uses at most one core and processes beyond the cores
# only share them (and cost ~200 MB each). Twice the cores is allowed, more is a typo.
PER_CORE_MAX = 2
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # cgroup v2: "<quota> <period>" or "max <period>"


def usable_cores(cpu_max: Path = CPU_MAX) -> int:
    """The cores this process may run on: its affinity mask, lowered by a cgroup CPU quota.

    A container often sees every core of its host but may only use its quota of them.
    """
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:  # macOS has no affinity mask
        cores = os.cpu_count() or 1
    with contextlib.suppress(OSError, ValueError):
        quota, period = cpu_max.read_text().split()
        if quota != "max":
            # 1.5 cores of quota still run 2 processes faster than 1.
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    return cores


def replica_count(text: str, cores: int) -> int:
    """How many app processes `text` asks for: "auto" (one per core) or a whole number.

    Raises ValueError with a message for the person who typed it.
    """
    wanted, most = text.strip().lower(), PER_CORE_MAX * cores
    if wanted == "auto":
        return cores
    if not re.fullmatch(r"-?[0-9]{1,6}", wanted):
        raise ValueError(
            f"--replicas {text!r}: give a whole number of processes from 1 to {most}, like 2, "
            "or auto for one per core"
        )
    count = int(wanted)
    if count < 1:
        raise ValueError(f"--replicas {count}: at least 1 process (or auto: one per core)")
    if count > most:
        raise ValueError(
            f"--replicas {count}: this machine has {cores} core{'s' * (cores > 1)}, so at most "
            f"{most} processes ({PER_CORE_MAX} per core; each uses one core at most). "
            "Use --replicas auto for one per core."
        )
    return count


def listen_problem(address: str, port: int) -> str | None:
    """Why HAProxy could not listen on address:port (in use, no such address), or None.

    Checked before the app processes start, which takes them many seconds.
    """
    with socket.socket() as sock:
        # As HAProxy does: a port whose last connections are still closing is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError as err:
            return err.strerror or str(err)
    return None


def haproxy_config(address: str, port: int, apps: list[str]) -> str:
    """The balancer's configuration: one front port, one cookie-sticky backend of `apps`
    ("host:port" each: 127.0.0.1 here, the app hosts' addresses on a cluster).

    A process the health check finds down has its websockets closed (on-marked-down): a
    browser whose host vanished without closing them (a cut link, a dead machine) would
    otherwise wait on them for good; closed, it reconnects, and its cookie naming a process
    that is down is ignored, so it lands on one that answers."""
    servers = "\n".join(
        f"    server app{i} {app} cookie app{i} check on-marked-down shutdown-sessions"
        for i, app in enumerate(apps)
    )
    return f"""global
    maxconn 4096

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    # A websocket stays open for a whole lesson.
    timeout tunnel 8h
    # A health check's connection must open within its interval (2 s: a host that does not
    # answer is gone), but a process may take 10 s to reply, busy with a class: marked down,
    # it would have all its websockets closed (on-marked-down below).
    timeout check 10s

frontend lab
    bind {address}:{port}
    default_backend apps

backend apps
    balance roundrobin
    cookie {COOKIE} insert indirect nocache httponly
    option httpchk GET /_stcore/health
{servers}
"""


def app_command(address: str, port: int) -> list[str]:
    """One app process (what ./run.sh runs), listening on address:port."""
    return [sys.executable, "-m", "ui.server.launch", f"--server.port={port}",
            f"--server.address={address}"]  # fmt: skip


def app_env(secret: str, extra: dict[str, str]) -> dict[str, str]:
    """An app process's extra environment: `extra` and the cookie secret every process shares
    (Streamlit takes it only from its config or the environment)."""
    return {**extra, "STREAMLIT_SERVER_COOKIE_SECRET": secret}


class Replicas:
    """`count` app processes on free local ports and HAProxy on `port`, for a `with` block.

    Every process runs in its own process group and is stopped by its id on exit.
    """

    def __init__(
        self,
        count: int,
        port: int = 0,
        address: str = "127.0.0.1",
        ready_s: float = 120.0,
        env: dict[str, str] | None = None,
    ) -> None:
        """`env`: extra environment for the app processes (e.g. LNLAB_CLASS_DB, one database)."""
        if count < 1:
            raise ValueError("at least one replica")
        self.port = port or free_port()
        self.address, self.ready_s = address, ready_s
        self.app_ports = [free_port() for _ in range(count)]
        self.apps: list[subprocess.Popen] = []
        self.balancer: subprocess.Popen | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="lnlab-replicas-")
        self._logs: list = []
        self._secret = secrets.token_hex(16)
        self._env = env or {}

    @property
    def app_pids(self) -> list[int]:
        return [p.pid for p in self.apps]

    def _spawn(
        self, command: list[str], name: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen:
        log = open(Path(self._dir.name) / f"{name}.log", "a")
        self._logs.append(log)
        return subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )

    def start(self) -> Replicas:
        self.apps = [self._start_app(i) for i in range(len(self.app_ports))]
        # The balancer starts once every process answers: its first health checks then pass,
        # instead of marking processes down that it would take a few seconds to bring back.
        self._wait(self.app_ports)
        config = Path(self._dir.name) / "haproxy.cfg"
        apps = [f"{HOST}:{p}" for p in self.app_ports]
        config.write_text(haproxy_config(self.address, self.port, apps))
        self.balancer = self._spawn([HAPROXY, "-db", "-f", str(config)], "haproxy")
        self._wait([self.port])
        return self

    def _start_app(self, index: int) -> subprocess.Popen:
        command = app_command(HOST, self.app_ports[index])
        # Where browsers reach the app (HAProxy's address and port, not this process's), for
        # the links and the restart command the app shows (ui/session/address.py).
        balancer = {BALANCER_ENV: f"{len(self.app_ports)} {self.address} {self.port}"}
        return self._spawn(command, f"app{index}", app_env(self._secret, {**self._env, **balancer}))

    def revive(self) -> list[int]:
        """Start again every app process that has exited; returns their indexes.

        Does not wait for them: the balancer's health check takes them back once they answer.
        """
        dead = [i for i, proc in enumerate(self.apps) if proc.poll() is not None]
        for index in dead:
            self.apps[index] = self._start_app(index)
        return dead

    def restart(self, index: int) -> None:
        """Stop one app process and start it again on its port, as after a crash."""
        stop(self.apps[index])
        self.apps[index] = self._start_app(index)
        self._wait([self.app_ports[index]])

    def _wait(self, ports: list[int]) -> None:
        deadline = time.monotonic() + self.ready_s
        waiting = list(ports)
        while waiting:
            if time.monotonic() > deadline:
                raise RuntimeError(f"not healthy after {self.ready_s:.0f} s: ports {waiting}")
            for proc in [*self.apps, self.balancer]:
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(f"{proc.args[0]} exited: {self.logs()}")
            waiting = [p for p in waiting if not healthy(p)]
            time.sleep(0.3)

    def logs(self) -> str:
        return "\n".join(
            f"== {path.name}\n{path.read_text(errors='replace')[-2000:]}"
            for path in sorted(Path(self._dir.name).glob("*.log"))
        )

    def stop(self) -> None:
        for proc in [self.balancer, *self.apps]:
            if proc is not None:
                stop(proc)

    def __enter__(self) -> Replicas:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.stop()
        for log in self._logs:
            log.close()
        self._dir.cleanup()


@dataclass(frozen=True)
class Options:
    count: int
    port: int
    address: str
    auto: bool  # the count was "auto": one process per core


def parse_options(argv: list[str] | None, cores: int) -> Options:
    """The command line, checked; a clear message and exit status 2 for anything wrong."""
    parser = argparse.ArgumentParser(
        prog="./run.sh --replicas", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "count", metavar="N", help="how many app processes: a whole number, or auto (one per core)"
    )
    parser.add_argument("--port", type=int, default=8501, help="the one port browsers open")
    parser.add_argument(
        "--address", default="127.0.0.1", help="0.0.0.0 opens it to the classroom network"
    )
    args = parser.parse_args(argv)
    try:
        count = replica_count(args.count, cores)
    except ValueError as err:
        parser.error(str(err))
    if not 1 <= args.port <= 65535:
        parser.error(f"--port {args.port}: a port from 1 to 65535, like 8501")
    return Options(count, args.port, args.address, args.count.strip().lower() == "auto")


def main(argv: list[str] | None = None) -> None:
    options = parse_options(argv, usable_cores())
    problem = listen_problem(options.address, options.port)
    if problem:
        sys.exit(
            f"cannot listen on {options.address}:{options.port} ({problem}): is the lab already "
            "running? Stop it, or choose another port, like --port 8502"
        )
    # Until every process answers, a SIGTERM interrupts the start as Ctrl-C does, and the
    # start stops what it had started (Replicas.__enter__) instead of leaving it running.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with Replicas(options.count, options.port, options.address) as replicas:
            serve(replicas, options)
    except KeyboardInterrupt:
        sys.exit("stopped while starting")
    except RuntimeError as err:
        sys.exit(f"could not start: {err}")


def serve(replicas: Replicas, options: Options) -> None:
    """Announce the address, then start again any process that stops, until Ctrl-C or SIGTERM."""
    per_core = " (one per core)" if options.auto else ""
    print(
        f"LayerNorm Lab: {options.count} process{'es' * (options.count > 1)}{per_core} "
        f"behind HAProxy at http://{options.address}:{replicas.port} (Ctrl-C stops them all)",
        flush=True,
    )
    # A handler, not a blocked signal mask: processes started again later inherit a mask
    # and would then ignore the SIGTERM that stops them; handlers reset at exec.
    stopped: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, _frame: stopped.append(signum))
    signal.signal(signal.SIGTERM, lambda signum, _frame: stopped.append(signum))
    while not stopped:
        for index in replicas.revive():
            print(f"app{index} had stopped: started again on its port", flush=True)
        time.sleep(REVIVE_S)
    print(f"stopping ({signal.Signals(stopped[0]).name})")


if __name__ == "__main__":
    main()
