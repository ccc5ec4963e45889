"""After a server restart the URL wins: a tab whose first action is a page switch keeps the
view its link holds (ui/session/reconnect.py), and a fresh visit is never given an old view."""

from __future__ import annotations

import re
import sys

import lnlab_browser_kit as kit
import pytest

if str(kit.ROOT) not in sys.path:
    sys.path.insert(0, str(kit.ROOT))

from bench.local_server import LocalServer

pytestmark = pytest.mark.browser

VIEW = {"seed": "7", "d": "5", "step": "5"}


def _seed_shown(page) -> str:
    field = kit.sidebar(page).get_by_role("textbox", name="Random seed")
    return field.input_value()


def _query(url: str) -> dict[str, str]:
    return dict(re.findall(r"[?&]([^=&]+)=([^&]*)", url))


def test_a_page_switch_after_a_restart_keeps_the_view_of_the_url(browser):
    context = browser.new_context(viewport=kit.VIEWPORT)
    context.add_init_script(kit.INIT_SCRIPT)
    page = context.new_page()
    try:
        with LocalServer(launcher=True) as server:
            base = f"http://127.0.0.1:{server.port}"
            page.goto(f"{base}/stepper?" + "&".join(f"{k}={v}" for k, v in VIEW.items()))
            kit.wait_for_script(page)
            assert _seed_shown(page) == "7"

            server.restart()
            page.wait_for_function(
                """() => document.querySelector('[data-testid="stApp"]')
                     ?.getAttribute("data-test-connection-state") === "CONNECTED" """,
                timeout=kit.RUN_TIMEOUT_MS,
                polling=200,
            )
            kit.nav_link(page, "jacobian").click()
            page.wait_for_url(re.compile(r"/jacobian\?"), timeout=kit.RUN_TIMEOUT_MS)
            kit.wait_for_script(page, quiet_ms=kit.CHAIN_QUIET_MS)
            shown = _query(page.url)
            assert {k: shown.get(k) for k in VIEW} == VIEW, page.url
            assert _seed_shown(page) == "7"
            assert not kit.problems(page), server.log()[-2000:]

            # A new document in the same tab (the bare address typed again) starts afresh.
            page.goto(f"{base}/inputs")
            kit.wait_for_script(page, quiet_ms=kit.CHAIN_QUIET_MS)
            assert _query(page.url).get("seed") == "0", page.url
            assert _seed_shown(page) == "0"
    finally:
        context.close()


# -- controls inside fragments work on the first click after a restart ----------------------------

LINK = "seed=7&n=2&d=4&step=3"
DROPPED = "does not exist anymore"


def _choose(page, label: str) -> None:
    """The option after the chosen one in the select box labelled `label`."""
    kit.main(page).get_by_role("combobox", name=label).click()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")


def _step(page) -> str:
    return kit.heading(page, "h2", r"^Step \d+ of 20")


# page -> (what the student does inside the page's fragment, what must have changed)
FRAGMENT_CONTROLS = {
    # The Stepper's steps need no server; its fragment reruns for its own switches.
    "stepper": (
        lambda page: (
            kit.main(page).locator("p").filter(has_text="Predict before reveal").first.click()
        ),
        lambda page: "quiz=1" in page.url and _step(page).startswith("Step 3 of 20"),
    ),
    "jacobian": (
        lambda page: kit.main(page).get_by_text("Show the three paths", exact=True).click(),
        lambda page: kit.main(page).get_by_label("Show the three paths", exact=True).is_checked(),
    ),
    "gradcheck": (
        # No bug is injected until one is chosen: the next option is the first bug.
        lambda page: _choose(page, "Known bug"),
        lambda page: "bug=drop_variance_path" in page.url,
    ),
    "batchnorm": (
        lambda page: kit.main(page).locator('[data-testid="stRadio"] label').nth(2).click(),
        lambda page: "norm=layer" not in page.url,
    ),
    "audit": (
        lambda page: _choose(page, "Read one document"),
        lambda page: True,
    ),
}


@pytest.mark.parametrize("url_path", list(FRAGMENT_CONTROLS))
def test_a_fragment_works_on_the_first_click_after_a_restart(browser, url_path):
    act, changed = FRAGMENT_CONTROLS[url_path]
    context = browser.new_context(viewport=kit.VIEWPORT)
    context.add_init_script(kit.INIT_SCRIPT)
    page = context.new_page()
    try:
        with LocalServer(launcher=True) as server:
            base = f"http://127.0.0.1:{server.port}"
            page.goto(f"{base}/export?{LINK}")
            kit.wait_for_script(page)
            # The student switched pages: Streamlit then sends no rerun on reconnect.
            kit.goto_in_session(page, url_path)
            server.restart()
            page.wait_for_function(
                """() => document.querySelector('[data-testid="stApp"]')
                     ?.getAttribute("data-test-connection-state") === "CONNECTED" """,
                timeout=kit.RUN_TIMEOUT_MS,
                polling=200,
            )
            kit.wait_for_script(page, quiet_ms=kit.CHAIN_QUIET_MS)
            kit.rerun_after(page, lambda: act(page))
            kit.screenshot(page, f"after_restart_{url_path}")
            assert DROPPED not in server.log(), server.log()[-1500:]
            assert changed(page), url_path
            assert not kit.problems(page)
            assert "seed=7" in page.url, page.url
    finally:
        context.close()
