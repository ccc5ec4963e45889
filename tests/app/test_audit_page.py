"""Derivation audit page: the summary comes first, the verdicts follow the inputs, "cannot
decide" shows where the inputs cannot decide, and nothing a student cannot read is shown."""

from __future__ import annotations

import json

import numpy as np

from ln_core.audit import DOCUMENTS
from ui.lesson import guide

VERDICTS = {"correct", "wrong", "cannot decide"}


def _summary(lab):
    return lab.at.main.dataframe[0].value


def _page_text(lab) -> str:
    parts = [m.value for m in lab.at.main.markdown] + [c.value for c in lab.at.main.caption]
    parts += [e.label for e in lab.at.main.expander] + [h.value for h in lab.at.main.header]
    return "\n".join(parts)


def _entries(lab) -> list:
    """The formulas' entries: the expanders but the notation's and the guide's at the foot."""
    return [
        e
        for e in lab.at.main.expander
        if not e.label.startswith("Notation") and e.label not in (guide.TRY, guide.PREDICT)
    ]


def test_summary_first_counts_its_verdicts_and_follows_the_seed(lab):
    lab.open("Derivation audit")
    lab.assert_clean()
    frame = _summary(lab)
    # The verdict and the formula first: on a phone they are what shows.
    assert list(frame.columns) == [
        "verdict",
        "formula",
        "error on your inputs",
        "corrected form's error",
        "document",
        "error",  # the phone's narrower column (ui.draw.audit_view.PHONE_COLUMNS)
    ]
    heading = lab.subheaders()[0]
    tally = {v: int((frame["verdict"] == v).sum()) for v in VERDICTS}
    assert heading == (
        f"{len(frame)} formulas from 5 documents: {tally['correct']} correct, "
        f"{tally['wrong']} wrong, {tally['cannot decide']} that these inputs cannot decide"
    )
    assert set(frame["verdict"]) <= VERDICTS and tally["wrong"] > 0 and tally["correct"] > 0
    # One document's formulas are unfolded at a time: each document's entries, when chosen.
    for key in DOCUMENTS:
        lab.widget("selectbox", "Read one document's formulas").set_value(key)
        lab.run()
        lab.assert_clean()
        name = lab.subheaders()[1]
        entries = _entries(lab)
        assert len(entries) == int(frame["document"].str.lower().eq(name.lower()).sum()) > 0

    lab.set_sidebar("seed", 5)
    lab.assert_clean()
    after = _summary(lab)
    assert not np.array_equal(frame["error on your inputs"], after["error on your inputs"])
    assert list(after["verdict"]) == list(frame["verdict"])  # a random seed decides alike


def _pick(lab, row: int) -> None:
    """Select the summary's row `row`, as a click on it does."""
    lab.state[lab.audit_picker()] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    lab.run()
    lab.assert_clean()


def test_no_summary_column_is_drawn_faded(lab):
    """Streamlit draws the text of a pinned column faded, at 3.8:1 on white: the verdicts, the
    column a room reads first, were grey on the desk and the projector."""
    lab.open("Derivation audit")
    tables = lab.at.main.dataframe[:2]
    assert len(tables) == 2
    for table in tables:
        columns = json.loads(table.proto.columns)
        assert not [name for name, config in columns.items() if config.get("pinned")], columns


def test_d2_without_eps_shows_cannot_decide(lab):
    lab.set_sidebar("d", 2).set_sidebar("eps", 0.0)
    lab.open("Derivation audit")
    lab.assert_clean()
    frame = _summary(lab)
    undecided = frame[frame["verdict"] == "cannot decide"]
    assert "the three-path ∇X derivation" in set(undecided["document"])
    assert "These inputs cannot decide" not in _page_text(lab)  # every entry folded
    three_path = undecided[undecided["document"] == "the three-path ∇X derivation"]
    _pick(lab, int(three_path.index[0]))
    assert lab.subheaders()[1] == "The three-path ∇X derivation"
    assert "These inputs cannot decide" in _page_text(lab)
    assert "Try D ≥ 3" in _page_text(lab)


def test_a_selected_row_opens_nothing_else_when_the_table_lists_other_formulas(lab):
    """Streamlit keeps a keyed table's selection by position (streamlit#17026): row 5 of every
    formula, kept when the filter leaves only the wrong ones, was another formula, which opened
    unasked. A table of other rows starts unselected; one of the same rows keeps its row."""
    lab.open("Derivation audit")
    _pick(lab, 5)
    (picked,) = lab.state["audit_opened"]
    lab.state["audit_opened"] = frozenset()
    for verdict in ("wrong", "cannot decide", "all"):
        lab.state["audit_filter"] = verdict
        lab.run()
        lab.assert_clean()
        assert lab.state["audit_opened"] == frozenset(), verdict
    # Other inputs, the same list of formulas: the row stays selected, the same formula, and
    # does not reopen it once folded.
    _pick(lab, 5)
    assert lab.state["audit_opened"] == {picked}
    lab.state["audit_opened"] = frozenset()
    key = lab.audit_picker()
    lab.set_sidebar("seed", 7)
    assert lab.audit_picker() == key and lab.state["audit_opened"] == frozenset()


