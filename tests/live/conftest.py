"""The live class's store against real databases: a SQLite file and a PostgreSQL server.

`pg_server` starts Debian's PostgreSQL 15 once per test session (initdb + pg_ctl in a temporary
folder, on a free port, listening on 127.0.0.1 only; pg_kit.py) and stops it at the end.
Without the server the tests skip with the reason, unless LNLAB_REQUIRE_POSTGRES=1 (set by
.ci/run), which makes it a failure. `store_url` runs a test once on each database, each time
on a fresh, empty database.
"""

from __future__ import annotations

import itertools
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The root for deploy, bench and ui; this folder for pg_kit.py.
for _path in (ROOT, Path(__file__).resolve().parent):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from pg_kit import Postgres, require_postgres  # noqa: E402

from deploy.processes import free_port  # noqa: E402

_names = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Postgres]:
    """A running PostgreSQL server on 127.0.0.1 that accepts user lnlab without password."""
    require_postgres()
    server = Postgres(Path(tempfile.mkdtemp(prefix="lnlab-pg-")), free_port())
    try:
        server.create()
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database's URL, once on SQLite (a file) and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    server: Postgres = request.getfixturevalue("pg_server")
    return server.create_database(f"lnlab_{next(_names)}")
