"""The phone's tables on the Inputs page: one row per entry (vector, feature, number).

An edit there must store what the same edit in the wide table stores, refuse what it refuses
with the same message, and never be undone by the other table's older edits.
"""

from __future__ import annotations

import numpy as np
import pytest

D = 8  # the default x is 3 rows of 8


def _phone_key(lab, name: str) -> str:
    return f"phone_{lab.editor_key(name)}"


def _edit_phone(lab, name: str, edited_rows: dict) -> None:
    lab.state[_phone_key(lab, name)] = {
        "edited_rows": edited_rows,
        "added_rows": [],
        "deleted_rows": [],
    }
    lab.run()


def _phone_table(lab, name: str):
    key = _phone_key(lab, name)
    found = [e for e in lab.at.data_editor if e.key == key]
    assert found, f"no phone table {key!r}; editors: {[e.key for e in lab.at.data_editor]}"
    return found[0].value


@pytest.mark.parametrize(
    ("name", "row", "state_key", "where"),
    [
        ("x", 10, "x", (1, 2)),  # entry 10 is vector 1, feature 2
        ("params", 3, "gamma", (3,)),
        ("params", 8 + 5, "beta", (5,)),
        ("dout", 23, "dout_edited", (2, 7)),
    ],
    ids=["x", "gamma", "beta", "dout"],
)
def test_a_phone_edit_stores_what_the_wide_tables_edit_stores(
    lab, open_link, name, row, state_key, where
):
    lab.open("Inputs")
    _edit_phone(lab, name, {row: {"value": "2.5e-3"}})
    lab.assert_clean()

    wide = open_link({})
    wide.open("Inputs")
    vector, feature = divmod(row, D)
    wide.edit(name, {vector: {str(feature): "2.5e-3"}})
    wide.assert_clean()

    assert lab.state[state_key][where] == 2.5e-3
    np.testing.assert_array_equal(lab.state[state_key], wide.state[state_key])
    if name == "dout":
        assert lab.state["upstream"] == wide.state["upstream"] == "edited"
    # Both tables of the edited session show the stored number.
    assert float(_phone_table(lab, name)["value"].iloc[row]) == 2.5e-3
    assert lab.editor(name)[vector, feature] == 2.5e-3


def test_the_phone_table_lists_every_entry_vector_by_vector(lab):
    lab.open("Inputs")
    table = _phone_table(lab, "x")
    x = lab.state["x"]
    assert list(table.columns) == ["feature", "value"]
    assert list(table.index[: D + 1]) == ["row 0"] * D + ["row 1"]
    assert list(table["feature"][:D]) == [str(j) for j in range(D)]
    np.testing.assert_array_equal(table["value"].astype(float).to_numpy(), x.ravel())


@pytest.mark.parametrize(
    "typed", ["1,5", "abc", None, "nan"], ids=["comma", "word", "empty", "nan"]
)
def test_a_refused_phone_cell_says_what_the_wide_table_says(lab, open_link, typed):
    lab.open("Inputs")
    kept = lab.state["x"].copy()
    _edit_phone(lab, "x", {10: {"value": typed}})
    lab.assert_no_exception()
    np.testing.assert_array_equal(lab.state["x"], kept)

    wide = open_link({})
    wide.open("Inputs")
    wide.edit("x", {1: {"2": typed}})
    assert lab.errors("main") == wide.errors("main")
    assert len(lab.errors("main")) == 1 and "row 1, column 2" in lab.errors("main")[0]


@pytest.mark.parametrize(
    "message",
    [
        {"edited_rows": {0: {"feature": "3"}}},
        {"edited_rows": {24: {"value": "1"}}},
        {"edited_rows": {0: {"0": "1"}}},
        {"edited_rows": {"-1": {"value": "1"}}},
        {"deleted_rows": [0]},
        {"added_rows": [{"value": "1"}]},
        {"edited_rows": [1, 2]},
        "edited_rows",
        None,
    ],
    ids=[
        "the feature column",
        "a row past the end",
        "a column of the wide table",
        "a negative row",
        "a deleted row",
        "an added row",
        "rows as a list",
        "text",
        "null",
    ],
)
def test_a_malformed_phone_message_changes_nothing_and_says_so(lab, message):
    lab.open("Inputs")
    kept = lab.state["x"].copy()
    lab.state[_phone_key(lab, "x")] = message
    lab.run()
    lab.assert_no_exception()
    assert any("nothing was changed" in e for e in lab.errors("main")), lab.errors("main")
    np.testing.assert_array_equal(lab.state["x"], kept)
    # The table works again for the next real edit, and the message is answered once.
    _edit_phone(lab, "x", {0: {"value": "2.5"}})
    lab.assert_clean()
    assert lab.state["x"][0, 0] == 2.5


