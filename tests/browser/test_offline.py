"""The lab works offline and echoes nothing as a link: checked in a real browser.

Every request the browser makes outside the server the page came from (a font or icon CDN,
an analytics beacon) is blocked and counted, over a tour of every page: there must be none.
A link whose values are addresses shows them in its warning as plain text, with no <a>.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

ADDRESSES = {
    "seed": "https://ev.il/login",
    "hide": "www.ev.il/x",
    "preset": "user@ev.il",
    "eps": "[Sign in](https://ev.il)",
}


def test_no_request_leaves_the_server_on_any_page(page, server):
    ours = urlsplit(server).netloc
    outside: list[str] = []

    def block_outside(route) -> None:
        if urlsplit(route.request.url).netloc in (ours, ""):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.context.route("**/*", block_outside)
    kit.open_page(page, server, "")
    for app_page in kit.lab_pages():
        kit.goto_in_session(page, app_page.url_path)
        assert not kit.problems(page), app_page.title
    page.reload()
    kit.wait_for_script(page)
    favicon = page.locator("link[rel~='icon']").first.get_attribute("href") or ""
    assert urlsplit(favicon).netloc in (ours, ""), favicon
    assert outside == [], f"requests outside the server: {outside}"


def test_addresses_in_a_link_are_shown_as_text_not_links(page, server):
    page.goto(f"{server}/?{urlencode(ADDRESSES)}")
    kit.wait_for_script(page)
    warning = page.locator('[data-testid="stAlert"]').filter(has_text="Parts of this link")
    text = warning.inner_text()
    kit.screenshot(page, "link_addresses_as_text")
    for address in ADDRESSES.values():
        # As typed, apart from the invisible joiners that keep Markdown from linking it.
        assert address in text.replace("\u2060", ""), (address, text)
    assert warning.locator("a").count() == 0, warning.inner_html()
