"""A live class in real Chromium tabs: how soon the instructor's step is on every student's screen.

    python -m bench.bench_class_browsers --students 12 --steps 3

Two app processes behind HAProxy (deploy/replicas.py), one SQLite store in a temporary folder.
The instructor (1024x768, presenter mode) starts a class on the Class page and stays there while
every student (390x844) opens the join link; their labs wait on the Stepper at step 1, where a
class starts (ui/live/follow.py). The instructor then opens the Stepper by the Class page's link
(the first step) and clicks Next --steps times, --step-every s apart. A student has the step
when their page's heading says "Step N of 20", the first step when their lab stops saying
the instructor has not opened a page yet (each timed in the page, at the frame that
shows it); the delay runs from the instructor's click (the click event in their tab, not
Playwright's call, which first waits for the button to be still). The
first step and the first Next (the first move that changes the students' screens) are reported
apart from all the Next clicks, with how many views the instructor published to the class (one
per click when nothing sends the class back a step). Results go to
bench/results/class_browsers.json; the exit status is 1 if a goal was missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

from playwright.sync_api import Page, expect, sync_playwright

from bench.bench_load import percentile
from bench.chromium import CHROMIUM, CHROMIUM_ARGS
from bench.results import table, write_result
from deploy.replicas import Replicas
from ui.live.follow import WAITING_KEY
from ui.live.store import Store

GOAL_MS = 1500.0  # issue 39: every following student has the step within 1.5 s at p95
WAIT_MS = 120_000  # a step not shown by then is a miss
HEADING = "[data-testid='stMain'] h2"


# When a tab first shows what the instructor's click changed: the frame after the change
# (Date.now(), as the click is timed in the instructor's tab), watched in the page from before
# the click. Waiting on the tabs one by one, as Playwright's assertions do, would time each tab
# no sooner than the one before it was seen, plus the assertion's polling.
WATCH = """
window.__lnlabSeen = {};
document.addEventListener("click", () => { window.__lnlabClicked = Date.now(); }, true);
window.__lnlabWatch = (key, selector, text, present) => {
  const holds = () => {
    const element = document.querySelector(selector);
    const shown = element !== null && element.checkVisibility();
    return (shown && element.textContent.includes(text)) === present;
  };
  const observer = new MutationObserver(() => {
    if (key in window.__lnlabSeen || !holds()) return;
    window.__lnlabSeen[key] = 0;
    observer.disconnect();
    requestAnimationFrame(() => { window.__lnlabSeen[key] = Date.now(); });
  });
  observer.observe(document, {subtree: true, childList: true, characterData: true});
};
"""
# What a student's lab says while the instructor has not opened a page (follow.waiting_note),
# in its box: gone or hidden once the first view reaches the student.
WAITING_BOX = f".st-key-{WAITING_KEY}"
WAITING = "has not opened a page yet"


def _tab(browser, viewport: dict[str, int]) -> Page:
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(WATCH)
    return context.new_page()


def _watch(tabs: list[Page], key: str, selector: str, text: str, present: bool) -> None:
    for tab in tabs:
        tab.evaluate(
            "([key, selector, text, present]) => window.__lnlabWatch(key, selector, text, present)",
            [key, selector, text, present],
        )


def _click(teacher: Page, target) -> float:
    """Click `target` in the instructor's tab; when the click happened there (Date.now())."""
    teacher.evaluate("window.__lnlabClicked = 0")
    target.click()
    return teacher.wait_for_function("window.__lnlabClicked").json_value()


def _delays(tabs: list[Page], key: str, clicked: float) -> list[float]:
    """ms from the click (Date.now()) until each tab showed what `key` watched."""
    return [
        tab.wait_for_function(f"window.__lnlabSeen[{json.dumps(key)}] || 0").json_value() - clicked
        for tab in tabs
    ]


