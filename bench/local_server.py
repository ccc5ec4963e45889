"""Start and stop a LayerNorm Lab server of our own on 127.0.0.1 and a free port.

    with LocalServer() as server:            # plain `streamlit run app.py`
        server.port, server.pid, server.rss_mb(), server.log()
    with LocalServer(launcher=True):         # `python -m ui.server.launch`, what ./run.sh starts

The server runs in its own process group, so stopping it ends it and anything it started, by
id. Used by the benchmarks and by tests/server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deploy.processes import HOST, free_port, healthy, stop

ROOT = Path(__file__).resolve().parent.parent
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


class LocalServer:
    """A fresh server for the lifetime of a `with` block; healthy when the block starts."""

    def __init__(
        self,
        launcher: bool = False,
        extra: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        ready_s: float = 90.0,
    ) -> None:
        self.launcher, self.extra, self.env, self.ready_s = launcher, extra, env, ready_s
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile(  # closed in close()
            "w+", prefix="lnlab-server-", suffix=".log"
        )

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def command(self) -> list[str]:
        target = (
            ["-m", "ui.server.launch"] if self.launcher else ["-m", "streamlit", "run", "app.py"]
        )
        return [
            sys.executable, *target,
            f"--server.port={self.port}",
            f"--server.address={HOST}",
            "--server.headless=true",
            "--browser.gatherUsageStats=false",
            *self.extra,
        ]  # fmt: skip

    def start(self) -> LocalServer:
        env = {**os.environ, **(self.env or {})}
        self.proc = subprocess.Popen(
            self.command(),
            cwd=ROOT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        self.wait_healthy()
        return self

    def wait_healthy(self) -> float:
        """Seconds until /_stcore/health answers ok; raises if the server dies or never does."""
        assert self.proc is not None
        start = time.monotonic()
        while time.monotonic() - start < self.ready_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited ({self.proc.returncode}):\n{self.log()}")
            if healthy(self.port):
                return time.monotonic() - start
            time.sleep(0.2)
        raise RuntimeError(f"server not healthy after {self.ready_s:.0f} s:\n{self.log()}")

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)

    def restart(self) -> None:
        """Stop and start again on the same port (a server restart, as a class would see it)."""
        self.stop()
        self.start()

    def log(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")

    def rss_mb(self) -> float:
        """Resident memory of the server process, in MiB."""
        fields = Path(f"/proc/{self.pid}/statm").read_text().split()
        return int(fields[1]) * PAGE_SIZE / 2**20

    def __enter__(self) -> LocalServer:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.stop()
        self._log.close()
