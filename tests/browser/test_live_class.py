"""A live class in real browsers through `./run.sh --replicas 2`: an instructor and eight students.

Both app processes share one SQLite store (LNLAB_CLASS_DB), as on one machine. The instructor
runs the class from one projector screen (1024x768, presenter mode, no sidebar): the join code
and its QR image, then the question, count, timer and buttons, then the chart, all above the
fold. The students join by the link the Class page shows (one types the code on the Overview),
land on both processes, follow the instructor from the first step, vote, see the reveal and
the class's chart, vote again; one who presses Next is told they left the instructor's step and
goes back with one click; most say how sure they are on the revote, and the reveal's bars are
split by it; a second tab that loses a vote race is told its click was refused, under that
question, and the message goes with it. The instructor's own question shows its Markdown and
HTML characters as typed; a countdown closes its first round, "Close now" its second, neither
revealing.
One process dies while a student's vote is on its way (nothing acknowledged is lost; its
browsers reconnect and find their votes, and the student whose vote was lost keeps the choice,
is told it did not arrive, and votes again) and the instructor reloads (the class stays).
Every count is checked on the instructor's page, in the file and in the store; a student can
neither reveal nor vote twice; End asks first. Screenshots: the instructor's joining, asking
and revealed screens at 1024x768, a student's question, lost vote, refused vote and revealed
chart at 390x844 (screenshots/).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import lnlab_browser_kit as kit
import pytest
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from deploy.replicas import COOKIE, HAPROXY, Replicas  # noqa: E402
from ui.live.store import Store  # noqa: E402
from ui.live.student import POLL_S  # noqa: E402

# Nine browsers and two app processes: the class takes minutes on a busy machine.
pytestmark = [pytest.mark.browser, pytest.mark.timeout(1500)]
STUDENTS = 8
PROJECTOR = {"width": 1024, "height": 768}
PHONE = {"width": 390, "height": 844}
CONNECTED = """() => document.querySelector('[data-testid="stApp"]')
    ?.getAttribute("data-test-connection-state") === "CONNECTED" """
# Swallows the message that carries the class bar's Vote click, as a connection that drops
# while it is sent does.
LOSE_THE_VOTE = """() => {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!new TextDecoder().decode(data).includes("live_vote_")) return send.call(this, data);
    WebSocket.prototype.send = send;
    window.__lnlabVoteLost = true;
  };
}"""
# Drops the ticks of the class bar's slow timer (student.POLL_S: Streamlit's browser code reruns
# a fragment with run_every on a setInterval of that many ms), in the one tab that races: a tick
# between the other tab's vote and its click redraws its form as counted, and there is no Vote
# left to refuse (with a tick forced there the click waits 30 s for a Vote that is not drawn).
# On a loaded machine the votes before the click take long enough for a tick to fall there.
HOLD_THE_SLOW_TIMER = f"""(() => {{
  const setInterval = window.setInterval;
  window.setInterval = (tick, ms, ...args) =>
    setInterval(ms === {round(POLL_S * 1000)} ? () => {{}} : tick, ms, ...args);
}})();"""
FOLLOW_MS = 60_000  # generous for a loaded machine; bench/bench_class.py measures the delay


@pytest.fixture(scope="module")
def classroom(tmp_path_factory) -> Iterator[tuple[Replicas, str]]:
    if not (shutil.which("haproxy") or os.access(HAPROXY, os.X_OK)):
        reason = "no haproxy (apt-get install haproxy)"
        if os.environ.get("LNLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{reason}; CI installs it", pytrace=False)
        pytest.skip(reason)
    url = f"sqlite:///{tmp_path_factory.mktemp('live') / 'classes.sqlite3'}"
    # A page's first run on a cold process can take seconds: waits here are for runs, not
    # latencies (the follow waits say FOLLOW_MS).
    expect.set_options(timeout=30_000)
    try:
        with Replicas(2, env={"LNLAB_CLASS_DB": url}) as replicas:
            yield replicas, url
    finally:
        expect.set_options(timeout=5_000)


def _tab(browser, viewport: dict[str, int]):
    context = browser.new_context(viewport=viewport, accept_downloads=True)
    context.add_init_script(kit.INIT_SCRIPT)
    context.set_default_timeout(30_000)
    return context, context.new_page()


def _bar(tab):
    return tab.locator(".st-key-live_bar")


def _choose(tab, option: str) -> None:
    """Click a radio's choice in the class bar (an answer, or how sure)."""
    _bar(tab).locator('[data-testid="stRadio"] label').filter(has_text=re.compile(
        f"^{re.escape(option)}$")).click()  # fmt: skip


