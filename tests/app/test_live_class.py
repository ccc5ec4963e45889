"""The live class in AppTest: an instructor and students as separate sessions on one store.

The store is a real SQLite file per test (LNLAB_CLASS_DB). AppTest runs whole scripts, so a
student's polling fragment is seen at each of their runs; real browsers and replicas are in
tests/browser/test_live_class.py.
"""

from __future__ import annotations

import json

import pytest

from ui.entry.literal import as_typed
from ui.live import rules, tally
from ui.live.store import Store

CLASS_PAGE = "pages/teach/class.py"


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    monkeypatch.setenv("LNLAB_CLASS_DB", url)
    return url


def _instructor(lab):
    lab.at.switch_page(CLASS_PAGE)
    lab.run()
    lab.click("Start a class")
    me = lab.state["live"]
    assert me.teaching and len(me.code) == 8
    return me


def _texts(lab) -> str:
    els = [*lab.at.markdown, *lab.at.caption, *lab.at.success, *lab.at.info, *lab.at.error]
    return "\n".join(e.value for e in els)


def test_one_student_alone_never_opens_the_store(lab, monkeypatch):
    monkeypatch.setenv("LNLAB_CLASS_DB", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    lab.open("Stepper").move_to(2)
    lab.assert_clean()
    # An unreachable store would have left a message: it was never opened.
    assert "live" not in lab.state and lab.state["live_problem"] == ""


def test_the_class_page_says_when_the_store_is_unreachable(lab, monkeypatch):
    monkeypatch.setenv("LNLAB_CLASS_DB", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    lab.at.switch_page(CLASS_PAGE)
    lab.run().click("Start a class")
    lab.assert_no_exception()
    assert any("cannot be reached" in w for w in lab.warnings()), lab.warnings()
    assert "live" not in lab.state


def test_a_class_runs_from_start_to_reveal(db, lab, open_link):
    me = _instructor(lab)
    assert me.shown_code in _texts(lab)
    student = open_link({"join": me.code})
    student.assert_clean()
    assert student.state["live"].code == me.code
    assert f"Class {me.shown_code}" in _texts(student)
    # The instructor moves to step 4: the student's lab follows.
    lab.open("Stepper")
    lab.step_to(4)
    student.run().run()
    assert student.state["step"] == 4
    assert student.at.session_state["live"].applied >= 1
    # Ask the current step's question; the student votes.
    lab.at.switch_page(CLASS_PAGE)
    lab.run().click("Ask")
    question = Store(db).status(me.code, me.secret).question
    assert question is not None and question.asked.title.startswith("Step 4")
    student.run()
    student.at.radio(key=f"live_choice_{question.id}_1").set_value(
        question.asked.options[question.asked.answer]
    )
    student.run()
    student.at.button(key=f"live_vote_{question.id}_1").click()
    student.run()
    assert "Your vote is counted" in _texts(student)
    lab.run()
    assert lab.metrics()["Answered, round 1"] == "1 of 1"
    lab.click("Reveal")
    assert "The answer:" in _texts(lab)
    student.run()
    assert "Right:" in _texts(student)
    # The results are the file itself (a URL), not written on click: a file written on click is
    # held by no run, and the page's timed refreshes and the class's runs delete it (seen in CI).
    (results,) = lab.at.main.get("download_button")
    assert results.proto.url and not results.proto.deferred_file_id
    assert results.proto.ignore_rerun


def test_a_student_who_joins_before_the_instructor_opens_a_page_waits_on_the_stepper(
    db, lab, open_link
):
    # The instructor's first move is then a step like the later ones, not a whole page every
    # phone mounts at once (issue 39: 13 to 26 s with twelve phones).
    me = _instructor(lab)
    student = open_link({"join": me.code, "step": "7"})
    student.assert_clean()
    assert student.walk()["step"] == 1 and student.state["step"] == 1
    assert "your lab waits here at step 1" in _texts(student)
    wanderer = open_link({"join": me.code})
    wanderer.open("Jacobian")  # before the class starts, a student's lab is theirs to explore
    assert wanderer.state["live"].following and not wanderer.state["live"].left
    lab.open("Stepper").step_to(3)
    student.run().run()
    assert student.walk()["step"] == 3 and student.state["live"].applied >= 1
    assert "waits here" not in _texts(student)
    assert "your lab follows the instructor." in _texts(student)


def _vote(student, question, option: str) -> None:
    student.run()  # the student's bar polls: the question's round appears
    student.at.radio(key=f"live_choice_{question.id}_{question.round}").set_value(option)
    student.run()
    student.at.button(key=f"live_vote_{question.id}_{question.round}").click()
    student.run()


def test_a_second_round_shows_how_answers_moved_and_students_never_see_counts(db, lab, open_link):
    me = _instructor(lab)
    students = [open_link({"join": me.code}) for _ in range(2)]
    lab.click("Ask")
    store = Store(db)
    question = store.status(me.code, me.secret).question
    options, answer = question.asked.options, question.asked.answer
    wrong = options[(answer + 1) % len(options)]
    for student in students:
        student.run()
        _vote(student, question, wrong)
    lab.run()
    assert lab.metrics()["Answered, round 1"] == "2 of 2"
    assert not lab.at.get("plotly_chart"), "the distribution shows before the reveal"
    assert not students[0].run().at.get("plotly_chart"), "a student sees votes before the reveal"
    lab.click("Discuss and vote again")
    question = store.status(me.code, me.secret).question
    assert question.round == 2 and not question.revealed
    _vote(students[0], question, options[answer])
    _vote(students[1], question, wrong)
    lab.run().click("Reveal")
    assert len(lab.at.get("plotly_chart")) == 1
    status_counts = store.status(me.code, me.secret).counts
    assert "round 1: 0 of 2 right; round 2: 1 of 2 right" in _texts(lab)
    for student in students:
        student.run()
        student.assert_no_exception()
        # After the reveal every student sees the class's votes, the instructor's chart.
        (chart,) = student.at.get("plotly_chart")
        *_, above = json.loads(chart.proto.spec)["data"]
        # Under each option its two rounds, side by side; the count above each bar.
        assert above["y"] == [status_counts[n][i] for i in range(len(options)) for n in (1, 2)]
    assert "Right:" in _texts(students[0]) and "You chose" in _texts(students[1])
    store.close()


def test_a_student_stops_following_and_rejoins_with_one_click(db, lab, open_link):
    me = _instructor(lab)
    student = open_link({"join": me.code})
    student.at.button(key="live_unfollow").click()
    student.run()
    lab.open("Stepper").step_to(6)
    student.run().run()
    assert student.state["step"] == 1, "a student exploring on their own was moved"
    student.at.button(key="live_follow").click()
    student.run().run()
    assert student.state["step"] == 6


@pytest.mark.parametrize(
    ("code", "message"),
    [("ZZZZ-ZZZZ", "No class is running"), ("<b>x</b>", "A join code is 8"), ("", None)],
)
def test_a_bad_join_link_is_a_message_and_the_lab_works(db, open_link, code, message):
    student = open_link({"join": code})
    student.assert_no_exception()
    warnings = " ".join(student.warnings())
    if message is None:
        assert "live" not in student.state and not warnings  # an empty code joins nothing
    else:
        assert message in warnings and "live" not in student.state
        assert "<b>" not in warnings  # the typed code is shown literally, escaped
    student.open("Stepper").move_to(2)
    student.assert_no_exception()


def test_a_link_naming_two_classes_joins_neither(db, open_link):
    store = Store(db)
    first, second = store.start_class(), store.start_class()
    student = open_link({"join": [first.code, second.code]})
    student.assert_no_exception()
    assert "join is given 2 times" in " ".join(student.warnings())
    assert student.state.get("live") is None, "the link's warning says no class was joined"
    assert store.status(second.code, second.secret).members == 0


def test_students_follow_the_inputs_but_not_the_projectors_presenter_mode(db, lab, open_link):
    me = _instructor(lab)
    student = open_link({"join": me.code})
    lab.open("Stepper")
    lab.state["presenter"] = True
    lab.state["seed"] = 7
    lab.run()
    student.run().run()
    assert student.state["seed"] == 7 and student.state["presenter"] is False


def test_a_value_the_instructor_empties_is_emptied_for_the_students_too(db, lab, open_link):
    # A blank in the published view is a value: the typed formula cleared on the projector.
    me = _instructor(lab)
    student = open_link({"join": me.code})
    lab.open("Stepper")
    lab.state["derive_formula"] = "dy * gamma"
    lab.run()
    student.run().run()
    assert student.state["derive_formula"] == "dy * gamma"
    lab.state["derive_formula"] = ""
    lab.run()
    student.run().run()
    assert student.state["derive_formula"] == ""


def _cookie_scripts(lab) -> str:
    return "\n".join(str(e.proto) for e in lab.at.get("html") if "document.cookie" in str(e.proto))


def test_a_joining_browser_gets_its_cookies_on_every_run_not_once(db, lab, open_link):
    # A run cut short by a rerun (the student's lab following the instructor to a page at once)
    # never delivers its elements: the cookies that let a reconnect find the class and the vote
    # are set again on every full run, until the browser sends them.
    me = _instructor(lab)
    assert f"lnlab_teach={me.code}.{me.secret}" in _cookie_scripts(lab)
    student = open_link({"join": me.code})
    for _ in range(2):
        scripts = _cookie_scripts(student)
        assert f"lnlab_class={me.code}" in scripts and "lnlab_browser=" in scripts
        assert me.secret not in scripts
        student.run()


def _second_tab(open_link, first):
    """Another tab of the same browser: its own session, the same browser id and class."""
    tab = open_link({})
    tab.state["browser_id"] = first.state["browser_id"]
    tab.state["live"] = first.state["live"]
    return tab.run()


def _warnings_in_bar(lab) -> str:
    return "\n".join(w.value for w in lab.at.warning)


def test_the_tab_that_lost_a_race_is_told_its_click_was_refused_under_that_question(
    db, lab, open_link
):
    me = _instructor(lab)
    first = open_link({"join": me.code})
    second = _second_tab(open_link, first)
    lab.click("Ask")
    store = Store(db)
    question = store.status(me.code, me.secret).question
    options = question.asked.options
    first.run()
    second.run()
    key = f"live_choice_{question.id}_1"
    second.at.radio(key=key).set_value(options[1])
    second.run()
    _vote(first, question, options[0])
    second.at.button(key=f"live_vote_{question.id}_1").click()
    second.run()
    said = _warnings_in_bar(second)
    assert f"Your click on Vote ({options[1]}) in this tab was refused" in said, said
    assert "already voted in this round, in another tab" in said
    assert f"Your vote is counted: {options[0]}" in _texts(second)
    second.run()  # the message stays with its question and round...
    assert "in this tab was refused" in _warnings_in_bar(second)
    lab.run().click("Discuss and vote again")
    second.run()  # ...and goes with them
    assert "refused" not in _warnings_in_bar(second)
    assert store.status(me.code, me.secret).counts[1][0] == 1
    store.close()


def test_a_refused_vote_is_said_under_its_own_round_not_the_next(db, lab, open_link):
    me = _instructor(lab)
    student = open_link({"join": me.code})
    lab.click("Ask")
    store = Store(db)
    question = store.status(me.code, me.secret).question
    student.run()
    student.at.radio(key=f"live_choice_{question.id}_1").set_value(question.asked.options[0])
    student.run()
    lab.run().click("Reveal")  # voting closes while the student's form is still shown
    student.at.button(key=f"live_vote_{question.id}_1").click()
    student.run()
    assert "was refused: Voting for that round is closed" in _warnings_in_bar(student)
    lab.run().click("Discuss and vote again")
    student.run()
    assert "refused" not in _warnings_in_bar(student)
    assert student.at.radio(key=f"live_choice_{question.id}_2").value is None
    store.close()


def test_a_choice_the_browser_kept_from_a_lost_session_says_vote_again(db, lab, open_link):
    # The replica that held the session stopped while Vote was sent: the browser reconnects to
    # a new session, with its choice (the radio's value) but no vote in the store.
    me = _instructor(lab)
    student, other = open_link({"join": me.code}), open_link({"join": me.code})
    again = _second_tab(open_link, student)
    lab.click("Ask")
    question = Store(db).status(me.code, me.secret).question
    again.state[f"live_choice_{question.id}_1"] = question.asked.options[1]
    again.run()
    assert "Your vote did not arrive" in _warnings_in_bar(again)
    # The reconnected browser's next runs (its timers, its second request) keep saying so.
    again.run()
    assert "Your vote did not arrive" in _warnings_in_bar(again)
    again.at.button(key=f"live_vote_{question.id}_1").click()
    again.run()
    assert f"Your vote is counted: {question.asked.options[1]}" in _texts(again)
    # A choice made in this session is not taken for a lost one.
    other.run()
    other.at.radio(key=f"live_choice_{question.id}_1").set_value(question.asked.options[0])
    other.run()
    assert "did not arrive" not in _warnings_in_bar(other)


def test_the_instructor_sees_joined_against_expected_and_can_cap_the_class(db, lab, open_link):
    me = _instructor(lab)
    lab.at.number_input(key="live_expected").set_value(1)
    lab.run()
    students = [open_link({"join": me.code}) for _ in range(2)]
    lab.run()
    assert lab.metrics()["Students joined"] == "2 of 1"
    assert any("2 browsers joined, 1 students expected" in w for w in lab.warnings())
    lab.at.number_input(key="live_expected").set_value(2)
    lab.run()
    lab.at.toggle(key="live_capped").set_value(True)
    lab.run()
    assert lab.metrics()["Students joined"] == "2 of 2"
    assert not any("browsers joined" in w for w in lab.warnings())
    stuffer = open_link({"join": me.code})
    assert "This class is full: the instructor admits 2" in " ".join(stuffer.warnings())
    assert "live" not in stuffer.state
    students[0].run().assert_no_exception()  # a student of the class stays in it
    assert students[0].state["live"].code == me.code


@pytest.mark.parametrize("how", ["Next", "page"])
def test_a_student_who_leaves_the_instructors_step_is_told_and_offered_the_way_back(
    db, lab, open_link, how
):
    me = _instructor(lab)
    student = open_link({"join": me.code})
    lab.open("Stepper").step_to(4)
    student.run().run()
    assert student.state["step"] == 4 and student.state["live"].following
    if how == "Next":
        # A following student's browser sends each move at once, to be judged against the
        # instructor's step (pages/stepper/walk.js: `sync`).
        assert student.walk()["sync"] is True
        student.move_to(5)
    else:
        student.open("Jacobian")
    student.run()
    assert not student.state["live"].following
    assert "you left the instructor's step" in _texts(student)
    lab.step_to(6)  # the instructor moves on: the student's own view stays
    student.run().run()
    assert student.state["step"] == (5 if how == "Next" else 4)
    student.at.button(key="live_follow").click()
    student.run()  # (AppTest runs the page it was last given: one run, which switches page)
    assert student.state["step"] == 6 and student.state["live"].following
    assert "follows the instructor" in _texts(student)


def test_a_student_types_the_join_code_on_the_overview(db, open_link):
    started = Store(db).start_class()
    student = open_link({})
    links = [str(link.proto) for link in student.at.get("page_link")]
    assert any("Teach with this lab" in link and 'page: "class"' in link for link in links)
    student.at.text_input(key="live_join_code").input("zzzz-zzzz")
    student.at.button(key="live_join").click()
    student.run()
    assert "No class is running" in " ".join(student.warnings())
    assert student.state.get("live") is None
    student.at.text_input(key="live_join_code").input(rules.show_code(started.code).lower())
    student.at.button(key="live_join").click()
    student.run()
    assert student.state["live"].code == started.code
    assert f"Class {rules.show_code(started.code)}" in _texts(student)
    assert not [t for t in student.at.text_input if t.key == "live_join_code"], "joined: no form"


def test_ending_the_class_asks_first(db, lab):
    me = _instructor(lab)
    # End is inside a popover that says what ending does: one click never ends the class.
    (end,) = [p for p in lab.at.get("popover") if p.proto.popover.label == "End the class"]
    assert [b.label for b in end.button] == ["Yes, end the class"]
    assert "Students keep their labs" in end.markdown[0].value
    end.button[0].click()
    lab.run()
    assert lab.state["live"] is None
    assert Store(db).glance(me.code).ended


def _two_asked(db, lab, open_link):
    """A class of two students, asked the current step's question: the instructor's
    membership, the students, the store and the question."""
    me = _instructor(lab)
    students = open_link({"join": me.code}), open_link({"join": me.code})
    lab.click("Ask")
    store = Store(db)
    return me, students, store, store.status(me.code, me.secret).question


def test_voting_closed_by_the_instructor_refuses_later_votes_under_the_question(db, lab, open_link):
    me, (early, late), store, question = _two_asked(db, lab, open_link)
    options = question.asked.options
    _vote(early, question, options[0])
    late.run()
    late.at.radio(key=f"live_choice_{question.id}_1").set_value(options[1])
    late.run()
    lab.run().click("Close in 30 s")  # a countdown first: votes are still taken
    assert "Closes in" in lab.metrics()
    late.run()
    assert "The instructor closes answers in" in _texts(late)
    assert store.status(me.code, me.secret).question.round_open
    store.close_voting(me.code, me.secret, question.id, 1)  # as the countdown running out
    late.at.button(key=f"live_vote_{question.id}_1").click()
    late.run()
    said = _warnings_in_bar(late)
    assert f"Your click on Vote ({options[1]}) was refused: The instructor closed voting" in said
    assert "Voting is closed; wait for the instructor." in _texts(late)
    lab.run()
    assert lab.metrics()["Voting"] == "closed"
    assert "Close now" not in [b.label for b in lab.at.button]
    lab.click("Reveal")
    counts = store.status(me.code, me.secret).counts[1]
    assert counts[0] == 1 and sum(counts) == 1
    rows = store.results(me.code, me.secret)
    assert sum(r["round 1"] for r in rows) == 1  # the file counts what was accepted
    store.close()


HOSTILE = "**<b>bold</b>** [link](http://evil.example) $x^2$ :red[red]"


def _ask_own(lab, title: str, prompt: str, options: list[str], right: int | None) -> None:
    lab.at.text_input(key="live_own_title").set_value(title)
    lab.at.text_input(key="live_own_prompt").set_value(prompt)
    for n, option in enumerate(options):
        lab.at.text_input(key=f"live_own_{n}").set_value(option)
    lab.at.selectbox(key="live_own_right").set_value(right)
    lab.click("Ask your question")


def test_the_instructors_own_question_is_asked_and_shown_exactly_as_typed(db, lab, open_link):
    me = _instructor(lab)
    student = open_link({"join": me.code})
    _ask_own(lab, "Mine <i>", HOSTILE, ["<b>yes</b>", "no *really*", "=1+1"], 0)
    lab.assert_no_exception()
    store = Store(db)
    question = store.status(me.code, me.secret).question
    assert question.asked.own and question.asked.options[0] == "<b>yes</b>"
    student.run()
    student.assert_no_exception()
    shown = student.at.main.markdown
    line = next(m.value for m in shown if "Mine" in m.value)
    # Every character as typed: Markdown's and HTML's marks escaped, no link, no formula.
    assert line == f"**{as_typed('Mine <i>')}.** {as_typed(HOSTILE)}"
    assert "\\[link\\]" in line and "\\$x" in line and "\\<b\\>" in line
    radio = student.at.radio(key=f"live_choice_{question.id}_1")
    assert radio.options == [as_typed(o) for o in question.asked.options]
    _vote(student, question, "<b>yes</b>")
    assert f"Your vote is counted: {as_typed('<b>yes</b>')}" in _texts(student)
    lab.run().click("Reveal")
    # The chart's labels are escaped for Plotly, which reads tags in text.
    spec = json.loads(lab.at.main.get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["x"][0] == "&lt;b&gt;yes&lt;/b&gt; ✓"
    student.run()
    assert f"Right: {as_typed('<b>yes</b>')}" in _texts(student)
    rows = store.results(me.code, me.secret)
    assert [r["option"] for r in rows] == ["<b>yes</b>", "no *really*", "=1+1"]
    store.close()


def test_the_instructors_own_question_without_a_right_answer_and_a_refused_one(db, lab, open_link):
    me = _instructor(lab)
    student = open_link({"join": me.code})
    _ask_own(lab, "Mood", "How sure are you?", ["a", "b\u202e c", ""], None)
    assert any("Choice 2 holds an invisible character (U+202E)" in p
               for p in [lab.state["live_problem"]]), lab.state["live_problem"]  # fmt: skip
    store = Store(db)
    assert store.status(me.code, me.secret).question is None
    _ask_own(lab, "Mood", "How sure are you?", ["a", "b", ""], None)
    question = store.status(me.code, me.secret).question
    assert question.asked.options == ("a", "b") and question.asked.answer is None
    _vote(student, question, "b")
    lab.run().click("Reveal")
    lab.assert_no_exception()
    assert "The answer" not in _texts(lab)
    student.run()
    assert "no one right answer" in _texts(student)
    store.close()


def test_a_student_says_how_sure_they_are_and_the_reveal_shows_it_per_option(db, lab, open_link):
    me, (sure, unsaid), store, question = _two_asked(db, lab, open_link)
    options = question.asked.options
    sure.run()
    sure.at.radio(key=f"live_sure_{question.id}_1").set_value("sure")
    _vote(sure, question, options[0])
    _vote(unsaid, question, options[0])
    lab.run().click("Reveal")
    assert f"How sure, round 1: {options[0]}: 1 sure, 1 not said" in _texts(lab)
    # The chart splits the option's bar the same way, for the instructor and every student.
    unsaid.run()
    for who in (lab, unsaid):
        (chart,) = who.at.get("plotly_chart")
        bars = {t["name"]: t["y"][0] for t in json.loads(chart.proto.spec)["data"] if "name" in t}
        assert bars == {"sure": 1, "fairly sure": 0, "a guess": 0, "not said": 1}
    rows = store.results(me.code, me.secret)
    assert rows[0]["round 1 sure"] == 1 and rows[0]["round 1 not said"] == 1
    header = tally.results_csv(rows).splitlines()[0].split(",")
    assert {"round 1 sure", "round 1 fairly sure", "round 1 a guess"} <= set(header)
    store.close()


def _controls(student) -> list[str]:
    """The sidebar's selectboxes and buttons (the Rejoin button, always there, left out)."""
    labels = [w.label for w in student.at.sidebar.selectbox]
    return labels + [b.label for b in student.at.sidebar.button if b.key != "reconnect_rerun"]


def test_a_following_students_inputs_are_the_instructors_until_they_stop_following(
    db, lab, open_link
):
    me = _instructor(lab)
    student = open_link({"join": me.code})
    # Changed by the student, the inputs would be changed back by the instructor's next step;
    # the instructor leads from page to page (no menu, no guide's foot).
    assert _controls(student) == ["Stop following to explore"]
    note = "\n".join(c.value for c in student.at.sidebar.caption)
    assert "the instructor chooses the page and the inputs" in note
    assert "What to try" not in student.expanders()
    assert "Layer and vector" not in [p.proto.popover.label for p in student.at.get("popover")]
    student.at.sidebar.button[0].click()
    student.run()
    assert "Preset" in _controls(student) and not student.state["live"].following
    assert "exploring on your own" in _texts(student)
    assert "Layer and vector" in [p.proto.popover.label for p in student.at.get("popover")]
    student.at.button(key="live_follow").click()
    student.run().run()
    assert _controls(student) == ["Stop following to explore"]
    # The class bar's own button (a fragment) brings the controls back too.
    student.at.button(key="live_unfollow").click()
    student.run()
    assert "Preset" in _controls(student)
    student.at.button(key="live_follow").click()
    student.run().run()
    (end,) = [p for p in lab.at.get("popover") if p.proto.popover.label == "End the class"]
    end.button[0].click()
    lab.run()
    student.run().run()
    assert "The class has ended" in _texts(student)
    assert "Preset" in _controls(student), "a class that ended kept the student's controls"
