"""A following student's Stepper shows its step's lines, and only them, from the first step on;
the class's next step reaches its walk from the server's route before the run that brings the
step's lines.

A following student's tab draws the instructor's step's lines alone (the class redraws them
with every step, pages/stepper/browser.py), where every other tab draws the twenty steps' and
lets walk.js show one. Both ways meet when the student presses Next and leaves the class's
step (the twenty steps' lines arrive after walk.js drew the new step) and again when they go
back. Each time, the only forward line on screen is the one of the step in the heading.
"""

from __future__ import annotations

import re
import sys

import lnlab_browser_kit as kit
import pytest
from playwright.sync_api import expect

if str(kit.ROOT) not in sys.path:
    sys.path.insert(0, str(kit.ROOT))

from bench.local_server import LocalServer
from pages.stepper.formulas import FORWARD
from teaching.steps import step
from ui.live.student import POLL_S

pytestmark = pytest.mark.browser
FOLLOW_MS = 60_000  # generous for a loaded machine; bench/ measures the delay
# The TeX source of every forward line the page shows (KaTeX keeps it in an annotation).
SHOWN_LINES = """() => [...document.querySelectorAll('[class*="st-key-step_lines_"]')]
    .filter((part) => part.checkVisibility())
    .map((part) => part.querySelector('annotation[encoding="application/x-tex"]')?.textContent)"""


def _heading(tab):
    return tab.locator(".lnlab-heading")


def _bar(tab):
    return tab.locator(".st-key-live_bar")


def _only_the_lines_of(tab, number: int) -> None:
    """Wait until the one forward line on screen is step `number`'s."""
    tab.wait_for_function(
        f"""(want) => {{ const shown = ({SHOWN_LINES})();
            return shown.length === 1 && shown[0]?.trim() === want; }}""",
        arg=FORWARD[step(number).node].strip(),
        timeout=FOLLOW_MS,
        polling=200,
    )


class _HeldRuns:
    """The server's messages to a tab, passed on, or held back until released."""

    def __init__(self) -> None:
        self.tab_side = None
        self.held: list[str | bytes] | None = None

    def relay(self, socket) -> None:
        self.tab_side = socket
        socket.connect_to_server().on_message(self.arrived)

    def arrived(self, message: str | bytes) -> None:
        if self.held is None:
            self.tab_side.send(message)
        else:
            self.held.append(message)

    def hold(self) -> None:
        self.held = []

    def release(self) -> None:
        held, self.held = self.held, None
        for message in held:
            self.tab_side.send(message)


def _hold_runs(tab) -> _HeldRuns:
    held = _HeldRuns()
    tab.route_web_socket("**/_stcore/stream", held.relay)
    return held


def _next(tab) -> None:
    kit.main(tab).locator(".st-key-stepper_nav button").filter(has_text="Next").click()


def test_a_following_student_sees_the_lines_of_the_step_on_screen(browser, tmp_path):
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    contexts = []
    with LocalServer(launcher=True, env={"LNLAB_CLASS_DB": url}) as server:
        base = f"http://127.0.0.1:{server.port}"
        try:
            teacher_context = browser.new_context(viewport={"width": 1024, "height": 768})
            student_context = browser.new_context(viewport={"width": 390, "height": 844})
            contexts += [teacher_context, student_context]
            for context in contexts:
                context.add_init_script(kit.INIT_SCRIPT)
            teacher, student = teacher_context.new_page(), student_context.new_page()
            held = _hold_runs(student)
            for tab in (teacher, student):
                tab.set_default_timeout(FOLLOW_MS)
            kit.open_page(teacher, base, "class")
            kit.main(teacher).get_by_role("button", name="Start a class").click()
            link = kit.main(teacher).locator('[data-testid="stCode"]').inner_text().strip()
            student.goto(link)
            expect(_bar(student)).to_contain_text("your lab follows the instructor")
            expect(_heading(student)).to_contain_text("Step 1 of 20", timeout=FOLLOW_MS)

            waiting = kit.main(student).get_by_text("The instructor has not opened a page yet")
            expect(waiting).to_be_visible()
            kit.main(teacher).get_by_role("link", name="Teach on the Stepper").click()
            expect(_heading(teacher)).to_contain_text("Step 1 of 20", timeout=FOLLOW_MS)
            # The lab stops saying so when the class's watcher wakes it, before the bar's own
            # timer would (student.POLL_S).
            expect(waiting).to_have_count(0, timeout=POLL_S * 1000 / 2)
            for number in (2, 3):
                _next(teacher)
                expect(_heading(student)).to_contain_text(f"Step {number} of 20", timeout=FOLLOW_MS)
                _only_the_lines_of(student, number)
                _only_the_lines_of(teacher, number)
            # The student's page holds the step's lines alone, not the twenty steps'.
            assert student.locator('[class*="st-key-step_lines_"]').count() == 1

            # The next step reaches the walk from the server's route (pages/stepper/feed.py) with no
            # run: with the runs' messages held back, the heading moves and step 3's lines go;
            # step 4's come with the run.
            held.hold()
            _next(teacher)
            expect(_heading(student)).to_contain_text("Step 4 of 20", timeout=FOLLOW_MS)
            assert student.evaluate(SHOWN_LINES) == []
            held.release()
            _only_the_lines_of(student, 4)
            expect(_heading(student)).to_contain_text("Step 4 of 20")

            _next(student)  # leaves the class's step: the twenty steps' lines come with it
            expect(_heading(student)).to_contain_text("Step 5 of 20")
            expect(_bar(student)).to_contain_text("you left the instructor's step")
            expect(student.locator(".st-key-step_lines_20")).to_be_attached(timeout=FOLLOW_MS)
            _only_the_lines_of(student, 5)
            _bar(student).get_by_role("button", name="Back to the instructor").click()
            expect(_heading(student)).to_contain_text("Step 4 of 20", timeout=FOLLOW_MS)
            expect(student.locator(".st-key-step_lines_20")).not_to_be_attached(timeout=FOLLOW_MS)
            _only_the_lines_of(student, 4)
            assert not re.search(r"Traceback|Error", server.log()[-4000:]), server.log()[-4000:]
        finally:
            for context in contexts:
                context.close()