def _vote(tab, option: str, sure: str | None = None) -> None:
    _choose(tab, option)
    if sure is not None:
        _choose(tab, sure)
    bar = _bar(tab)
    bar.get_by_role("button", name="Vote").click()
    expect(bar).to_contain_text("Your vote is counted", timeout=FOLLOW_MS)


def _heading(tab):
    """The Stepper's step heading (drawn by the browser, pages/stepper/walk.js)."""
    return tab.locator(".lnlab-heading")


def _next(tab) -> None:
    kit.main(tab).locator(".st-key-stepper_nav button").filter(has_text="Next").click()


def _metric(tab, label: str):
    return kit.main(tab).locator('[data-testid="stMetric"]').filter(has_text=label)


def _click(tab, name: str) -> None:
    kit.rerun_after(tab, kit.main(tab).get_by_role("button", name=name).click)


def _above_the_fold(tab, *locators) -> None:
    """Each is on the projector's screen without scrolling: within the 768 px of the window."""
    tab.evaluate("window.scrollTo(0, 0)")
    for locator in locators:
        expect(locator).to_be_visible()
        box = locator.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= PROJECTOR["height"], box


def _every_option_drawn(chart, options, answer) -> None:
    """The chart's category axis names every option, the right one ticked (an option like "0"
    or "eps" is a name: a numeric axis once drew only the numbers)."""
    ticks = chart.locator(".xtick text")
    expect(ticks).to_have_count(len(options))
    shown = [t.strip() for t in ticks.all_text_contents()]  # SVG text has no innerText
    assert shown == [f"{o} ✓" if i == answer else o for i, o in enumerate(options)], shown
    # The count and share above each bar (a text trace: the bars are stacks, ui/live/tally.py);
    # plotly draws the traces after the axes, and may yield in between.
    shares = chart.locator(".textpoint text").filter(has_text="%")
    expect(shares.nth(len(options) - 1)).to_be_attached()  # at least one per option


