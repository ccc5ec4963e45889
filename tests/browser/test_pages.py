"""Every page of app.py opens clean in a real browser, and is screenshotted top and bottom."""

from __future__ import annotations

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

PAGES = kit.lab_pages()


def test_sidebar_links_every_page_of_app_py(page, server):
    kit.open_page(page, server, "")
    links = page.locator('[data-testid="stSidebarNavLink"]')
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert hrefs == [f"{server}/{p.url_path}" for p in PAGES]
    # Each link's text is its icon's ligature, then the title.
    texts = links.all_inner_texts()
    assert [t.splitlines()[-1].strip() for t in texts] == [p.title for p in PAGES]


@pytest.mark.parametrize("app_page", PAGES, ids=[p.name for p in PAGES])
def test_page_opens_clean(page, server, app_page):
    """Loaded by its URL in a fresh session: that page, no exception, no "Page not found"
    dialog (the server was warmed up on its root URL), no st.error at the default inputs."""
    kit.open_page(page, server, app_page.url_path)
    kit.screenshot(page, app_page.name)
    found = kit.problems(page)
    assert not found, f"{app_page.title}: {found}\nserver log:\n{server.log_tail()}"
    shown = page.locator('[data-testid="stSidebarNavLink"][aria-current="page"]')
    assert shown.get_attribute("href") == f"{server}/{app_page.url_path}"
    errors = kit.errors(page.locator("body"))
    assert not errors, f"st.error at the default inputs: {errors}"
    assert kit.main(page).locator("h1, h2, h3").count(), f"{app_page.title} drew no heading"
    assert not page.lnlab_js_errors, f"JavaScript errors: {page.lnlab_js_errors}"
    kit.screenshot_bottom(page, f"{app_page.name}_bottom")
    assert not kit.problems(page), f"after scrolling: {kit.problems(page)}"
