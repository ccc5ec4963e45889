"""Numbers typed into the real browser's table cells and sidebar fields are stored exactly.

A browser's number cell rewrote `1e-3` as -13; the tables now hold text and the server reads
it. What was stored is read back from the URL, which carries small arrays at full precision
(repr), so these tests see the stored number, not a rounded display.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import lnlab_browser_kit as kit
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

# (row, column, typed, the number stored)
GOOD = [
    (0, 0, "1e-3", 1e-3),
    (0, 1, "2.5E3", 2500.0),
    (0, 2, "-2e-3", -2e-3),
    (1, 0, " 3 ", 3.0),
    (1, 1, "+4", 4.0),
]


def _link(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def _stored_x(page) -> list[float]:
    return [float(v) for v in _link(page)["x"].split(",")]


def _x_table(page):
    return kit.main(page).locator('[data-testid="stDataFrame"]').first


def _assert_no_problems(page, server) -> None:
    assert not kit.problems(page), f"{kit.problems(page)}\nserver log:\n{server.log_tail()}"


def test_typed_scientific_notation_is_stored_exactly_and_a_comma_is_refused(page, server):
    kit.open_page(page, server, "inputs")
    editor = _x_table(page)
    d = 8
    # edit_cell places its clicks from the header count: wait until every column is drawn.
    expect(editor.locator('th[role="columnheader"]')).to_have_count(d + 1)
    for row, col, typed, meant in GOOD:
        kit.edit_cell(page, editor, row, col, typed)
        _assert_no_problems(page, server)
        assert not kit.errors(kit.main(page)), kit.errors(kit.main(page))
        assert _stored_x(page)[row * d + col] == meant, (typed, _link(page)["x"])
        # The cell keeps the student's own text, which spells the stored number.
        assert float(kit.grid_value(editor, row, col)) == meant
    kit.screenshot(page, "typed_cells")
    stored = _stored_x(page)

    kit.edit_cell(page, editor, 1, 2, "1,5")
    _assert_no_problems(page, server)
    (error,) = kit.errors(kit.main(page))
    assert "row 1, column 2" in error and "use a point for decimals" in error, error
    assert _stored_x(page) == stored, "a refused cell changed the stored numbers"

    kit.edit_cell(page, editor, 1, 2, "1.5")
    assert not kit.errors(kit.main(page)), kit.errors(kit.main(page))
    assert _stored_x(page)[1 * d + 2] == 1.5


@pytest.mark.parametrize(
    ("label", "key", "typed", "stored", "message"),
    [
        ("Random seed", "seed", "1e3", "1000", None),
        ("Vectors (rows)", "n", "1e3", "3", "from 1 to 32"),
        ("eps", "eps", "1,5", "1e-05", "use a point for decimals"),
    ],
)
def test_a_typed_sidebar_number_is_stored_as_meant_or_refused(
    page, server, label, key, typed, stored, message
):
    kit.open_page(page, server, "inputs")
    field = kit.type_into_field(page, label, typed)
    _assert_no_problems(page, server)
    assert _link(page)[key] == stored, _link(page)
    errors = kit.errors(kit.sidebar(page))
    if message is None:
        assert not errors, errors
    else:
        (error,) = errors
        assert message in error and "It stays" in error, error
    expect(field).to_have_value(stored)