def test_a_row_let_go_and_selected_again_reopens_its_formula(lab):
    """A click on the selected row lets it go; a click on it again is a new choice, and opens
    the formula the student had folded (it stayed folded while the row stayed selected)."""
    lab.open("Derivation audit")
    _pick(lab, 5)
    (picked,) = lab.state["audit_opened"]
    lab.state["audit_opened"] = frozenset()  # folded
    lab.run()
    assert lab.state["audit_opened"] == frozenset()
    lab.state[lab.audit_picker()] = {"selection": {"rows": [], "columns": [], "cells": []}}
    lab.run()
    assert lab.state["audit_opened"] == frozenset()
    _pick(lab, 5)
    assert lab.state["audit_opened"] == {picked}


def test_d2_without_eps_shows_no_error_of_two_round_offs_as_a_number(lab):
    """Every dx is 0 up to round-off there: a right formula's relative error is then the ratio
    of two round-offs. The summary and the entries say so instead of showing it (the lab's own
    correction of a wrong formula was shown with error 1.0e+00)."""
    lab.set_sidebar("d", 2).set_sidebar("eps", 0.0)
    lab.open("Derivation audit")
    frame = _summary(lab)
    corrected = frame[frame["corrected form's error"] != "—"]
    assert "within round-off" in set(corrected["corrected form's error"])
    # A number there is a correction that is right, to round-off, on these inputs.
    numbers = corrected[corrected["corrected form's error"] != "within round-off"]
    assert all(float(e) < 1e-9 for e in numbers["corrected form's error"])
    undecided = frame[frame["verdict"] == "cannot decide"]
    assert "within round-off" in set(undecided["error on your inputs"])
    # On the phone's narrow column the words would break mid-word: a dash there.
    rounding = frame["error on your inputs"] == "within round-off"
    assert set(frame[rounding]["error"]) == {"—"}
    assert (frame[~rounding]["error"] == frame[~rounding]["error on your inputs"]).all()
    wrong = frame[(frame["verdict"] == "wrong") & (frame["corrected form's error"] != "—")]
    row = wrong[wrong["corrected form's error"] == "within round-off"].index[0]
    _pick(lab, int(row))
    assert (
        "The corrected form's error on your inputs is within round-off: the true value is 0 up "
        "to round-off here" in _page_text(lab)
    )


def test_documents_by_name_with_their_notation_no_hash_names_no_none(lab):
    lab.open("Derivation audit")
    frame = _summary(lab)
    assert frame["document"].iloc[0] == "the residual-connection derivation"
    text = _page_text(lab)
    assert ".txt" not in text and "_f12dc" not in text
    assert "None" not in text and "nan" not in text.lower().split()
    assert not frame.isin(["None", "nan"]).to_numpy().any()
    assert frame["corrected form's error"].eq("—").sum() > 0  # a dash where nothing is corrected
    notation = [e for e in lab.at.main.expander if e.label.startswith("Notation")]
    assert len(notation) == 1  # the chosen document's
    # A folded entry draws nothing; an open wrong one, the formula as written and its
    # correction.
    assert not lab.at.main.latex
    wrong = frame[(frame["document"] == frame["document"].iloc[0]) & (frame["verdict"] == "wrong")]
    _pick(lab, int(wrong.index[0]))
    assert len(lab.at.main.latex) == 2


def test_the_wrong_only_filter_keeps_the_wrong_formulas_in_the_table_and_below(lab):
    lab.open("Derivation audit")
    everything = _summary(lab)
    lab.at.main.get("button_group")[0].set_value("wrong")
    lab.run()
    lab.assert_clean()
    wrong = _summary(lab)
    assert set(wrong["verdict"]) == {"wrong"}
    assert len(wrong) == int((everything["verdict"] == "wrong").sum()) > 0
    titles = [e.label for e in lab.at.main.expander if ": " in e.label and "error" in e.label]
    assert all(": wrong (" in title for title in titles), titles


def test_selecting_a_row_opens_that_formulas_explanation(lab):
    lab.open("Derivation audit")
    frame = _summary(lab)
    row = int(frame.index[frame["verdict"] == "wrong"][0])
    _pick(lab, row)
    step = frame["formula"].iloc[row]
    opened = [e for e in lab.at.main.expander if e.label.startswith(f"{step}: ")]
    assert opened and opened[0].proto.expanded, step
    document = frame["document"].iloc[row]
    assert lab.subheaders()[1].lower() == document.lower()


def test_the_notation_key_names_no_internal_key(lab):
    lab.open("Derivation audit")
    notation = [m.value for m in lab.at.main.markdown if "in the lab" in m.value]
    assert notation and not [n for n in notation if " writes |" in n and "document writes" not in n]


def _open_entries(lab) -> dict[str, bool]:
    """Each formula's entry on the page: whether it is open, by step."""
    return {e.label.split(": ")[0]: bool(e.children) for e in _entries(lab)}


def test_an_opened_formula_stays_open_as_the_inputs_change_and_folded_stays_folded(lab):
    lab.open("Derivation audit")
    frame = _summary(lab)
    row = int(frame.index[frame["verdict"] == "wrong"][0])
    step = frame["formula"].iloc[row]
    _pick(lab, row)
    titles = [e.label for e in lab.at.main.expander]
    assert _open_entries(lab)[step] and sum(_open_entries(lab).values()) == 1
    lab.set_sidebar("seed", 3)  # another error in every title: Streamlit's widgets are new
    assert [e.label for e in lab.at.main.expander] != titles
    assert _open_entries(lab)[step] and sum(_open_entries(lab).values()) == 1
    # The student folds it (what the fold's callback stores); the row stays selected, and a
    # later run must not open it again.
    lab.state["audit_opened"] = frozenset()
    lab.set_sidebar("seed", 4)
    assert not any(_open_entries(lab).values())
