"""The live class's store against real databases: a SQLite file and a PostgreSQL server.

`pg_url` starts Debian's PostgreSQL 15 once per test session (initdb + pg_ctl in a temporary
folder, on a free port, listening on 127.0.0.1 only) and stops it at the end. PostgreSQL
refuses to run as root, so as root (CI) it runs as the `postgres` user, created if missing.
Without the server the tests skip with the reason, unless LNLAB_REQUIRE_POSTGRES=1 (set by
.ci/run), which makes it a failure. `store_url` runs a test once on each database, each time
on a fresh, empty database.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from deploy.processes import free_port  # noqa: E402

# Debian's postgresql package puts its server in /usr/lib/postgresql/<major>/bin (15 on
# bookworm); the newest installed is used.
PG_BIN = max(
    Path("/usr/lib/postgresql").glob("*/bin"),
    key=lambda folder: int(folder.parent.name) if folder.parent.name.isdigit() else 0,
    default=Path("/usr/lib/postgresql/15/bin"),
)
PG_USER = "postgres"
_names = itertools.count()


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", PG_USER, "--", *command] if os.geteuid() == 0 else command


def _ensure_user() -> None:
    if os.geteuid() != 0:
        return
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", PG_USER], check=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[tuple[int, str]]:
    """(port, folder) of a running PostgreSQL server that accepts user lnlab without password."""
    if not (PG_BIN / "pg_ctl").exists():
        reason = f"no PostgreSQL at {PG_BIN} (apt-get install postgresql)"
        if os.environ.get("LNLAB_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{reason}; CI installs it", pytrace=False)
        pytest.skip(reason)
    _ensure_user()
    folder = tempfile.mkdtemp(prefix="lnlab-pg-")
    if os.geteuid() == 0:
        shutil.chown(folder, PG_USER)
    data = Path(folder) / "data"
    port = free_port()

    def pg(*args: str) -> None:
        subprocess.run(_as_postgres([str(PG_BIN / args[0]), *args[1:]]), check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip

    try:
        pg("initdb", "-D", str(data), "-U", "lnlab", "-A", "trust", "--no-sync")
        settings = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        pg("pg_ctl", "-D", str(data), "-l", f"{folder}/log", "-w", "-o", settings, "start")
        yield port, folder
    finally:
        if (data / "postmaster.pid").exists():
            pg("pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def _new_pg_database(port: int, folder: str, name: str) -> str:
    subprocess.run(
        _as_postgres(
            [str(PG_BIN / "createdb"), "-h", folder, "-p", str(port), "-U", "lnlab", name]
        ),
        check=True,
    )
    return f"postgresql+psycopg://lnlab@127.0.0.1:{port}/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database's URL, once on SQLite (a file) and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    port, folder = request.getfixturevalue("pg_server")
    return _new_pg_database(port, folder, f"lnlab_{next(_names)}")
