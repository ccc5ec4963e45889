"""The image deploy/Containerfile describes, and the server it runs, shared by the deploy tests.

`image` lays out the files the Containerfile's COPY lines name (tests/deploy/image_kit.py), once
per run; `served` runs the image's own command from them, as the image's user, on 127.0.0.1
and a free port, and stops it afterwards. The repository root goes on sys.path for bench's
websocket client and deploy.processes; this folder for image_kit.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for _path in (ROOT, Path(__file__).resolve().parent):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import image_kit  # noqa: E402

from deploy.processes import HOST, free_port, healthy, stop  # noqa: E402

READY_S = 120.0  # a loaded machine's cold start, with the heavy imports before the health check


@dataclass(frozen=True)
class Served:
    """The image's command running from its files: on `port`, its output in `log`."""

    image: image_kit.Image
    port: int
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="session")
def image() -> Iterator[image_kit.Image]:
    built = image_kit.build(image_kit.read())
    try:
        yield built
    finally:
        image_kit.remove(built)


def _command(image: image_kit.Image, port: int) -> list[str]:
    """The Containerfile's CMD, with this venv's interpreter for the image's `python` and
    loopback with a free port for the address and port the image listens on."""
    program, *args = image.recipe.command
    assert program == "python", image.recipe.command
    moved = {"--server.address": HOST, "--server.port": str(port)}
    args = [a for a in args if a.split("=")[0] not in moved]
    return [sys.executable, *args, *(f"{k}={v}" for k, v in moved.items())]


@pytest.fixture(scope="session")
def served(image: image_kit.Image) -> Iterator[Served]:
    port = free_port()
    with tempfile.NamedTemporaryFile("w+", prefix="lnlab-image-", suffix=".log") as log:
        proc = subprocess.Popen(
            image.command(_command(image, port)),
            cwd=image.workdir,
            env=image.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        server = Served(image, port, Path(log.name))
        try:
            started = time.monotonic()
            while not healthy(port):
                assert proc.poll() is None, f"the image's command exited:\n{server.output()}"
                assert time.monotonic() - started < READY_S, f"never healthy:\n{server.output()}"
                time.sleep(0.5)
            yield server
        finally:
            stop(proc)
