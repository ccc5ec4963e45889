"""Bad input typed in the browser is reported with st.error on every page, never raised."""

from __future__ import annotations

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

PRESET = "Constant vector"


def _choose_preset(page, name: str) -> None:
    select = kit.sidebar(page).locator('[data-testid="stSelectbox"]').filter(has_text="Preset")
    select.click()
    kit.rerun_after(page, page.get_by_role("option", name=name, exact=True).click)


def _type_number(page, label: str, text: str) -> None:
    field = kit.type_into_field(page, label, text)
    assert float(field.input_value()) == float(text), field.input_value()


def test_constant_vector_with_eps_zero_is_an_error_not_an_exception(page, server):
    kit.open_page(page, server, "stepper")
    _choose_preset(page, PRESET)
    _type_number(page, "eps", "0")
    kit.screenshot(page, "bad_input_stepper")
    assert not kit.problems(page), f"{kit.problems(page)}\nserver log:\n{server.log_tail()}"
    # The reason is said once, under eps in the sidebar; the step points to it.
    sidebar_errors = kit.errors(kit.sidebar(page))
    assert any("eps" in e and "variance" in e for e in sidebar_errors), sidebar_errors
    assert kit.main(page).get_by_text("the message under eps in the sidebar says why").count()

    # Every other page, with the same session: an error at most, never an exception.
    for app_page in kit.lab_pages():
        kit.goto_in_session(page, app_page.url_path)
        kit.screenshot(page, f"bad_input_{app_page.name}")
        found = kit.problems(page)
        assert not found, f"{app_page.title}: {found}\nserver log:\n{server.log_tail()}"
        assert kit.errors(kit.sidebar(page)), f"{app_page.title}: the sidebar's error is gone"
