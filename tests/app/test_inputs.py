"""The Inputs page: cell edits, CSV, bad input, and the upstream gradient kinds."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

UPSTREAM = "Where dout comes from"
CSV_BUTTON = "Use this CSV for x"


def _choose_upstream(lab, kind: str) -> None:
    lab.widget("radio", UPSTREAM).set_value(kind)
    lab.run()
    lab.assert_no_exception()
    assert lab.state["upstream"] == kind


def _stepper_dout(lab) -> np.ndarray:
    """The table of step 11 (backward through out: dout itself), back on the Inputs page after."""
    lab.open("Stepper").step_to(11)
    lab.assert_clean()
    shown = lab.table()
    lab.open("Inputs")
    return shown


# -- cell edits --------------------------------------------------------------------------------


def test_the_wide_table_rounds_what_it_shows_and_a_cell_committed_as_shown_keeps_its_value(lab):
    lab.open("Inputs")
    exact = lab.state["x"].copy()
    shown = lab.shown("x")
    assert shown.iat[0, 0] == f"{exact[0, 0]:.5g}" != repr(exact[0, 0])
    assert "Shown to 5 significant digits" in " ".join(c.value for c in lab.at.caption)
    np.testing.assert_array_equal(lab.editor("x"), exact)  # the phone's table: every digit
    # Opening a cell and pressing Enter sends its shown text: the exact number stays.
    lab.edit("x", {0: {"0": shown.iat[0, 0], "1": shown.iat[0, 1]}})
    lab.assert_clean()
    np.testing.assert_array_equal(lab.state["x"], exact)
    # Typed differently, even to the same value, it is the student's number.
    lab.edit("x", {0: {"0": shown.iat[0, 0] + "0"}})
    assert lab.state["x"][0, 0] == float(shown.iat[0, 0]) != exact[0, 0]
    np.testing.assert_array_equal(lab.state["x"].ravel()[1:], exact.ravel()[1:])


def _rounding_notes(lab) -> int:
    return sum("significant digits" in c.value for c in lab.at.caption)


def test_numbers_the_table_shows_exactly_have_no_rounding_note(lab):
    lab.open("Inputs")
    notes = _rounding_notes(lab)
    lab.edit("x", {row: {str(j): str(j + row) for j in range(8)} for row in range(3)})
    assert lab.shown("x").iloc[0].tolist() == [str(j) for j in range(8)]
    assert _rounding_notes(lab) == notes - 1


def test_editing_x_changes_the_output(lab):
    lab.open("Stepper").step_to(10)
    before = lab.table()
    lab.open("Inputs")
    x_before = lab.state["x"].copy()
    lab.edit("x", {0: {"0": 5.0}})
    lab.assert_clean()
    x = lab.state["x"]
    assert x[0, 0] == 5.0
    assert x.shape == x_before.shape
    np.testing.assert_array_equal(x.ravel()[1:], x_before.ravel()[1:])
    assert lab.editor("x")[0, 0] == 5.0
    lab.open("Stepper")
    lab.assert_clean()
    assert "Step 10 of 20" in lab.shown_step()["heading"]
    assert lab.differ(before, lab.table())


def test_editing_x_changes_the_first_step(lab):
    lab.open("Stepper")
    before = lab.table()  # sample_mean of each row
    lab.open("Inputs").edit("x", {1: {"3": -4.0}})
    lab.assert_clean()
    assert lab.state["x"][1, 3] == -4.0
    after = lab.open("Stepper").table()
    assert after[0] == before[0]
    assert after[1] != before[1]


def test_editing_gamma_changes_the_output(lab):
    lab.open("Stepper").step_to(10)
    before = lab.table()
    lab.open("Inputs").edit("params", {0: {"2": 3.0}})
    lab.assert_clean()
    assert lab.state["gamma"][2] == 3.0
    lab.open("Stepper")
    lab.assert_clean()
    after = lab.table()
    assert lab.differ(before[:, 2], after[:, 2])
    np.testing.assert_array_equal(np.delete(before, 2, axis=1), np.delete(after, 2, axis=1))


@pytest.mark.parametrize("bad", [None, float("nan")], ids=["empty", "nan"])
@pytest.mark.parametrize(("editor", "key"), [("x", "x"), ("params", "gamma")])
def test_a_nan_cell_shows_an_error_and_keeps_the_last_valid_values(lab, editor, key, bad):
    lab.open("Inputs")
    kept = lab.state[key].copy()
    lab.edit(editor, {0: {"1": bad}})
    lab.assert_no_exception()
    errors = lab.errors("main")
    assert len(errors) == 1, errors
    assert "not a number" in errors[0]
    np.testing.assert_array_equal(lab.state[key], kept)
    # The rest of the app still computes from the kept values.
    assert not lab.errors("sidebar")
    lab.open("Stepper")
    lab.assert_clean()


def test_a_nan_dout_cell_keeps_the_upstream_kind(lab):
    lab.open("Inputs").edit("dout", {0: {"0": None}})
    lab.assert_no_exception()
    assert len(lab.errors("main")) == 1
    assert lab.state["upstream"] == "random"


def test_a_value_too_large_for_float32_shows_an_error_not_an_exception(lab):
    """1e39 is a fine float64 but overflows float32: the user needs to be told that."""
    lab.set_sidebar("dtype", "float32")
    lab.open("Inputs").edit("x", {0: {"0": 1e39}})
    lab.assert_no_exception()
    assert any("float32" in e for e in lab.errors()), lab.errors()
    lab.open("Stepper")
    lab.assert_no_exception()
    assert any("float32" in e for e in lab.errors("main")), lab.errors()


# -- CSV ---------------------------------------------------------------------------------------


def _give_csv(lab, source: str, text: str | bytes) -> None:
    """Paste or upload a CSV on the Inputs page and click the button that applies it."""
    lab.open("Inputs")
    if source == "paste":
        lab.at.text_area(key="csv_text").input(text)
    else:
        data = text.encode() if isinstance(text, str) else text
        lab.at.file_uploader(key="csv_file").upload("x.csv", data, "text/csv")
    lab.click(CSV_BUTTON)


SOURCES = ["paste", "upload"]


def test_the_csv_button_without_a_csv_says_what_to_do(lab):
    lab.open("Inputs")
    kept = lab.state["x"].copy()
    lab.click(CSV_BUTTON)
    lab.assert_no_exception()
    assert any("Paste CSV" in e for e in lab.errors("main")), lab.errors()
    np.testing.assert_array_equal(lab.state["x"], kept)


def test_the_first_click_uses_the_pasted_text(lab):
    # The text and the click arrive together (a form): no click is lost to the text box.
    lab.open("Inputs")
    lab.at.text_area(key="csv_text").input("1,2,3\n4,5,7")
    lab.click(CSV_BUTTON)
    lab.assert_clean()
    np.testing.assert_array_equal(lab.state["x"], [[1, 2, 3], [4, 5, 7]])


def test_one_click_sets_every_gamma_to_1_and_beta_to_0(lab):
    lab.open("Inputs")
    lab.click("gamma = 1, beta = 0")
    lab.assert_clean()
    np.testing.assert_array_equal(lab.state["gamma"], np.ones(lab.state["d"]))
    np.testing.assert_array_equal(lab.state["beta"], np.zeros(lab.state["d"]))
    np.testing.assert_array_equal(lab.editor("params"), [np.ones(8), np.zeros(8)])


@pytest.mark.parametrize("source", SOURCES)
def test_a_bad_csv_shows_an_error_and_keeps_x(lab, source):
    lab.open("Inputs")
    kept = lab.state["x"].copy()
    _give_csv(lab, source, "1,2,abc")
    lab.assert_no_exception()
    errors = lab.errors("main")
    assert len(errors) == 1, errors
    assert "abc" in errors[0]
    np.testing.assert_array_equal(lab.state["x"], kept)
    np.testing.assert_array_equal(lab.editor("x"), kept)


@pytest.mark.parametrize(
    "data", [b"\xff\xfe1,2", "1,2\n3", ""], ids=["not-utf8", "ragged", "empty"]
)
def test_an_unusable_upload_shows_an_error_and_keeps_x(lab, data):
    lab.open("Inputs")
    kept = lab.state["x"].copy()
    _give_csv(lab, "upload", data)
    lab.assert_no_exception()
    assert len(lab.errors("main")) == 1, lab.errors()
    np.testing.assert_array_equal(lab.state["x"], kept)


@pytest.mark.parametrize("source", SOURCES)
def test_a_good_csv_replaces_x(lab, source):
    _give_csv(lab, source, "1,2,3\n4,5,7")
    lab.assert_clean()
    np.testing.assert_array_equal(lab.state["x"], [[1, 2, 3], [4, 5, 7]])
    np.testing.assert_array_equal(lab.editor("x"), [[1, 2, 3], [4, 5, 7]])
    # The sidebar follows the new shape, and every array that depends on it too.
    assert lab.sidebar("shape_kind").value == "rows"
    assert lab.sidebar("n").value == 2
    assert lab.sidebar("d").value == 3
    assert lab.state["gamma"].shape == (3,)
    assert lab.editor("dout").shape == (2, 3)
    lab.open("Stepper")
    lab.assert_clean()
    np.testing.assert_allclose(lab.table().ravel(), [2.0, 16 / 3])


def test_a_one_line_csv_gives_one_vector(lab):
    _give_csv(lab, "paste", "1.5, -2e-3, 4")
    lab.assert_clean()
    np.testing.assert_array_equal(lab.state["x"], [1.5, -2e-3, 4])
    assert lab.sidebar("shape_kind").value == "vector"
    assert lab.sidebar("d").value == 3
    lab.open("Stepper")
    lab.assert_clean()


@pytest.fixture
def csv_files(monkeypatch) -> dict:
    """The Inputs page's CSV downloads a run registers, by file name: what a click would get."""
    written: dict = {}
    register = MediaFileManager.add_deferred

    def spy(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        written[file_name] = data_callable
        return register(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", spy)
    return written


VIEW = ("shape_kind", "n", "d", "b", "l", "upstream", "view_b", "view_t")
KEPT = ("gamma", "beta", "dout_edited", "target")


@pytest.mark.parametrize(
    ("sidebar", "shape"),
    [({"shape_kind": "tokens"}, (2, 3, 8)), ({"n": 1}, (1, 8))],
    ids=["tokens", "one-row"],
)
def test_the_downloaded_x_csv_uploaded_back_keeps_the_view_and_the_edited_dout(
    lab, csv_files, sidebar, shape
):
    for key, value in sidebar.items():
        lab.set_sidebar(key, value)
    lab.open("Inputs").edit("x", {0: {"0": 0.1}}).edit("dout", {0: {"1": 7}})
    lab.state["view_b"] = shape[0] - 1
    lab.run().assert_clean()
    before = {key: lab.state[key] for key in VIEW}
    arrays = {key: lab.state[key].copy() for key in ("x", *KEPT)}
    assert arrays["x"].shape == shape and before["upstream"] == "edited"

    _give_csv(lab, "upload", csv_files["x.csv"]())
    lab.assert_clean()
    assert lab.warnings() == []
    assert {key: lab.state[key] for key in VIEW} == before
    for key, array in arrays.items():
        np.testing.assert_array_equal(lab.state[key], array, err_msg=key)
    np.testing.assert_array_equal(lab.editor("dout").ravel(), arrays["dout_edited"].ravel())


def test_an_x_of_another_shape_says_the_hand_edited_dout_is_not_kept(lab):
    lab.open("Inputs").edit("dout", {0: {"1": 7}})
    assert lab.state["upstream"] == "edited"
    _give_csv(lab, "paste", "1,2,3\n4,5,7")
    lab.assert_clean()
    (warning,) = lab.warnings()
    assert "2 x 3 instead of 3 x 8" in warning and "hand-edited dout" in warning, warning
    np.testing.assert_array_equal(lab.state["x"], [[1, 2, 3], [4, 5, 7]])
    # Not "edited by hand" over numbers nobody edited.
    assert lab.state["upstream"] == "random"
    np.testing.assert_array_equal(lab.editor("dout"), lab.state["dout_random"])


@pytest.mark.parametrize("name", ["gamma_beta.csv", "dout.csv"])
def test_the_pages_other_downloads_are_refused_as_x(lab, csv_files, name):
    lab.open("Inputs")
    before = {key: lab.state[key] for key in VIEW}
    arrays = {key: lab.state[key].copy() for key in ("x", *KEPT)}
    _give_csv(lab, "upload", csv_files[name]())
    lab.assert_no_exception()
    (error,) = lab.errors("main")
    assert f"lab's {name}" in error and "not x" in error and "x.csv" in error, error
    assert {key: lab.state[key] for key in VIEW} == before
    for key, array in arrays.items():
        np.testing.assert_array_equal(lab.state[key], array, err_msg=key)


def test_pasted_csv_next_to_a_chosen_file_is_refused_with_what_to_do(lab):
    _give_csv(lab, "upload", "7,8,9")
    np.testing.assert_array_equal(lab.state["x"], [7, 8, 9])
    lab.at.text_area(key="csv_text").input("1,2\n3,4")
    lab.click(CSV_BUTTON)
    lab.assert_no_exception()
    (error,) = lab.errors("main")
    assert "neither was used" in error and "remove the file" in error, error
    np.testing.assert_array_equal(lab.state["x"], [7, 8, 9])


# -- upstream gradient kinds -------------------------------------------------------------------


def test_all_ones_dout_warns_about_uniform_gamma(lab):
    lab.open("Inputs")
    _choose_upstream(lab, "ones")
    lab.assert_clean()
    np.testing.assert_array_equal(lab.editor("dout"), np.ones(lab.state["x"].shape))
    warnings = lab.warnings()
    assert len(warnings) == 1, warnings
    assert "uniform gamma" in warnings[0]
    assert "dx" in warnings[0] and "0" in warnings[0]


def test_all_ones_dout_with_uniform_gamma_says_dx_is_zero(lab):
    lab.open("Inputs")
    d = lab.state["x"].shape[-1]
    lab.edit("params", {0: {str(j): 1.0 for j in range(d)}})
    lab.assert_clean()
    np.testing.assert_array_equal(lab.state["gamma"], np.ones(d))
    _choose_upstream(lab, "ones")
    warnings = lab.warnings()
    assert len(warnings) == 1, warnings
    assert "dx is exactly 0" in warnings[0]
    lab.open("Stepper").step_to(20)
    lab.assert_clean()
    # The step's dx, the sum of its two contributions, for the vector on screen...
    (summed,) = [b for b in lab.shown_step()["blocks"] if b["title"].startswith("dx (sum)")]
    np.testing.assert_allclose(np.array(summed["full"], dtype=float), 0.0, atol=1e-12)
    # ...and the result's dx for every vector (the step's fold "The result: dx, ...").
    (dx,) = [f.value for f in lab.desk_tables() if f.value.shape == lab.state["x"].shape]
    dx = dx.to_numpy(dtype=float)
    assert dx.shape == lab.state["x"].shape
    np.testing.assert_allclose(dx, 0.0, atol=1e-12)


@pytest.mark.parametrize("kind", ["one_hot", "loss"])
def test_upstream_kind_changes_dout(lab, kind):
    lab.open("Inputs")
    before = lab.editor("dout")
    _choose_upstream(lab, kind)
    lab.assert_clean()
    dout = lab.editor("dout")
    assert dout.shape == before.shape
    assert lab.differ(before, dout)
    assert not lab.warnings()
    np.testing.assert_allclose(_stepper_dout(lab), dout)


def test_one_hot_dout_follows_the_chosen_output(lab):
    lab.open("Inputs")
    _choose_upstream(lab, "one_hot")
    dout = lab.editor("dout")
    assert (dout[:, 0] == 1).all() and (np.delete(dout, 0, axis=1) == 0).all()
    lab.widget("number_input", "Output that gets the 1").set_value(3)
    lab.run()
    lab.assert_clean()
    dout = lab.editor("dout")
    assert (dout[:, 3] == 1).all() and (np.delete(dout, 3, axis=1) == 0).all()


def test_loss_dout_is_out_minus_target(lab):
    lab.open("Stepper").step_to(10)
    out = lab.table()
    lab.open("Inputs")
    _choose_upstream(lab, "loss")
    np.testing.assert_allclose(lab.editor("dout"), out - lab.state["target"])
    np.testing.assert_allclose(lab.editor("target"), lab.state["target"])


def test_editing_dout_switches_the_kind_to_edited(lab):
    lab.open("Inputs")
    _choose_upstream(lab, "ones")
    lab.edit("dout", {1: {"2": 7.5}})
    lab.assert_clean()
    assert lab.state["upstream"] == "edited"
    assert lab.widget("radio", UPSTREAM).value == "edited"
    expected = np.ones(lab.state["x"].shape)
    expected[1, 2] = 7.5
    np.testing.assert_array_equal(lab.editor("dout"), expected)
    np.testing.assert_array_equal(_stepper_dout(lab), expected)


def test_an_x_of_another_d_says_gamma_and_beta_and_the_target_are_replaced(lab):
    lab.open("Inputs").edit("gamma", {0: {"0": 5}})
    lab.state["upstream"] = "loss"
    lab.run().assert_clean()
    _give_csv(lab, "paste", "1,2,3\n4,5,7")
    lab.assert_clean()
    (warning,) = lab.warnings()
    assert "gamma and beta" in warning and "loss's target" in warning, warning
    assert lab.state["gamma"].shape == (3,) and lab.state["gamma"][0] != 5