def run(students: int, steps: int, step_every: float) -> tuple[list[float], list[float], int]:
    """The first step's delays and the later steps' (ms), one per student and step, and the
    views the instructor published."""
    with tempfile.TemporaryDirectory(prefix="lnlab-class-") as folder:
        db = f"sqlite:///{folder}/classes.sqlite3"
        first, later, code = _class(db, students, steps, step_every)
        return first, later, Store(db).glance(code).follow.version


def _class(db: str, students: int, steps: int, step_every: float):
    with Replicas(2, env={"LNLAB_CLASS_DB": db}) as replicas, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        url = f"http://127.0.0.1:{replicas.port}"
        teacher = _tab(browser, {"width": 1024, "height": 768})
        teacher.goto(f"{url}/class?presenter=1")
        teacher.get_by_role("button", name="Start a class").click()
        link = teacher.locator("[data-testid='stCode']").first.inner_text().strip()
        tabs = []
        for _ in range(students):
            tab = _tab(browser, {"width": 390, "height": 844})
            tab.goto(link)
            expect(tab.locator(".st-key-live_bar")).to_contain_text(
                "follows the instructor", timeout=WAIT_MS
            )
            tabs.append(tab)
        # Every lab mounted on the Stepper (on a loaded machine, seconds after the bar shows),
        # then quiet: what the first click costs, not what joining did.
        for tab in tabs:
            expect(tab.locator(HEADING).first).to_contain_text("Step 1 of 20", timeout=WAIT_MS)
        time.sleep(3.0)
        _watch(tabs, "first", WAITING_BOX, WAITING, present=False)
        clicked = _click(teacher, teacher.get_by_role("link", name="Teach on the Stepper"))
        first = _delays(tabs, "first", clicked)
        later: list[float] = []
        for step in range(2, steps + 2):
            time.sleep(step_every)
            _watch(tabs, str(step), HEADING, f"Step {step} of 20", present=True)
            clicked = _click(teacher, teacher.get_by_role("button", name="Next"))
            later += _delays(tabs, str(step), clicked)
        time.sleep(step_every)  # anything the instructor's tab publishes after the last step
        browser.close()
    return first, later, link.rsplit("=", 1)[1]


def _summary(delays: list[float]) -> str:
    return (
        f"{statistics.median(delays):.0f} / {percentile(delays, 95):.0f} / {max(delays):.0f} ms"
        f" ({len(delays)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--steps", type=int, default=3, help="Next clicks after the first step")
    parser.add_argument("--step-every", type=float, default=3.0, help="s between steps")
    args = parser.parse_args(argv)
    if not (1 <= args.students <= 30 and 1 <= args.steps <= 10):
        parser.error("--students 1..30, --steps 1..10")
    load = os.getloadavg()[0]
    first, later, published = run(args.students, args.steps, args.step_every)
    met = (
        max(percentile(first, 95), percentile(later, 95)) < GOAL_MS and published == args.steps + 1
    )
    rows = [
        ["first step (the Stepper opened)", _summary(first), f"p95 < {GOAL_MS:.0f} ms"],
        ["the first Next", _summary(later[: args.students]), f"p95 < {GOAL_MS:.0f} ms"],
        ["every Next", _summary(later), f"p95 < {GOAL_MS:.0f} ms"],
        ["views published by the instructor", f"{published} for {args.steps + 1} clicks",
         "one per click"],
    ]  # fmt: skip
    columns = ["on every student's screen, p50 / p95 / max", "delay", "goal"]
    for line in rows:
        print(" | ".join(line))
    write_result(
        "class_browsers",
        f"5f. A live class in {args.students} Chromium tabs",
        order=5.5,
        text=(
            f"`python -m bench.bench_class_browsers --students {args.students} --steps "
            f"{args.steps}`: two replicas behind HAProxy; delay from the instructor's click to "
            f"the step's heading on each student's screen. Load average at the start {load:.1f}."
        ),
        tables=[table(columns, rows)],
        raw={"first_ms": first, "later_ms": later, "published": published, "load": load},
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
