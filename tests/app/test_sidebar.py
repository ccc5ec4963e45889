"""The shared sidebar controls drive the numbers every page shows."""

from __future__ import annotations

import pytest

CONSTANT = "Constant vector"
CHANGES = [
    ("seed", 7),
    ("d", 6),
    ("n", 2),
    ("eps", 0.5),
    ("dtype", "float32"),
    ("preset", "One large outlier"),
    ("shape_kind", "vector"),
]


@pytest.mark.parametrize(("key", "value"), CHANGES, ids=[k for k, _ in CHANGES])
def test_sidebar_control_changes_the_stepper_numbers(lab, key, value):
    # Step 10 shows `out`, which depends on every input, eps and dtype included.
    lab.open("Stepper").step_to(10)
    lab.assert_clean()
    before = lab.step_numbers()
    lab.set_sidebar(key, value)
    lab.assert_clean()
    assert lab.state[key] == value
    assert "Step 10 of 20" in lab.shown_step()["heading"]
    assert lab.differ(before, lab.step_numbers()), f"changing {key} left the numbers as they were"


@pytest.mark.parametrize(("key", "value"), [("seed", 7), ("preset", "One large outlier")])
def test_sidebar_control_changes_the_x_editor(lab, key, value):
    lab.open("Inputs")
    before = lab.editor("x")
    lab.set_sidebar(key, value)
    lab.assert_clean()
    assert lab.differ(before, lab.editor("x"))


def test_same_seed_gives_the_same_numbers(lab):
    lab.open("Inputs")
    before = lab.editor("x")
    lab.set_sidebar("seed", 7)
    lab.set_sidebar("seed", 0)
    lab.assert_clean()
    assert not lab.differ(before, lab.editor("x"))


def _constant_without_eps(lab):
    lab.set_sidebar("preset", CONSTANT)
    lab.assert_clean()
    lab.set_sidebar("eps", 0.0)


@pytest.mark.parametrize("page", ["Overview", "Inputs", "Stepper"])
def test_eps_zero_on_a_constant_vector_shows_an_error_in_the_sidebar(lab, page):
    _constant_without_eps(lab)
    lab.open(page)
    lab.assert_no_exception()
    sidebar_errors = lab.errors("sidebar")
    assert len(sidebar_errors) == 1, sidebar_errors
    assert "eps" in sidebar_errors[0]
    assert "variance" in sidebar_errors[0]


def test_eps_zero_on_a_constant_vector_is_explained_once_on_the_stepper(lab):
    _constant_without_eps(lab)
    lab.open("Stepper")
    lab.assert_no_exception()
    # The reason is said once, under eps in the sidebar; the step points to it.
    assert lab.errors("main") == []
    assert len(lab.errors("sidebar")) == 1 and "eps" in lab.errors("sidebar")[0]
    infos = [i.value for i in lab.at.main.info]
    assert any("These steps are defined" in i and "under eps" in i for i in infos), infos
    # The rest of the page still renders: the twenty steps for the browser, the first five
    # with their numbers, the later ones saying they are not defined.
    walked = lab.walk()["steps"]
    assert "Step 1 of 20" in lab.shown_step()["heading"]
    assert all(entry["blocks"] for entry in walked[:5])
    assert all("not defined" in entry["locked"] for entry in walked[5:])
    # ...and keeps working: moving on raises no exception.
    lab.move_to(2)
    lab.assert_no_exception()
    assert "Step 2 of 20" in lab.shown_step()["heading"]
    lab.move_to(20)
    lab.assert_no_exception()
    assert any("not defined" in i.value for i in lab.at.main.info)


def test_with_the_sidebar_hidden_the_stepper_says_why_itself(open_link):
    lab = open_link({"preset": CONSTANT, "eps": "0", "hide": "controls"})
    lab.open("Stepper")
    lab.assert_no_exception()
    said = lab.errors("main")
    assert len(said) == 1 and "eps" in said[0], said


def test_eps_back_above_zero_clears_the_error(lab):
    _constant_without_eps(lab)
    lab.open("Stepper")
    assert lab.errors()
    lab.set_sidebar("eps", 1e-5)
    lab.assert_clean()


@pytest.mark.parametrize(("key", "value"), [("eps", 0.25), ("seed", 7), ("d", 6)])
def test_a_typed_number_is_read_once_where_it_enters(lab, monkeypatch, key, value):
    """A sidebar field reads its text once (its state key's own check: parse_eps, or a whole
    number in the key's limits): the number is not read again by the field, nor cast again
    where the inputs are built."""
    import ui.entry.numbers

    read = []
    parse_number = ui.entry.numbers.parse_number
    monkeypatch.setattr(
        ui.entry.numbers, "parse_number", lambda typed: read.append(typed) or parse_number(typed)
    )
    lab.set_sidebar(key, value)
    lab.assert_clean()
    assert lab.state[key] == value
    assert read == [repr(value)]
