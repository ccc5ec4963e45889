"""Tables on a 390 x 844 phone (issue 21, points 7 and 8), in a real browser.

Every table of the Inputs page shows all its columns with every number whole, and a cell edited
there changes what is stored, as on a desk; the audit's summary shows its verdict, formula and
error; a table's toolbar covers nothing above it. At 1440 x 900 and on the 1024 x 768 projector
the wide tables stay as they were. Screenshots: screenshots/phone_*.png, desk_*.png.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import lnlab_browser_kit as kit
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
D = 8
# The visible tables of the main area: the key of the element holding each, its sides, whether
# its grid scrolls sideways (what does not fit the screen), and how far it runs into the next
# element.
_VISIBLE_GRIDS = """
() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"]')]
  .filter(g => g.getBoundingClientRect().width > 0)
  .map(g => {
    const box = g.getBoundingClientRect();
    const scroller = g.querySelector('.dvn-scroller');
    const holder = g.closest('[data-testid="stElementContainer"]');
    let next = holder.nextElementSibling;
    while (next && next.getBoundingClientRect().height === 0) next = next.nextElementSibling;
    const named = g.closest('[class*="st-key-"]');
    return {key: named ? [...named.classList].find(c => c.startsWith('st-key-')) : '',
            left: box.left, right: box.right,
            sideways: scroller.scrollWidth - scroller.clientWidth,
            overlap: next ? box.bottom - next.getBoundingClientRect().top : 0};
  })
