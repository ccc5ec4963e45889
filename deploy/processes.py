"""The processes LayerNorm Lab starts for itself: a free port, a health check, a clean stop.

Shared by deploy/replicas.py (N app processes and HAProxy) and bench/local_server.py (one fresh
server for a benchmark or a test). Every process is started in its own process group, so a stop
ends it and anything it started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import urllib.request

HOST = "127.0.0.1"  # loopback only, always


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def healthy(port: int, host: str = HOST) -> bool:
    """Whether the Streamlit server on host:`port` answers its health check with ok."""
    with contextlib.suppress(OSError):
        url = f"http://{host}:{port}/_stcore/health"
        with urllib.request.urlopen(url, timeout=2) as reply:
            return reply.status == 200 and reply.read().strip() == b"ok"
    return False


def stop(proc: subprocess.Popen) -> None:
    """End a process we started, and its process group: politely, then by force after 10 s."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
