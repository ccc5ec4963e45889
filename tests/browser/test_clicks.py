"""One click, one action, while a fragment's timer ticks (ui/session/clicks.py).

Streamlit's browser code sends a click on a zero-delay timer; a `run_every` fragment's timer
that fires first sends the click too, and the server ran its callback twice: one Next moved an
instructor's Stepper two steps (seen once in CI). Here the tab holds the click's zero-delay
timers until a timer's tick has sent a message, so each click below is delivered twice, every
time; without the guard the test below fails at its first click (tried).
"""

from __future__ import annotations

import lnlab_browser_kit as kit
import pytest
from playwright.sync_api import Page, expect

from ui.live import connect
from ui.live.store import Store

pytestmark = pytest.mark.browser

# Clicks the button in the element `selector`, holding the zero-delay timers the click sets
# (Streamlit sends the click from one) until the tab's next message, which only a fragment's
# timer can send meanwhile, has gone; then lets them run, 300 ms later, when the server has
# taken the tick's run. Resolves when the click's own message has been sent.
HELD_CLICK = """(selector) => new Promise((sent) => {
  const native = window.setTimeout;
  const held = [];
  window.setTimeout = (fn, delay, ...rest) =>
    delay ? native(fn, delay, ...rest) : held.push(() => fn(...rest));
  try {
    document.querySelector(`${selector} button`).click();
  } finally {
    window.setTimeout = native;
  }
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    WebSocket.prototype.send = send;
    native(() => { held.forEach((run) => run()); sent(); }, 300);
    return send.call(this, data);
  };
})"""


# Hands every message from the server to the app `window.__lnlabHoldMs` late (in order), so
# that the run a move starts answers after the next moves were drawn; and keeps every step
# heading the page shows, in order, in `window.__lnlabSeen`.
LATE_ANSWERS = """
(() => {
  const add = window.WebSocket.prototype.addEventListener;
  window.WebSocket.prototype.addEventListener = function (type, listener, ...rest) {
    const late = (event) => {
      const ms = window.__lnlabHoldMs || 0;
      if (ms) setTimeout(() => listener.call(this, event), ms);
      else listener.call(this, event);
    };
    return add.call(this, type, type === "message" ? late : listener, ...rest);
  };
  window.__lnlabSeen = [];
  new MutationObserver(() => {
    const heading = document.querySelector('[data-testid="stMain"] h2');
    const step = heading && heading.textContent.match(/^Step (\\d+) of 20/);
    if (step && window.__lnlabSeen.at(-1) !== Number(step[1]))
      window.__lnlabSeen.push(Number(step[1]));
  }).observe(document, { subtree: true, childList: true, characterData: true });
})();
"""


def _held_click(page: Page, key: str = "", selector: str = "") -> None:
    """Click the button of element key `key` (or in `selector`), delivered twice."""
    page.evaluate(HELD_CLICK, selector or f".st-key-{key}")
    kit.wait_for_script(page)


def _heading(page: Page):
    return kit.main(page).locator("h2").first


def _start_a_class(page: Page, server: str) -> tuple[str, str]:
    """Start a class in this tab; returns its code and secret."""
    kit.open_page(page, server, "class")
    kit.rerun_after(page, kit.main(page).get_by_role("button", name="Start a class").click)
    link = kit.main(page).locator('[data-testid="stCode"]').inner_text().strip()
    (teach,) = [c["value"] for c in page.context.cookies() if c["name"] == connect.TEACH_COOKIE]
    return link.rsplit("=", 1)[1], teach.split(".", 1)[1]


def test_every_class_click_acts_once(browser, page, server):
    """The instructor's Next, Prev, Ask, Discuss and vote again and End, and a student's Vote.
    The student joins first, so the class bar's 30 s timer runs while the instructor clicks."""
    code, secret = _start_a_class(page, server)
    link = kit.main(page).locator('[data-testid="stCode"]').inner_text().strip()
    store = Store(connect.database_url())

    def questions() -> int:
        return len({row["question"] for row in store.results(code, secret)})

    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.add_init_script(kit.INIT_SCRIPT)
    try:
        student = context.new_page()
        student.goto(link)
        bar = student.locator(".st-key-live_bar")
        expect(bar).to_contain_text("your lab follows the instructor")

        kit.goto_in_session(page, "stepper")
        # The Stepper steps in the browser; each move sends the step itself, not a click, so a
        # delivery twice moves no further.
        nav = kit.main(page).locator(".st-key-stepper_nav button")
        for label, step in (("Next", 2), ("Next", 3), ("Prev", 2)):
            nav.filter(has_text=label).click()
            expect(_heading(page)).to_contain_text(f"Step {step} of 20", timeout=2_000)
        kit.wait_for_script(page)

        kit.sidebar(page).get_by_role("link", name="Class controls").click()
        kit.wait_for_script(page)
        _held_click(page, "live_ask_now")
        assert questions() == 1
        _held_click(page, "live_again")
        assert store.status(code, secret).question.round == 2
        # A refusal would say the class had moved on: the second delivery must not be refused.
        expect(kit.main(page)).not_to_contain_text("moved on")
        _held_click(page, "live_ask_now")
        assert questions() == 2

        bar.locator('[role="radiogroup"] label').first.click()
        expect(bar.get_by_role("button", name="Vote")).to_be_enabled()
        _held_click(student, selector='[class*="st-key-live_vote_"]')
        expect(bar).to_contain_text("Your vote is counted")
        assert sum(int(row.get("round 1", 0)) for row in store.results(code, secret)) == 1
        # A second delivery would find no answer chosen (the bar no longer draws the choice),
        # and its reason would wait to be shown under the next question.
        kit.rerun_after(page, kit.main(page).get_by_role("button", name="Next question").click)
        # The answer's choice is drawn again (the first radio; "How sure" is the second).
        expect(bar.locator('[data-testid="stRadio"]').first).to_be_visible()
        expect(bar.locator('[data-testid="stAlert"]')).to_have_count(0)

        kit.main(page).get_by_role("button", name="End the class").click()  # asks to confirm
        _held_click(page, "live_end")
        expect(kit.main(page).get_by_role("button", name="Start a class")).to_be_visible()
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    finally:
        context.close()


def test_a_late_answer_does_not_undo_the_moves_drawn_after_it(page, server):
    """An instructor's every move reruns the Stepper's fragment (to publish the step). A run
    answers late on a loaded server; the step it carries is one the browser already left, and
    going back to it undid the next moves: Next, Next, Prev showed 2, 3, 2, then 3 again (the
    answer to the second Next), and a fast Prev looked like a Next."""
    code, _ = _start_a_class(page, server)
    page.add_init_script(LATE_ANSWERS)
    # The instructor's cookie makes the new session the class's instructor again.
    kit.open_page(page, server, "stepper")
    expect(_heading(page)).to_contain_text("Step 1 of 20")
    page.evaluate("window.__lnlabHoldMs = 1500")
    nav = kit.main(page).locator(".st-key-stepper_nav button")
    for label in ("Next", "Next", "Prev"):
        nav.filter(has_text=label).click()
        page.wait_for_timeout(500)  # drawn and told to the server (within its 250 ms idle wait)
    page.wait_for_timeout(4_000)  # every late answer has arrived
    kit.wait_for_script(page)
    assert page.evaluate("window.__lnlabSeen") == [1, 2, 3, 2]
    expect(_heading(page)).to_contain_text("Step 2 of 20")
    follow = Store(connect.database_url()).glance(code).follow
    assert "step=2" in follow.query.split("&"), follow
