"""The Export page's files are written on click and arrive in the browser intact."""

from __future__ import annotations

import json

import lnlab_browser_kit as kit
import pytest

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
    assert bundle["meta"]["passed"] is True
    assert len(bundle["arrays"]["inputs/x"]) == 3  # the default example: 3 rows of 8
    assert not kit.problems(page)
