"""Debian's PostgreSQL server for the tests: made in a folder, started, stopped, started again.

Used by conftest.py (one server on 127.0.0.1 for the store's tests) and test_cluster.py (one on
the database host of a cluster made of network namespaces, run there by `ip netns exec`).
PostgreSQL refuses to run as root, so as root (CI) it runs as the `postgres` user, created if
missing. Every client is trusted without a password (user lnlab): these servers hold only what
a test writes and listen only where the test says.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass
from ipaddress import ip_interface
from pathlib import Path

import pytest

# Debian's postgresql package puts its server in /usr/lib/postgresql/<major>/bin (15 on
# bookworm); the newest installed is used.
PG_BIN = max(
    Path("/usr/lib/postgresql").glob("*/bin"),
    key=lambda folder: int(folder.parent.name) if folder.parent.name.isdigit() else 0,
    default=Path("/usr/lib/postgresql/15/bin"),
)
PG_USER = "postgres"


def require_postgres() -> None:
    """Skip without PostgreSQL's server, except in CI (LNLAB_REQUIRE_POSTGRES=1): a failure."""
    if not (PG_BIN / "pg_ctl").exists():
        reason = f"no PostgreSQL at {PG_BIN} (apt-get install postgresql)"
        if os.environ.get("LNLAB_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{reason}; CI installs it", pytrace=False)
        pytest.skip(reason)


def as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", PG_USER, "--", *command] if os.geteuid() == 0 else command


def _ensure_user() -> None:
    if os.geteuid() != 0:
        return
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", PG_USER], check=True)


@dataclass(frozen=True)
class Postgres:
    """A server's folder (its data, log and Unix socket), port and listening address; `inside`
    prefixes its commands (["ip", "netns", "exec", NAME] to run it on a namespace's host)."""

    folder: Path
    port: int
    address: str = "127.0.0.1"
    inside: tuple[str, ...] = ()

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def _run(self, *args: str) -> None:
        command = [*self.inside, *as_postgres([str(PG_BIN / args[0]), *args[1:]])]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=60)

    def create(self) -> None:
        """initdb, trusting user lnlab from anywhere it listens."""
        _ensure_user()
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, PG_USER)
        self._run("initdb", "-D", str(self.data), "-U", "lnlab", "-A", "trust", "--no-sync")
        with (self.data / "pg_hba.conf").open("a") as hba:
            # The clients' network: the server's /24 (its cluster's hosts).
            hba.write(f"host all lnlab {ip_interface(self.address + '/24').network} trust\n")

    def start(self) -> None:
        settings = (
            f"-p {self.port} -k {self.folder} -c listen_addresses={self.address} -c fsync=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", f"{self.folder}/log", "-w", "-o",
                  settings, "start")  # fmt: skip

    def stop(self) -> None:
        """A fast shutdown (open connections are closed), an immediate one if that fails;
        nothing if it is not running."""
        if (self.data / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def create_database(self, name: str) -> str:
        """A new database's SQLAlchemy URL (created over the Unix socket)."""
        self._run("createdb", "-h", str(self.folder), "-p", str(self.port), "-U", "lnlab", name)
        return f"postgresql+psycopg://lnlab@{self.address}:{self.port}/{name}"