def test_a_class_of_eight_through_two_replicas(browser, classroom, tmp_path):
    replicas, db = classroom
    url = f"http://127.0.0.1:{replicas.port}"
    contexts = []
    try:
        teacher_context, teacher = _tab(browser, PROJECTOR)
        contexts.append(teacher_context)
        kit.open_page(teacher, url, "class?presenter=1")
        _click(teacher, "Start a class")
        assert not kit.sidebar(teacher).is_visible()  # presenter mode: the screen is the class
        link = kit.main(teacher).locator('[data-testid="stCode"]').inner_text().strip()
        code = link.rsplit("=", 1)[1]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?join=[2-9A-HJKMNP-Z]{8}", link), link
        qr = kit.main(teacher).get_by_role("img", name=re.compile("^QR code of the join link"))
        expect(qr).to_be_visible()
        assert qr.evaluate("img => img.complete && img.naturalHeight > 100")
        _above_the_fold(teacher, qr, kit.main(teacher).locator("h3").filter(has_text="Join code"))
        kit.screenshot(teacher, "live_class_join_1024x768")
        # The secret stays in the instructor's browser: not in the link, not on the screen.
        (secret,) = [c["value"] for c in teacher_context.cookies() if c["name"] == "lnlab_teach"]
        secret = secret.split(".", 1)[1]
        assert secret not in link and secret not in teacher.locator("body").inner_text()

        students = []
        for n in range(STUDENTS):
            context, tab = _tab(browser, PHONE)
            contexts.append(context)
            if n == 0:  # one types the code read aloud on the Overview
                kit.open_page(tab, url, "")
                kit.main(tab).get_by_label("In a live class? Type its join code").fill(
                    f"{code[:4].lower()}-{code[4:]}"
                )
                kit.main(tab).get_by_role("button", name="Join").click()
            else:
                tab.goto(link, timeout=120_000)  # (a loaded machine: the wait is for a load)
            expect(_bar(tab)).to_contain_text("your lab follows the instructor")
            students.append((context, tab))
        replicas_used = {
            c["value"] for context, _ in students for c in context.cookies() if c["name"] == COOKIE
        }
        assert replicas_used == {"app0", "app1"}
        expect(_metric(teacher, "Students joined")).to_contain_text(str(STUDENTS))

        # Follow from the first step: the instructor goes to the Stepper by the Class page's own
        # link (no sidebar), every student's lab follows, then three steps.
        # (No wait for the page to fall quiet: the instructor's page publishes every second and
        # eight students' runs share the machine; the heading is the sign.)
        kit.main(teacher).get_by_role("link", name="Teach on the Stepper").click()
        # (The browser draws the step after the page's run: on a loaded machine, seconds.)
        expect(_heading(teacher)).to_contain_text("Step 1 of 20", timeout=FOLLOW_MS)
        for _, tab in students:
            expect(_heading(tab)).to_contain_text("Step 1 of 20", timeout=FOLLOW_MS)
        for step in (2, 3, 4):
            _next(teacher)  # the Stepper moves in the browser; its step goes to the server
            expect(_heading(teacher)).to_contain_text(f"Step {step} of 20")
            for _, tab in students:
                expect(_heading(tab)).to_contain_text(f"Step {step} of 20", timeout=FOLLOW_MS)
        # One student stops following and rejoins with one click.
        _, explorer = students[0]
        _bar(explorer).get_by_role("button", name="Stop following").click()
        expect(_bar(explorer)).to_contain_text("exploring on your own")
        _bar(explorer).get_by_role("button", name="Follow the instructor").click()
        expect(_bar(explorer)).to_contain_text("your lab follows the instructor")
        expect(_heading(explorer)).to_contain_text("Step 4 of 20")
        # Another presses Next: told they left the instructor's step, and brought back.
        _, wanderer = students[1]
        _next(wanderer)
        expect(_heading(wanderer)).to_contain_text("Step 5 of 20")
        expect(_bar(wanderer)).to_contain_text("you left the instructor's step")
        _bar(wanderer).get_by_role("button", name="Back to the instructor").click()
        expect(_heading(wanderer)).to_contain_text("Step 4 of 20")
        expect(_bar(wanderer)).to_contain_text("your lab follows the instructor")

        # Ask step 4's question (the instructor's current step: the selectbox's first choice).
        kit.main(teacher).get_by_role("link", name=re.compile("back to the class controls")).click()
        kit.wait_for_script(teacher)
        _click(teacher, "Ask")
        # The question's count on the instructor's page, before the store is read: the page's
        # one-second timers can let the click's run look finished before it has started.
        expect(_metric(teacher, "Answered, round 1")).to_be_visible()
        store = Store(db)
        question = store.status(code, secret).question
        assert question.asked.title.startswith("Step 4.")
        options, answer = question.asked.options, question.asked.answer
        wrong = (answer + 1) % len(options)
        first = [answer, answer, answer, wrong, wrong, answer, wrong, answer]  # 5 of 8 right
        kit.screenshot(students[0][1], "live_class_student_question_390x844")
        for (_, tab), choice in zip(students[:-1], first[:-1], strict=True):
            expect(_bar(tab)).to_contain_text(question.asked.title)
            _vote(tab, options[choice])
        _above_the_fold(
            teacher,
            _metric(teacher, "Answered, round 1"),
            kit.main(teacher).get_by_role("button", name="Reveal"),
            kit.main(teacher).get_by_role("button", name="Next question"),
        )
        kit.screenshot(teacher, "live_class_asking_1024x768")
        expect(_metric(teacher, "Answered, round 1")).to_contain_text(
            f"{STUDENTS - 1} of {STUDENTS}"
        )
        # Before the reveal nobody sees the distribution.
        assert kit.main(teacher).locator('[data-testid="stPlotlyChart"]').count() == 0
        # The last student's Vote is in flight when their process dies: the message never
        # arrives, the process starts again, and every browser on it reconnects to a fresh
        # session. Nothing acknowledged is lost; the last student's choice is kept and they are
        # told their vote did not arrive, and vote again.
        (late_context, late), late_choice = students[-1], first[-1]
        expect(_bar(late)).to_contain_text(question.asked.title)
        kit.rerun_after(late, lambda: _choose(late, options[late_choice]))
        late.evaluate(LOSE_THE_VOTE)
        _bar(late).get_by_role("button", name="Vote").click()
        late.wait_for_function("window.__lnlabVoteLost === true")
        (replica,) = [c["value"] for c in late_context.cookies() if c["name"] == COOKIE]
        replicas.restart(int(replica.removeprefix("app")))
        for _, tab in [(None, teacher), *students]:
            tab.wait_for_function(CONNECTED, timeout=60_000)
        for _, tab in students[:-1]:
            expect(_bar(tab)).to_contain_text("Your vote is counted", timeout=FOLLOW_MS)
        expect(_bar(late)).to_contain_text("Your vote did not arrive", timeout=FOLLOW_MS)
        assert sum(store.status(code, secret).counts[1]) == STUDENTS - 1
        kit.screenshot(late, "live_class_student_vote_lost_390x844")
        _bar(late).get_by_role("button", name="Vote").click()
        expect(_bar(late)).to_contain_text(
            f"Your vote is counted: {options[late_choice]}", timeout=FOLLOW_MS
        )
        expect(_metric(teacher, "Answered, round 1")).to_contain_text(f"{STUDENTS} of {STUDENTS}")
        assert sum(store.status(code, secret).counts[1]) == STUDENTS

        # A student can neither vote twice (a second tab of the same browser: it rejoins,
        # follows, and finds the vote counted) nor reveal (no control, and /class without the
        # secret only offers to start a class of one's own).
        context, _ = students[3]
        second = context.new_page()
        second.goto(f"{url}/class")
        expect(_bar(second)).to_contain_text("Your vote is counted", timeout=FOLLOW_MS)
        assert _bar(second).get_by_role("button", name="Vote").count() == 0
        second.close()
        stranger_context, stranger = _tab(browser, PHONE)
        contexts.append(stranger_context)
        kit.open_page(stranger, url, "class")
        assert kit.main(stranger).get_by_role("button", name="Start a class").count() == 1
        assert kit.main(stranger).get_by_role("button", name="Reveal").count() == 0
        for _, tab in students:
            # (The stepper's own lesson has Reveal buttons of its own, outside the class bar.)
            assert _bar(tab).get_by_role("button", name="Reveal").count() == 0
            for control in ("Discuss and vote again", "End the class", "Ask"):
                assert tab.get_by_role("button", name=control, exact=True).count() == 0
        expect(_metric(teacher, "Answered, round 1")).to_contain_text(f"{STUDENTS} of {STUDENTS}")

        _click(teacher, "Reveal")
        expect(kit.main(teacher)).to_contain_text(f"The answer: {options[answer]}")
        chart = kit.main(teacher).locator('[data-testid="stPlotlyChart"]')
        expect(chart).to_have_count(1)
        _every_option_drawn(chart, options, answer)
        for (_, tab), choice in zip(students, first, strict=True):
            verdict = "Right:" if choice == answer else f"You chose {options[choice]}"
            expect(_bar(tab)).to_contain_text(verdict, timeout=FOLLOW_MS)
            # Every student sees the class's votes after the reveal.
            _every_option_drawn(_bar(tab).locator('[data-testid="stPlotlyChart"]'), options, answer)

        # Discuss and vote again: seven of eight are right now, and most say how sure.
        _click(teacher, "Discuss and vote again")
        again = [answer, answer, answer, answer, wrong, answer, answer, answer]
        sures = ["sure", "sure", "fairly sure", "a guess", "a guess", None, "sure", None]
        # A second tab of one student's browser, its form drawn and a choice made before the
        # first tab votes (a vote elsewhere does not redraw it): its Vote is refused, the
        # message under this question, and gone with it.
        racer_context, _ = students[2]
        racer = racer_context.new_page()
        racer.add_init_script(HOLD_THE_SLOW_TIMER)  # redrawn only by its clicks and wake-ups
        racer.goto(f"{url}/stepper")
        expect(_bar(racer)).to_contain_text("vote again", timeout=FOLLOW_MS)
        kit.rerun_after(racer, lambda: _choose(racer, options[wrong]))
        for n, ((_, tab), choice, sure) in enumerate(zip(students, again, sures, strict=True)):
            expect(_bar(tab)).to_contain_text("vote again", timeout=FOLLOW_MS)
            _vote(tab, options[choice], sure)
            if n == 2:
                _bar(racer).get_by_role("button", name="Vote").click()
                refused = (
                    _bar(racer).locator('[data-testid="stAlert"]').filter(has_text="was refused")
                )
                expect(refused).to_contain_text(
                    f"Your click on Vote ({options[wrong]}) in this tab was refused: this "
                    "browser had already voted in this round"
                )
                expect(_bar(racer)).to_contain_text(f"Your vote is counted: {options[answer]}")
                title = _bar(racer).get_by_text(question.asked.title).first
                assert title.bounding_box()["y"] < refused.bounding_box()["y"]
                refused.scroll_into_view_if_needed()
                kit.screenshot(racer, "live_class_student_refused_390x844")
        expect(_metric(teacher, "Answered, round 2")).to_contain_text(f"{STUDENTS} of {STUDENTS}")
        _click(teacher, "Reveal")
        moved = "round 1: 5 of 8 right; round 2: 7 of 8 right"
        expect(kit.main(teacher)).to_contain_text(moved)
        for (_, tab), choice in zip(students, again, strict=True):
            verdict = "Right:" if choice == answer else f"You chose {options[choice]}"
            expect(_bar(tab)).to_contain_text(verdict, timeout=FOLLOW_MS)
        _above_the_fold(teacher, chart, kit.main(teacher).get_by_text(moved))
        # Each bar is split by how sure its voters said they were, the legend above the bars.
        # (Waited for: the chart is redrawn in the browser after the run that brought round 2.)
        legend = chart.locator(".legendtext")
        expect(legend).to_have_text(["sure", "fairly sure", "a guess", "not said"])
        levels = ("a guess", "fairly sure", "sure", None)  # the store's order (rules.CONFIDENCE)
        split = store.status(code, secret).split[2]
        assert split == tuple(
            tuple(sum(c == i and s == level for c, s in zip(again, sures, strict=True))
                  for level in levels)
            for i in range(len(options))
        )  # fmt: skip
        expect(kit.main(teacher)).to_contain_text("How sure, round 2:")
        kit.screenshot(teacher, "live_class_revealed_1024x768")
        _bar(students[4][1]).locator('[data-testid="stPlotlyChart"]').scroll_into_view_if_needed()
        kit.screenshot(students[4][1], "live_class_student_revealed_390x844")

        # The instructor reloading keeps the class (the secret comes back from its cookie).
        teacher.reload()
        expect(kit.main(teacher)).to_contain_text(moved)
        kit.wait_for_script(teacher)

        # The results file, and the store, hold every count.
        button = kit.main(teacher).locator('[data-testid="stDownloadButton"] button')
        with teacher.expect_download() as download:
            button.click()
        path = tmp_path / "results.csv"
        download.value.save_as(path)
        rows = list(csv.DictReader(io.StringIO(path.read_text())))
        expected = {option: (first.count(i), again.count(i)) for i, option in enumerate(options)}
        assert {r["option"].lstrip("'"): (int(r["round 1"]), int(r["round 2"])) for r in rows} == (
            expected
        )
        assert [r["correct"] for r in rows] == [str(i == answer) for i in range(len(options))]
        counts = store.status(code, secret).counts
        assert counts == {n + 1: tuple(v[n] for v in expected.values()) for n in range(2)}

        # The instructor's own question, its text as typed (never Markdown or HTML): a
        # countdown closes round 1's voting, "Close now" round 2's, neither revealing.
        own_title, prompt, choices = (
            "<b>Own</b> *one*",
            "Is `x` <i>2</i> & **so**?",
            ["<b>y</b>", "**n**"],
        )
        kit.main(teacher).get_by_role("button", name="Your own question").click()
        form = teacher.locator('[data-testid="stPopoverBody"]')
        for label, text in [("Title", own_title), ("Question", prompt), ("Choice 1", choices[0]),
                            ("Choice 2", choices[1])]:  # fmt: skip
            form.get_by_label(label, exact=True).fill(text)
        # Each text is sent as the next takes the focus. (An opinion poll: no right answer,
        # the form's default; a run of the page closed the selectbox's list under the click.)
        kit.rerun_after(teacher, lambda: form.get_by_label("Choice 2").press("Tab"))
        kit.rerun_after(teacher, form.get_by_role("button", name="Ask your question").click)
        expect(_metric(teacher, "Answered, round 1")).to_contain_text(f"0 of {STUDENTS}")
        own = store.status(code, secret).question
        assert own.asked == replace(own.asked, title=own_title, prompt=prompt,
                                    options=tuple(choices), answer=None)  # fmt: skip
        teacher.keyboard.press("Escape")  # the popover closed
        expect(kit.main(teacher)).to_contain_text(own_title)
        for _, tab in [(None, racer), *students]:
            expect(_bar(tab)).to_contain_text(f"{own_title}. {prompt}", timeout=FOLLOW_MS)
        # The refused click's message went with its question.
        expect(_bar(racer)).not_to_contain_text("was refused")
        racer.close()
        _, phone = students[7]
        for shown in (kit.main(teacher), _bar(phone)):
            # No part of the typed text drawn as bold, italic or code.
            drawn = shown.locator("b, i, em, strong, code").filter(
                has_text=re.compile(r"^(Own|one|x|2|so|y|n)$")
            )
            assert drawn.count() == 0
            expect(shown).to_contain_text(choices[0])
        kit.main(teacher).get_by_role("button", name="Close voting").click()
        # Three votes must beat this countdown: no wait for the instructor's page to fall quiet
        # (its one-second timers keep it busy on a loaded machine), and every Vote is pressed
        # before any is waited for (one vote took 6 s here at load 11; three in turn, 20).
        teacher.get_by_role("button", name="Close in 30 s").click()
        in_time = list(zip(students[:3], (0, 0, 1), strict=True))
        for (_, tab), choice in in_time:
            expect(_bar(tab)).to_contain_text("The instructor closes answers in")
            _choose(tab, choices[choice])
        for (_, tab), _choice in in_time:
            _bar(tab).get_by_role("button", name="Vote").click()
        for (_, tab), _choice in in_time:
            expect(_bar(tab)).to_contain_text("Your vote is counted", timeout=FOLLOW_MS)
        expect(_metric(teacher, "Voting")).to_contain_text("closed", timeout=60_000)
        for _, tab in students[3:]:
            expect(_bar(tab)).to_contain_text("Voting is closed", timeout=FOLLOW_MS)
            expect(_bar(tab).get_by_role("button", name="Vote")).to_have_count(0)
        _click(teacher, "Discuss and vote again")
        for (_, tab), choice in zip(students[3:5], (0, 0), strict=True):
            expect(_bar(tab)).to_contain_text("vote again", timeout=FOLLOW_MS)
            _vote(tab, choices[choice], "sure")
        kit.main(teacher).get_by_role("button", name="Close voting").click()
        kit.rerun_after(teacher, teacher.get_by_role("button", name="Close now").click)
        expect(_metric(teacher, "Voting")).to_contain_text("closed")
        for _, tab in students[5:]:
            expect(_bar(tab)).to_contain_text("Voting is closed", timeout=FOLLOW_MS)
        # Closed is not revealed: nobody sees the votes yet.
        assert kit.main(teacher).locator('[data-testid="stPlotlyChart"]').count() == 0
        assert _bar(phone).locator('[data-testid="stPlotlyChart"]').count() == 0
        assert store.status(code, secret).counts == {1: (2, 1), 2: (2, 0)}
        _click(teacher, "Reveal")
        shown = choices  # as typed, and no answer ticked: there is none
        for where in (kit.main(teacher), _bar(phone)):
            ticks = where.locator('[data-testid="stPlotlyChart"] .xtick2 text')
            expect(ticks).to_have_count(2, timeout=FOLLOW_MS)
            assert [t.strip() for t in ticks.all_text_contents()] == shown
        expect(_bar(phone)).to_contain_text("This question has no one right answer")

        # End asks first; then every student is told.
        kit.main(teacher).get_by_role("button", name="End the class").click()
        kit.rerun_after(teacher, teacher.get_by_role("button", name="Yes, end the class").click)
        for _, tab in students:
            expect(_bar(tab)).to_contain_text("The class has ended", timeout=FOLLOW_MS)
        assert store.glance(code).ended
        store.close()
        for _, tab in [(None, teacher), *students]:
            assert not kit.problems(tab)
    except BaseException:
        # The traceback alone does not say what each browser showed or what the processes did.
        for n, context in enumerate(contexts):
            for m, tab in enumerate(context.pages):
                with contextlib.suppress(Exception):  # a tab that cannot draw: the others
                    kit.screenshot(tab, f"FAILED_live_class_{n}_{m}")
        print(f"\nscreenshots/FAILED_live_class_*.png; the processes' logs:\n{replicas.logs()}")
        raise
    finally:
        for context in contexts:
            context.close()
