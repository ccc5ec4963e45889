"""Two app processes behind HAProxy (deploy/replicas.py, `./run.sh --replicas 2`): each browser
stays on one process, so its downloads, links and reconnects work through the balancer."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import lnlab_browser_kit as kit
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from deploy.replicas import COOKIE, HAPROXY, Replicas  # noqa: E402

pytestmark = pytest.mark.browser
STEP = r"^Step \d+ of 20"


@pytest.fixture(scope="module")
def balancer(browser) -> Iterator[Replicas]:
    if not (shutil.which("haproxy") or os.access(HAPROXY, os.X_OK)):
        reason = "no haproxy (apt-get install haproxy)"
        if os.environ.get("LNLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{reason}; CI installs it", pytrace=False)
        pytest.skip(reason)
    with Replicas(2) as replicas:
        yield replicas


def _tab(browser):
    context = browser.new_context(viewport=kit.VIEWPORT, accept_downloads=True)
    context.add_init_script(kit.INIT_SCRIPT)
    context.set_default_timeout(30_000)
    return context, context.new_page()


def _replica(context) -> str:
    (cookie,) = [c["value"] for c in context.cookies() if c["name"] == COOKIE]
    return cookie


def _url(balancer: Replicas) -> str:
    return f"http://127.0.0.1:{balancer.port}"


def test_browsers_are_spread_and_each_downloads_from_its_own_process(browser, balancer, tmp_path):
    seen = set()
    for _ in range(2):  # the balancer takes turns, so two browsers land on both processes
        context, tab = _tab(browser)
        try:
            kit.open_page(tab, _url(balancer), "export")
            seen.add(_replica(context))
            button = (
                kit.main(tab)
                .locator('[data-testid="stDownloadButton"] button')
                .filter(has_text="JSON bundle")
            )
            # The file lives in the memory of the process that ran the page.
            with tab.expect_download(timeout=30_000) as download:
                button.click()
            path = tmp_path / f"bundle_{len(seen)}.json"
            download.value.save_as(path)
            assert json.loads(path.read_text())["meta"]["verdict"] == "pass"
            assert not kit.problems(tab)
        finally:
            context.close()
    assert seen == {"app0", "app1"}


def _stepper_at_seed_and_step(tab, url: str) -> None:
    kit.open_page(tab, url, "stepper")
    kit.type_into_field(tab, "Random seed", "11")
    next_button = kit.main(tab).locator(".st-key-stepper_nav button").filter(has_text="Next")
    for _ in range(2):
        next_button.click()  # the browser steps alone and keeps the address up to date
    tab.wait_for_function("() => location.search.includes('step=3')")


def test_a_link_opened_on_the_other_process_shows_the_same_view(browser, balancer):
    context, tab = _tab(browser)
    other_context, other = _tab(browser)
    try:
        _stepper_at_seed_and_step(tab, _url(balancer))
        link = tab.url
        assert "seed=11" in link and "step=3" in link, link
        shown = kit.heading(tab, "h2", STEP)
        # A second browser gets the other process (the balancer takes turns).
        kit.open_page(other, _url(balancer), "")
        other.goto(link)
        kit.wait_for_script(other)
        assert _replica(other_context) != _replica(context)
        assert kit.heading(other, "h2", STEP) == shown
        assert not kit.problems(other)
    finally:
        context.close()
        other_context.close()


def test_a_browser_reconnects_through_the_balancer_after_its_process_restarts(browser, balancer):
    context, tab = _tab(browser)
    try:
        _stepper_at_seed_and_step(tab, _url(balancer))
        shown = kit.heading(tab, "h2", STEP)
        replica = _replica(context)
        balancer.restart(int(replica.removeprefix("app")))
        # The page reconnects by itself: to the other process while its own is down (the
        # balancer then moves its cookie), or to its own once back. Either way the URL holds
        # the view and the session works.
        tab.wait_for_function(
            """() => document.querySelector('[data-testid="stApp"]')
                 ?.getAttribute("data-test-connection-state") === "CONNECTED" """,
            timeout=60_000,
        )
        kit.wait_for_script(tab)
        assert _replica(context) in {"app0", "app1"}
        assert kit.heading(tab, "h2", STEP) == shown
        assert not kit.problems(tab)
        # Reloading goes through the balancer again; the URL holds the view and it works on.
        tab.reload()
        kit.wait_for_script(tab)
        assert kit.heading(tab, "h2", STEP) == shown
        next_button = kit.main(tab).locator(".st-key-stepper_nav button").filter(has_text="Next")
        next_button.click()
        tab.wait_for_function("() => location.search.includes('step=4')")
        assert kit.heading(tab, "h2", STEP).startswith("Step 4 of 20")
        assert not kit.problems(tab)
    finally:
        context.close()