"""
# The width the open cell editor's text gets, and the widest of `texts` in its font.
_TEXT_ROOM = """
(texts) => {
  const editor = document.querySelector('.gdg-input');
  const style = getComputedStyle(editor);
  const room = editor.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const context = document.createElement('canvas').getContext('2d');
  context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const widest = Math.max(...texts.map(t => context.measureText(t).width));
  const cell = editor.closest('.gdg-style').getBoundingClientRect();
  return {room, widest, right: cell.right};
}
"""
# What a table's toolbar, shown, overlaps: the lines of headings and text, and controls, outside
# the table (a heading's box reaches below its text: its lines are what must stay readable).
_UNDER_TOOLBAR = """
(grid) => {
  const bar = grid.querySelector('[data-testid="stElementToolbar"]');
  const t = bar.getBoundingClientRect();
  const main = document.querySelector('[data-testid="stMain"]');
  const boxes = (e) => {
    if (e.matches('button, summary')) return [e.getBoundingClientRect()];
    const range = document.createRange();
    range.selectNodeContents(e);
    return [...range.getClientRects()];
  };
  const hit = [...main.querySelectorAll('h1, h2, h3, p, button, label, summary')]
    .filter(e => !grid.contains(e))
    .filter(e => boxes(e).some(r => r.width > 0 && r.left < t.right && r.right > t.left
      && r.top < t.bottom && r.bottom > t.top))
    .map(e => `${e.tagName} "${(e.innerText || '').slice(0, 40)}" at `
      + boxes(e).map(r => `${r.top}-${r.bottom} px`).join(", ") + `, the bar ${t.top}-${t.bottom}`);
  return {shown: getComputedStyle(bar).opacity === "1" && t.height > 0, hit};
}
"""


@pytest.fixture
def phone(browser, server) -> Iterator[object]:
    """A fresh session in a 390 x 844 window."""
    tab = kit.new_tab(browser, PHONE)
    yield tab
    tab.context.close()


def _grids(tab) -> list[dict]:
    return tab.evaluate(_VISIBLE_GRIDS)


def _visible_tables(tab):
    return kit.main(tab).locator('[data-testid="stDataFrame"]:visible')


def _stored_x(tab) -> list[float]:
    return [float(v) for v in parse_qs(urlparse(tab.url).query)["x"][0].split(",")]


def _assert_fits(tab, grids: list[dict], where: str, shot) -> None:
    for grid in grids:
        assert grid["left"] >= 0 and grid["right"] <= PHONE["width"], (where, grid, shot)
        assert grid["sideways"] <= 1, f"{where}: {grid['key']} scrolls sideways (see {shot})"
        assert grid["overlap"] <= 1, f"{where}: {grid['key']} covers what follows it (see {shot})"


def test_every_inputs_table_fits_the_phone_with_every_digit(phone, server):
    # The loss's target adds the fourth table.
    kit.open_page(phone, server, "inputs?upstream=loss")
    top = kit.screenshot(phone, "phone_390x844_inputs")
    assert not kit.problems(phone), kit.problems(phone)
    grids = _grids(phone)
    keys = [g["key"] for g in grids]
    assert len(keys) == 4 and all(k.startswith("st-key-phone_editor_") for k in keys), keys
    _assert_fits(phone, grids, "Inputs at 390 x 844", top)

    tables = _visible_tables(phone)
    for i in range(tables.count()):
        table = tables.nth(i)
        expect(table.locator('th[role="columnheader"]')).to_have_count(3)  # vector, feature, value
        values = table.locator('[data-testid^="glide-cell-2-"]').all_text_contents()
        assert len(values) >= D, values
        # The cell editor opens over the cell: its width is the room the number has.
        kit.open_cell_editor(phone, table, 0, 1, last_column=True)
        room = phone.evaluate(_TEXT_ROOM, values)
        kit.screenshot(phone, f"phone_390x844_inputs_table_{i}")
        phone.keyboard.press("Escape")
        kit.wait_for_script(phone)
        assert room["widest"] <= room["room"], f"table {i}: a number is cut: {room}, {values}"
        assert room["right"] <= PHONE["width"], f"table {i}: the value column runs off: {room}"
    kit.screenshot_bottom(phone, "phone_390x844_inputs_bottom")


def test_a_cell_edited_on_the_phone_is_stored_and_a_bad_one_refused(phone, server):
    kit.open_page(phone, server, "inputs")
    table = _visible_tables(phone).first
    expect(table.locator('th[role="columnheader"]')).to_have_count(3)
    # The link carries x once it differs from the preset: what was shown is compared.
    before = [float(kit.grid_value(table, row, 1)) for row in range(D + 1)]
    # Entry 9 of the phone's x table: vector 1, feature 1.
    kit.edit_cell(phone, table, 9, 1, "2.5e-3", last_column=True)
    assert not kit.problems(phone), f"{kit.problems(phone)}\n{server.log_tail()}"
    assert not kit.errors(kit.main(phone)), kit.errors(kit.main(phone))
    stored = _stored_x(phone)
    assert stored[1 * D + 1] == 2.5e-3
    assert stored[: D + 1] == before, "an entry that was not edited changed"
    expect(kit.grid_cell(table, 9, 1)).to_have_text("2.5e-3")
    kit.screenshot(phone, "phone_390x844_inputs_edited")

    # Enter moved the selection down a row and the grid scrolled with it: back to the top.
    table.locator(".dvn-scroller").evaluate("e => { e.scrollTop = 0; }")
    phone.wait_for_timeout(300)
    kit.edit_cell(phone, table, 9, 1, "1,5", last_column=True)
    (error,) = kit.errors(kit.main(phone))
    assert "row 1, column 1" in error and "use a point for decimals" in error, error
    assert error in kit.main(phone).inner_text(), "the message is not on the phone's screen"
    assert _stored_x(phone) == stored, "a refused cell changed the stored numbers"
    kit.screenshot(phone, "phone_390x844_inputs_refused")


def test_the_audit_on_the_phone_shows_verdict_formula_and_error(phone, server):
    kit.open_page(phone, server, "audit")
    top = kit.screenshot(phone, "phone_390x844_audit")
    grids = _grids(phone)
    assert [g["key"][: len("st-key-audit_pick_phone_")] for g in grids] == [
        "st-key-audit_pick_phone_"
    ], grids
    _assert_fits(phone, grids, "the audit at 390 x 844", top)
    table = _visible_tables(phone).first
    expect(table.locator('th[role="columnheader"]', has_text="formula")).to_have_count(1)
    headers = table.locator('th[role="columnheader"]').all_text_contents()
    assert [h for h in headers if h.strip()] == ["verdict", "formula", "error"], headers
    # Selecting a row on the phone opens that formula's explanation, as on a desk.
    row = table.locator('tbody tr, [role="row"]').filter(has_text="wrong").first
    formula = max(row.locator("td").all_text_contents(), key=len)
    table.scroll_into_view_if_needed()
    box = kit.grid_canvas(table).bounding_box()
    index = int(row.get_attribute("aria-rowindex")) - 2  # 1 is the header row
    kit.rerun_after(
        phone, lambda: phone.mouse.click(box["x"] + 16, box["y"] + 37 + 84 * (index + 0.5))
    )
    opened = kit.main(phone).locator('[data-testid="stExpander"] details[open] summary')
    expect(opened.first).to_contain_text(formula)
    kit.screenshot(phone, "phone_390x844_audit_selected")


# The Stepper draws its step's numbers itself; its tables (st.dataframe) are step 20's result,
# one click away.
RESULT = "The result, dx, dgamma and dbeta"


def _open(phone, server, url_path: str) -> None:
    kit.open_page(phone, server, url_path)
    if url_path.startswith("stepper"):
        kit.main(phone).get_by_text(RESULT).click()  # an expander: no run, drawn already
        expect(_visible_tables(phone).first).to_be_visible()


# A point of the table a pointer reaches (the Stepper's head and guide stay over the page and
# may cover the table's middle): the first, from the middle up and down, where the table is
# the topmost element on the screen.
_OPEN_POINT = """
(grid) => {
  const box = grid.getBoundingClientRect();
  const x = box.left + box.width / 2;
  for (let step = 0; step < box.height / 2; step += 8) {
    for (const y of [box.top + box.height / 2 - step, box.top + box.height / 2 + step]) {
      if (y < 0 || y >= window.innerHeight) continue;
      const hit = document.elementFromPoint(x, y);
      if (hit && grid.contains(hit)) return {x, y};
    }
  }
  return null;
}
"""


def _toolbar_shown(phone, table) -> dict:
    """What the hovered table's toolbar overlaps, once it has faded in (its opacity eases in
    after the hover; a loaded browser takes longer than a quiet one) or 10 s have passed."""
    found = table.evaluate(_UNDER_TOOLBAR)
    for _ in range(50):
        if found["shown"] or found["hit"]:
            break
        phone.wait_for_timeout(200)
        found = table.evaluate(_UNDER_TOOLBAR)
    return found


@pytest.mark.parametrize("url_path", ["inputs", "audit", "stepper?step=20"])
def test_a_tables_toolbar_covers_nothing_on_the_phone(phone, server, url_path):
    _open(phone, server, url_path)
    tables = _visible_tables(phone)
    assert tables.count() > 0
    for i in range(tables.count()):
        table = tables.nth(i)
        table.scroll_into_view_if_needed()
        point = table.evaluate(_OPEN_POINT)
        assert point, f"{url_path}, table {i}: no part of it is on the screen to hover"
        phone.mouse.move(point["x"], point["y"])
        found = _toolbar_shown(phone, table)
        if found["hit"]:
            path = kit.screenshot(phone, f"FAILED_toolbar_{url_path}_{i}")
            pytest.fail(f"{url_path}, table {i}: its toolbar covers {found['hit']} (see {path})")
        assert found["shown"], f"{url_path}, table {i}: hovering showed no toolbar"


@pytest.mark.parametrize(
    ("size", "query"),
    [({"width": 1440, "height": 900}, ""), ({"width": 1024, "height": 768}, "&presenter=1")],
    ids=["desk", "projector"],
)
def test_the_desk_and_the_projector_keep_the_wide_tables(browser, server, size, query):
    tab = kit.new_tab(browser, size)
    try:
        name = f"{size['width']}x{size['height']}"
        kit.open_page(tab, server, f"inputs?upstream=loss{query}")
        kit.screenshot(tab, f"desk_{name}_inputs")
        keys = [g["key"] for g in _grids(tab)]
        assert len(keys) == 4 and all(k.startswith("st-key-editor_") for k in keys), keys
        expect(_visible_tables(tab).first.locator('th[role="columnheader"]')).to_have_count(D + 1)
        _assert_numbers_whole(tab, name)
        # Numbers sharing a large common part show the digits where they differ, still whole.
        kit.open_page(tab, server, f"inputs?preset=Large+common+offset+%28about+2000%29{query}")
        texts = _assert_numbers_whole(tab, f"{name}_offset")
        assert len(set(texts)) == len(texts) and all(t.startswith(("199", "200")) for t in texts)
        digits = [len(t.replace("-", "").replace(".", "")) for t in texts]
        assert max(digits) == 8, texts  # 2000.1257: the deviation's first five digits
        kit.open_page(tab, server, f"audit?{query.lstrip('&')}")
        kit.screenshot(tab, f"desk_{name}_audit")
        keys = [g["key"] for g in _grids(tab)]
        assert len(keys) == 1 and keys[0].startswith("st-key-audit_pick_wide_"), keys
    finally:
        tab.context.close()


def _assert_numbers_whole(tab, name: str) -> list[str]:
    """Every number of the x table fits its cell (measured in the cell editor's font, as the
    phone's tables are); the numbers shown."""
    table = _visible_tables(tab).first
    expect(table.locator('th[role="columnheader"]')).to_have_count(D + 1)
    texts = [kit.grid_value(table, row, col) for row in range(3) for col in range(D)]
    kit.open_cell_editor(tab, table, 0, 0)
    room = tab.evaluate(_TEXT_ROOM, texts)
    shot = kit.screenshot(tab, f"desk_{name}_inputs_cell")
    tab.keyboard.press("Escape")
    kit.wait_for_script(tab)
    assert room["widest"] <= room["room"], f"{name}: a number is cut: {room}, {texts} ({shot})"
    caption = kit.main(tab).get_by_text("significant digits; every page computes with all")
    expect(caption.first).to_be_visible()
    return texts


# A grid's sides, how far it scrolls sideways, and the key naming it for the page's style.
_GRID = """
(g) => {
  const box = g.getBoundingClientRect();
  const scroller = g.querySelector('.dvn-scroller');
  const named = g.closest('[class*="st-key-"]');
  return {key: named ? [...named.classList].find(c => c.startsWith('st-key-')) : '',
          left: box.left, right: box.right,
          sideways: scroller.scrollWidth - scroller.clientWidth};
}
"""


@pytest.mark.parametrize(
    ("path", "heading"),
    [
        # dx, dgamma and dbeta and the numerical checks; the two contributions per vector; dout.
        ("stepper?step=20", "Step 20 of 20"),
        ("residual", "Residual block"),  # the two paths to x and dx, per feature
    ],
)
def test_the_result_tables_fit_the_phone_one_row_per_number(phone, server, path, heading):
    # Eight numbers side by side would run off a 390 px screen.
    _open(phone, server, path)
    expect(kit.main(phone).locator("h1, h2").filter(has_text=heading)).to_have_count(1)
    shot = kit.screenshot(phone, f"phone_390x844_{path.replace('?step=', '_')}")
    tables = _visible_tables(phone)
    keys = []
    for i in range(tables.count()):
        table = tables.nth(i)
        table.scroll_into_view_if_needed()  # glide draws a grid once it is scrolled to
        expect(table.locator(".dvn-scroller")).to_have_count(1)
        grid = table.evaluate(_GRID)
        keys.append(grid["key"])
        assert grid["left"] >= 0 and grid["right"] <= PHONE["width"], (path, grid, shot)
        assert grid["sideways"] <= 1, f"{path}: table {i} scrolls sideways: {grid} ({shot})"
    assert any(k.startswith("st-key-numbers_phone_") for k in keys), keys
    assert not any(k.startswith("st-key-numbers_wide_") for k in keys), keys


# Every number the Stepper draws for its step, and each of its tables' scrolling boxes.
_WALK_BOXES = """
() => [...document.querySelectorAll('.lnlab-cell, .lnlab-scroll')]
  .filter((e) => e.checkVisibility())
  .map((e) => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right}; })
"""


@pytest.mark.parametrize("step", [11, 19, 20])
def test_the_steppers_own_numbers_stay_on_the_phones_screen(phone, server, step):
    # dout and the two contributions per vector (11, 19), dx (20): wrapped, never cut.
    kit.open_page(phone, server, f"stepper?step={step}")
    expect(kit.main(phone).locator("h2").filter(has_text=f"Step {step} of 20")).to_have_count(1)
    shot = kit.screenshot(phone, f"phone_390x844_stepper_{step}_numbers")
    boxes = phone.evaluate(_WALK_BOXES)
    assert boxes, f"step {step}: no numbers drawn ({shot})"
    assert all(b["left"] >= 0 and b["right"] <= PHONE["width"] for b in boxes), (boxes, shot)
    sideways = phone.evaluate("() => document.documentElement.scrollWidth - innerWidth")
    assert sideways <= 0, f"step {step}: the page scrolls sideways by {sideways} px ({shot})"
