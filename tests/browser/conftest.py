"""Real-browser tests: `streamlit run app.py` on a free port, driven by Debian's Chromium.

Playwright never downloads a browser here: it launches /usr/bin/chromium by path. Without it
the tests skip with the reason, unless LNLAB_REQUIRE_BROWSER=1 (set by .ci/run), which makes
a missing browser a failure.

Fixtures: `browser` (one Chromium per session), `server` (one streamlit server per session,
warmed up, yields its base URL), `page` (a fresh context, so a fresh Streamlit session, per
test; on failure it saves screenshots/FAILED_<test>.png). Helpers live in
lnlab_browser_kit.py, which this file puts on sys.path (with the repository root).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
# The kit, and the repository root for what the kit shares with bench/ and deploy/.
for _path in (_HERE, _HERE.parents[1]):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import lnlab_browser_kit as kit  # noqa: E402

HEALTH_TIMEOUT_S = 60


def _unavailable(reason: str) -> None:
    """Skip, or fail when the environment says the browser tests must run."""
    if os.environ.get("LNLAB_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (LNLAB_REQUIRE_BROWSER=1, so this is a failure)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not os.access(kit.CHROMIUM, os.X_OK):
        _unavailable(f"no Chromium at {kit.CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(kit.CHROMIUM), headless=True, args=kit.CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


def _log_tail(log: Path, chars: int = 4000) -> str:
    text = log.read_text(errors="replace") if log.exists() else ""
    return text[-chars:] or "(empty)"


def _wait_healthy(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"streamlit exited with code {process.returncode} before it was healthy; "
                f"its output:\n{_log_tail(log)}",
                pytrace=False,
            )
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    pytest.fail(
        f"{url}/_stcore/health did not answer within {HEALTH_TIMEOUT_S} s; "
        f"streamlit's output:\n{_log_tail(log)}",
        pytrace=False,
    )


class Server(str):
    """The base URL (a str), plus the server's log file for failure messages."""

    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        return _log_tail(self.log, chars)


@pytest.fixture(scope="session")
def server(browser, tmp_path_factory) -> Iterator[Server]:
    """A streamlit server for app.py, warmed up, yielding its base URL."""
    port = kit.free_port()
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless=true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
    ]
    url = f"http://127.0.0.1:{port}"
    with log.open("w") as sink:
        process = subprocess.Popen(
            command,
            cwd=kit.ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        _wait_healthy(url, process, log)
        base = Server(url)
        base.log = log
        # One visit to the root pays for the first run's imports, so the tests see what every
        # later visitor sees.
        context = browser.new_context(viewport=kit.VIEWPORT)
        context.add_init_script(kit.INIT_SCRIPT)
        try:
            kit.open_page(context.new_page(), url, "")
        finally:
            context.close()
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.lnlab_failed = report.failed
    return report


@pytest.fixture
def page(browser, server, request) -> Iterator[object]:
    """A new browser context (so a new Streamlit session) with a 1440 x 900 viewport."""
    context = browser.new_context(viewport=kit.VIEWPORT)
    context.add_init_script(kit.INIT_SCRIPT)
    context.set_default_timeout(30_000)
    tab = context.new_page()
    tab.lnlab_js_errors = []
    tab.on("pageerror", lambda error: tab.lnlab_js_errors.append(str(error)))
    yield tab
    if getattr(request.node, "lnlab_failed", False):
        name = "FAILED_" + "".join(c if c.isalnum() else "_" for c in request.node.name)
        try:
            path = kit.screenshot(tab, name)
            print(f"\nscreenshot of the failure: {path}\nserver log tail:\n{server.log_tail()}")
        except Exception as err:
            print(f"\nno failure screenshot: {err}")
    context.close()
