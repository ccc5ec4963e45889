"""Tests against a real LayerNorm Lab server, spoken to over Streamlit's websocket protocol.

`fresh_server` starts a new server on a free port for one test (never shared, so each test
sees a cold start) and stops it afterwards; the test's parameter `launcher` says how it is
started: True for `python -m ui.server.launch` (what ./run.sh runs), False for plain
`streamlit run app.py`. The repository root goes on sys.path so tests can import bench's
client (bench.ws_client, bench.local_server); this folder goes on it for replica_kit.py.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The root for bench and deploy; this folder for replica_kit.py.
for _path in (ROOT, Path(__file__).resolve().parent):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from bench.local_server import LocalServer  # noqa: E402


@pytest.fixture(params=[False, True], ids=["streamlit-run", "run.sh-launcher"])
def fresh_server(request: pytest.FixtureRequest) -> Iterator[LocalServer]:
    with LocalServer(launcher=request.param) as server:
        yield server
