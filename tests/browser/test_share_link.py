"""A shared link reproduces the view in a fresh browser, even as a new server's first request."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

STEP = r"^Step \d+ of 20"


def _view(page) -> tuple[str, str]:
    """What identifies the view: the step heading and the first number of the step."""
    page.wait_for_selector(".lnlab-cell")
    return kit.heading(page, "h2", STEP), kit.main(page).locator(".lnlab-cell").first.inner_text()


def _fresh_page(browser):
    context = browser.new_context(viewport=kit.VIEWPORT)
    context.add_init_script(kit.INIT_SCRIPT)
    return context, context.new_page()


def test_a_shared_link_reproduces_the_view(page, server, browser):
    # Reach a non-default view by hand: another seed, then two steps forward.
    kit.open_page(page, server, "stepper")
    seed = (
        kit.sidebar(page)
        .locator('[data-testid="stTextInput"]')
        .filter(has_text="Random seed")
        .locator("input")
    )
    seed.fill("11")
    kit.rerun_after(page, lambda: seed.press("Enter"))
    next_button = kit.main(page).locator(".st-key-stepper_nav button").filter(has_text="Next")
    for _ in range(2):
        next_button.click()  # the browser steps alone and keeps the address up to date
    page.wait_for_function("() => location.search.includes('step=3')")
    link, shown = page.url, _view(page)
    assert "seed=11" in link and "step=3" in link, link

    context, other = _fresh_page(browser)
    try:
        other.goto(link)
        kit.wait_for_script(other)
        assert not kit.problems(other)
        assert _view(other) == shown
    finally:
        context.close()


def test_a_link_as_the_first_request_of_a_new_server_shows_no_notice(browser, tmp_path):
    """run.sh starts the app via ui.server.launch; a cold server's first link must survive it."""
    port = kit.free_port()
    log = tmp_path / "server.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ui.server.launch",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
            ],
            cwd=kit.ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    url = f"http://127.0.0.1:{port}"
    context, page = _fresh_page(browser)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.25)
        page.goto(f"{url}/stepper?step=5&seed=3")
        kit.wait_for_script(page)
        assert not kit.problems(page), log.read_text()[-2000:]
        assert kit.heading(page, "h2", STEP).startswith("Step 5 of 20")
    finally:
        context.close()
        process.terminate()
        process.wait(timeout=10)
