"""A live class derives dx in real browsers through `./run.sh --replicas 2`: an instructor on a
1024x768 projector and four students on phones, landing on both processes, once on a SQLite
file and once on a PostgreSQL server (tests/live/pg_kit.py).

The instructor asks "Derive dx"; each student types a formula (right, a slip the judge names,
wrong without a name, unreadable and hostile), sees how the lab reads it and sends it; the
Class page counts the answers, then on Reveal shows the room's histogram: one bar per category
with its count and share, never a student's text. Each student sees their own verdict, the
slip named. The histogram's counts equal what was sent, in the store as on the screen.
Screenshots: the instructor's histogram at 1024x768, a student's typed formula and named slip
at 390x844.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import lnlab_browser_kit as kit
import pytest
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
for _path in (ROOT, ROOT / "tests" / "live"):  # the root for deploy and ui; pg_kit.py
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from pg_kit import Postgres, require_postgres  # noqa: E402

from deploy.processes import free_port  # noqa: E402
from deploy.replicas import COOKIE, HAPROXY, Replicas  # noqa: E402
from ui.live.store import Judged, Store  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]
PROJECTOR = {"width": 1024, "height": 768}
PHONE = {"width": 390, "height": 844}
WAIT_MS = 60_000  # generous for a loaded machine: the waits are for runs, not latencies
SENT = {
    "right": "rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))",
    "slip": "rstd * (dxhat + mean(dxhat) - xhat * mean(dxhat * xhat))",
    "unnamed": "dxhat * 3",
    "unreadable": "<b>x</b> + **",
}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def classroom(request, tmp_path_factory) -> Iterator[tuple[Replicas, str]]:
    """Two replicas behind HAProxy on one store: a SQLite file, or a PostgreSQL server."""
    if not (shutil.which("haproxy") or os.access(HAPROXY, os.X_OK)):
        reason = "no haproxy (apt-get install haproxy)"
        if os.environ.get("LNLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{reason}; CI installs it", pytrace=False)
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("live")
    with ExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{folder / 'classes.sqlite3'}"
        else:
            require_postgres()
            # Not under pytest's folder: PostgreSQL runs as its own user, who cannot enter it.
            server = Postgres(Path(tempfile.mkdtemp(prefix="lnlab-pg-")), free_port())
            stack.callback(shutil.rmtree, server.folder, ignore_errors=True)
            server.create()
            server.start()
            stack.callback(server.stop)
            url = server.create_database("lnlab_formulas")
        expect.set_options(timeout=30_000)
        stack.callback(expect.set_options, timeout=5_000)
        with Replicas(2, env={"LNLAB_CLASS_DB": url}) as replicas:
            yield replicas, url


def _bar(tab):
    return tab.locator(".st-key-live_bar")


def _click(tab, name: str) -> None:
    kit.rerun_after(tab, kit.main(tab).get_by_role("button", name=name).click)


def test_a_room_derives_dx_and_the_instructor_sees_its_mistakes(browser, classroom):
    replicas, db = classroom
    database = db.split(":")[0].split("+")[0]  # sqlite or postgresql, for the screenshots
    url = f"http://127.0.0.1:{replicas.port}"
    contexts = []
    try:
        teacher = kit.new_tab(browser, PROJECTOR)
        teacher_context = teacher.context
        contexts.append(teacher_context)
        kit.open_page(teacher, url, "class?presenter=1")
        _click(teacher, "Start a class")
        link = kit.main(teacher).locator('[data-testid="stCode"]').inner_text().strip()
        code = link.rsplit("=", 1)[1]
        (secret,) = [c["value"] for c in teacher_context.cookies() if c["name"] == "lnlab_teach"]
        secret = secret.split(".", 1)[1]
        students = {}
        for kind in SENT:
            tab = kit.new_tab(browser, PHONE)
            context = tab.context
            contexts.append(context)
            tab.goto(link, timeout=120_000)
            expect(_bar(tab)).to_contain_text("your lab follows the instructor")
            students[kind] = (context, tab)
        used = {
            c["value"] for ctx, _ in students.values() for c in ctx.cookies() if c["name"] == COOKIE
        }
        assert used == {"app0", "app1"}

        ask = kit.main(teacher).locator('[data-testid="stSelectbox"]').filter(has_text="Ask the")
        ask.click()
        teacher.keyboard.type("Derive dx —")
        kit.rerun_after(teacher, teacher.get_by_role("option", name="Derive dx —").first.click)
        _click(teacher, "Ask")
        store = Store(db)
        question = store.status(code, secret).question
        assert question.asked.title.startswith("Derive dx") and question.asked.options == ()

        for kind, (_, tab) in students.items():
            bar = _bar(tab)
            expect(bar).to_contain_text("Derive dx", timeout=WAIT_MS)
            box = bar.get_by_label("Your formula")
            box.fill(SENT[kind])
            kit.rerun_after(tab, lambda box=box: box.press("Enter"))
            if kind == "slip":
                # How the lab reads it, typeset, before it is sent.
                expect(
                    bar.locator('[data-testid="stMarkdownContainer"] .katex').first
                ).to_be_visible()
                kit.screenshot(tab, f"live_formula_student_typed_390x844_{database}")
            if kind == "unreadable":
                expect(bar).to_contain_text("At character 1")
            kit.rerun_after(tab, bar.get_by_role("button", name="Send").click)
            expect(bar).to_contain_text("Your formula is in", timeout=WAIT_MS)
        answered = kit.main(teacher).locator('[data-testid="stMetric"]').filter(has_text="Answered")
        expect(answered).to_contain_text("4 of 4", timeout=WAIT_MS)
        assert kit.main(teacher).locator('[data-testid="stPlotlyChart"]').count() == 0

        _click(teacher, "Reveal")
        chart = kit.main(teacher).locator('[data-testid="stPlotlyChart"]')
        expect(chart).to_have_count(1, timeout=WAIT_MS)
        ticks = chart.locator(".ytick text")
        expect(ticks).to_have_count(4)
        bars = chart.locator("text.bartext")
        expect(bars).to_have_count(4)
        assert [t.strip() for t in bars.all_text_contents()] == ["1 · 25 %"] * 4
        # Top to bottom as drawn (SVG text: textContent; the reversed axis lists them upwards).
        placed = ticks.evaluate_all(
            "els => els.map(e => [e.getBoundingClientRect().top, e.textContent.trim()])"
        )
        shown = " ".join(text for _, text in sorted(placed))
        assert shown.startswith("Correct ✓") and shown.endswith("Could not be read"), shown
        expect(kit.main(teacher)).to_contain_text("Most common slip: Drops the minus sign")
        page_text = teacher.locator("body").inner_text()
        assert all(text not in page_text for text in SENT.values())
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        kit.screenshot(teacher, f"live_formula_histogram_1024x768_{database}")
        assert box["y"] + box["height"] <= PROJECTOR["height"], box
        # Below it, the most common slip redone by hand, and the vote that follows it.
        redo = kit.main(teacher).get_by_role("button", name="Ask the room to redo it")
        redo.scroll_into_view_if_needed()
        expect(kit.main(teacher)).to_contain_text("Redo the most common slip by hand")
        kit.screenshot(teacher, f"live_formula_redo_1024x768_{database}")

        histogram = store.status(code, secret).histogram
        assert sum(histogram[1].values()) == len(SENT)
        assert histogram[1][Judged("correct")] == 1 and histogram[1][Judged("unreadable")] == 1
        verdicts = {"right": "Right.", "slip": "The mistake:", "unnamed": "none of the slips",
                    "unreadable": "could not read your formula"}  # fmt: skip
        for kind, (_, tab) in students.items():
            expect(_bar(tab)).to_contain_text(verdicts[kind], timeout=WAIT_MS)
        _, slipped = students["slip"]
        _bar(slipped).get_by_text("The mistake:").scroll_into_view_if_needed()
        kit.screenshot(slipped, f"live_formula_student_slip_390x844_{database}")
        store.close()
        for tab in [teacher, *(tab for _, tab in students.values())]:
            assert not kit.problems(tab)
    finally:
        for context in contexts:
            context.close()