def test_the_feature_column_is_named_as_not_editable(lab):
    lab.open("Inputs")
    _edit_phone(lab, "x", {0: {"feature": "3"}})
    (error,) = lab.errors("main")
    assert "“feature” cannot be edited" in error and "“value”" in error, error


@pytest.mark.parametrize("first", ["wide", "phone"])
def test_the_later_edit_of_a_cell_wins_whichever_table_it_was_made_in(lab, first):
    """Each table keeps its edits across reruns: the older one must not be read again over the
    newer (the first edit's table starts again from the array)."""
    lab.open("Inputs")
    edits = {
        "wide": lambda value: lab.edit("x", {0: {"0": value}}),
        "phone": lambda value: _edit_phone(lab, "x", {0: {"value": value}}),
    }
    second = "phone" if first == "wide" else "wide"
    edits[first]("7.5")
    assert lab.state["x"][0, 0] == 7.5
    edits[second]("3")
    lab.assert_clean()
    assert lab.state["x"][0, 0] == 3.0
    lab.run()
    lab.run()
    assert lab.state["x"][0, 0] == 3.0


# -- the Stepper's result tables: one row per number on a phone ---------------------------------


def test_each_wide_result_table_has_a_phone_table_with_the_same_numbers(lab):
    lab.open("Stepper").step_to(20)
    lab.assert_clean()
    frames = list(lab.at.main.dataframe)
    wide = [f for f in frames if list(f.value.columns) != ["row", "column", "value"]]
    phone = [f.value for f in frames if list(f.value.columns) == ["row", "column", "value"]]
    # dx, and dgamma with dbeta, in the last step's result; its contributions and checks are
    # the browser's (pages/stepper/walk.js), cells that wrap on a phone.
    assert len(phone) == 2
    wider = [f.value for f in wide if f.value.select_dtypes("number").shape[1] > 4]
    assert len(wider) == len(phone)
    for table, entries in zip(wider, phone, strict=True):
        numbers = table.select_dtypes("number")
        np.testing.assert_array_equal(entries["value"].to_numpy(), numbers.to_numpy().ravel())
        assert entries["column"].tolist() == [str(c) for c in numbers.columns] * len(table)
        assert entries["row"].iloc[0].startswith(str(table.index[0]))
    # A contribution names its part, and their sum is the result's dx for the row on screen.
    blocks = {b["title"].split(" (")[0]: b for b in lab.shown_step()["blocks"]}
    assert "from x_sm" in blocks and "from sample_mean" in blocks, list(blocks)
    summed = np.array(blocks["dx"]["full"], dtype=float)
    np.testing.assert_array_equal(summed, wider[0].select_dtypes("number").to_numpy()[0])


def _table_keys(node) -> list[str]:
    """The keys of the containers under `node`, in the page's order."""
    proto = getattr(node, "proto", None)
    own = [proto.id.rsplit("-", 1)[-1]] if proto is not None and getattr(proto, "id", "") else []
    return own + [
        key for child in getattr(node, "children", {}).values() for key in _table_keys(child)
    ]


def _two_tables() -> None:
    import numpy as np

    from ui.draw.tables import numbers_table, vectors_frame

    numbers_table(vectors_frame(np.arange(10.0).reshape(2, 5)))
    numbers_table(vectors_frame(np.arange(12.0).reshape(2, 6)))


def test_a_table_keeps_its_keys_from_one_run_to_the_next():
    # A new key mounts a new grid in the browser: a following student's phone spent most of a
    # followed step on the Stepper's tables, redrawn under new keys on every run.
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_two_tables).run()
    first = _table_keys(at.main)
    assert first == ["numbers_wide_1", "numbers_phone_1", "numbers_wide_2", "numbers_phone_2"]
    assert _table_keys(at.run().main) == first
