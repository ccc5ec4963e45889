"""The Export page's files are written on click and arrive in the browser intact."""

from __future__ import annotations

import json

import lnlab_browser_kit as kit
import nbformat
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_the_json_bundle_downloads_and_holds_the_inputs(page, server, tmp_path):
    kit.open_page(page, server, "export")
    button = (
        kit.main(page)
        .locator('[data-testid="stDownloadButton"] button')
        .filter(has_text="JSON bundle")
    )
    with page.expect_download(timeout=30_000) as download:
        button.click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    bundle = json.loads(path.read_text())
    assert bundle["meta"]["verdict"] == "pass"
    assert len(bundle["arrays"]["inputs/x"]) == 3  # the default example: 3 rows of 8
    assert not kit.problems(page)


def _download(page, tmp_path, where, label: str):
    button = where.locator('[data-testid="stDownloadButton"] button').filter(has_text=label)
    button.scroll_into_view_if_needed()
    with page.expect_download(timeout=60_000) as download:
        button.click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    return path


def test_the_notebooks_download_from_the_export_page_and_the_stepper(page, server, tmp_path):
    kit.open_page(page, server, "export")
    lesson = _download(page, tmp_path, kit.main(page), "Download as notebook")
    assert lesson.name == "layernorm_lesson.ipynb"
    notebook = nbformat.read(lesson, as_version=4)
    nbformat.validate(notebook)
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert "dx = dx_via_x_sm + dx_via_sample_mean" in code and "# TODO" not in code
    kit.screenshot(page, "export_notebooks")  # scrolled to the notebook buttons

    kit.open_page(page, server, "stepper")
    expander = (
        kit.main(page)
        .locator('[data-testid="stExpander"]')
        .filter(has_text="Take this view to Jupyter")
    )
    expander.locator("summary").click()
    exercise = _download(page, tmp_path, expander, "Download the exercise notebook")
    notebook = nbformat.read(exercise, as_version=4)
    nbformat.validate(notebook)
    assert any("dx = None  # TODO" in c.source for c in notebook.cells)
    kit.screenshot_bottom(page, "stepper_notebooks")
    assert not kit.problems(page)


def test_the_class_links_qr_code_is_an_image_that_survives_the_sanitiser(page, server):
    # st.html sanitises with DOMPurify's HTML profile, which dropped the inline SVG: an empty
    # box of height 0 where the QR code should be.
    kit.open_page(page, server, "export")
    qr = kit.main(page).get_by_role("img", name="QR code of the class link")
    qr.scroll_into_view_if_needed()
    expect(qr).to_be_visible()
    box = qr.bounding_box()
    assert box["height"] > 100 and box["width"] > 100, box
    assert qr.evaluate("img => img.complete && img.naturalWidth > 0")
