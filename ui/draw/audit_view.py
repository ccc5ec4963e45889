"""Drawing the derivation audit: the summary table first, then one document at a time with its
notation key and one folded entry per formula (pages/audit/audit.py holds the choice of document,
which is session state)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import pyarrow as pa
import streamlit as st

from ln_core.audit import DOCUMENTS, FORMULA, ROUND_OFF, UNDERFLOW, AuditResult, Document

# Given an entry's widget key and its (document, step), the keyword arguments that make its fold
# a view of the page's record of open formulas (ui.session.state.member_of does that).
Fold = Callable[[str, tuple[str, str]], dict[str, Any]]

ICONS = {
    "correct": ":material/check_circle:",
    "wrong": ":material/cancel:",
    "cannot decide": ":material/help:",
}
DASH = "—"


def plain(text: str) -> str:
    """Prose for st.markdown with Markdown's emphasis characters shown as themselves."""
    return text.replace("\\", "\\\\").replace("_", "\\_").replace("*", "\\*")


# A relative error that does not measure the formula is not shown as a number (AuditResult's
# error_measures): on a true value that is 0 up to round-off it is the ratio of two round-offs,
# anything up to 1, and after an underflow it is float64's loss.
NOT_THE_FORMULA = {ROUND_OFF: "within round-off", UNDERFLOW: "lost to underflow"}
WHY_NOT_A_NUMBER = {
    ROUND_OFF: "the true value is 0 up to round-off here, so there is no relative error to measure",
    UNDERFLOW: "a step of it falls below float64's smallest normal number on these inputs",
}


def number(value: float | None, measures: str = FORMULA) -> str:
    """An error as text: a dash where there is none, words where it does not measure the
    formula (`measures`, AuditResult.error_measures)."""
    if value is None:
        return DASH
    return NOT_THE_FORMULA.get(measures, f"{value:.1e}")


def _tally(results: list[AuditResult]) -> str:
    """'60 correct, 10 wrong, 9 that these inputs cannot decide'."""
    tally = {v: sum(r.verdict == v for r in results) for v in ICONS}
    return (
        f"{tally['correct']} correct, {tally['wrong']} wrong, {tally['cannot decide']} that "
        "these inputs cannot decide"
    )


def counts(results: list[AuditResult]) -> str:
    """'79 formulas from 5 documents: 60 correct, 10 wrong, 9 that these inputs cannot ...'."""
    return f"{len(results)} formulas from {len(DOCUMENTS)} documents: {_tally(results)}"


# What the summary can be narrowed to: every formula, or one verdict.
FILTERS = {"all": "every formula", "wrong": "wrong only", "cannot decide": "cannot decide only"}


def keeps(verdict: str, result: AuditResult) -> bool:
    """Whether the filter ("all", or one verdict) keeps `result`."""
    return verdict in ("all", result.verdict)


def kept(results: list[AuditResult], verdict: str) -> list[AuditResult]:
    """The results the filter keeps."""
    return [r for r in results if keeps(verdict, r)]


def summary_frame(results: list[AuditResult]) -> pd.DataFrame:
    """One row per formula, every column text (a dash where there is no number). The verdict
    and the formula come first: on a narrow screen they are what shows."""
    return pd.DataFrame(
        {
            "verdict": [r.verdict for r in results],
            "formula": [r.step for r in results],
            "error on your inputs": [number(r.error, r.error_measures) for r in results],
            "corrected form's error": [
                number(r.correction_error, r.correction_error_measures) for r in results
            ],
            "document": [DOCUMENTS[r.document].name for r in results],
            # The phone's column is too narrow for the words: a dash, beside "cannot decide".
            "error": [number(r.error) if r.error_measures == FORMULA else DASH for r in results],
        }
    )


# The summary's 79 rows of text through pandas and Arrow took a tenth of the page's CPU on every
# rerun: the table is kept per list of results, as _numbers_table keeps an entry's.
@functools.lru_cache(maxsize=16)
def _summary_table(results: tuple[AuditResult, ...]) -> pa.Table:
    return pa.Table.from_pandas(summary_frame(list(results)), preserve_index=False)


def _notation(document: Document) -> None:
    with st.expander("Notation: this document next to the lab", icon=":material/translate:"):
        rows = "\n".join(f"| ${s.document}$ | {plain(s.lab)} |" for s in document.notation)
        st.markdown(f"| the document writes | in the lab |\n|---|---|\n{rows}")


# Building each entry's small table through pandas and Arrow was a third of the audit's CPU on
# every rerun; the same numbers give the same table, and an Arrow table cannot be changed, so one
# is kept per pair of columns (as Streamlit would have converted the frame itself).
@functools.lru_cache(maxsize=1024)
def _numbers_table(values: tuple[float, ...], reference: tuple[float, ...]) -> pa.Table:
    return pa.Table.from_pandas(
        pd.DataFrame(
            {
                "the formula gives": [f"{v:.6g}" for v in values],
                "the true value": [f"{v:.6g}" for v in reference],
            },
            index=[f"entry {i + 1}" for i in range(len(values))],
        )
    )


def _numbers(result: AuditResult) -> None:
    """The first numbers of the formula and of the true value, side by side."""
    if not result.values:
        return
    # The rows are named ("entry 1", ...), so the index shows; said here, because left to guess
    # Streamlit turns the Arrow table back into pandas to look at its index.
    table = _numbers_table(tuple(result.values), tuple(result.reference_values))
    st.table(table, hide_index=False)


def _correction_error(result: AuditResult) -> str:
    measures = result.correction_error_measures
    error = number(result.correction_error, measures)
    if measures in WHY_NOT_A_NUMBER:
        return (
            f"The corrected form's error on your inputs is {error}: {WHY_NOT_A_NUMBER[measures]}."
        )
    return f"The corrected form's error on your inputs: {error}."


def _entry(result: AuditResult, place: int, fold: Fold) -> None:
    title = f"{result.step}: {result.verdict} (error {number(result.error, result.error_measures)})"
    # The page's state is the truth and the fold its view (`fold` binds it): the title, and with
    # it Streamlit's widget, changes with the inputs, and an entry the student opened stays open.
    key = f"audit_entry_{result.document}_{place}"
    entry = st.expander(
        title, icon=ICONS[result.verdict], **fold(key, (result.document, result.step))
    )
    # A closed entry's content is not drawn: drawing every entry of a document was nine tenths
    # of this fragment's CPU. Opening one reruns the fragment, which then draws it.
    if not entry.open:
        return
    with entry:
        st.markdown(
            "**The lab's own completion (the document never writes this line)**"
            if result.written_by_lab
            else "**As written in the document**"
        )
        st.latex(result.line)
        st.caption(plain(f"Model: {result.model}."))
        # Consecutive paragraphs go in one Markdown element (they read the same, one paragraph
        # each): an element costs more to send than its text, and a document has a dozen
        # entries or more.
        reading = [plain(f"How it is read: {result.reading}")] if result.reading else []
        st.markdown(
            "\n\n".join(
                [
                    *reading,
                    plain(f"It claims to be {result.claim}; checked against {result.reference}."),
                    f"**{result.verdict.capitalize()}.** {plain(result.reason)}",
                ]
            )
        )
        _numbers(result)
        if result.mistake is not None:
            st.markdown(f"**The mistake.** {plain(result.mistake)}\n\n**Smallest correction**")
            st.latex(result.correction)
            st.caption(_correction_error(result))
        if result.note:
            st.info(plain(result.note), icon=":material/school:")


# On a phone the summary's five columns would run off the screen: a second table, shown there
# instead (the page's style, ui.session.presenter, shows one of the two), keeps the verdict, the
# formula (wrapped) and its error; the rest is in the formula's explanation a row opens.
PHONE_COLUMNS = ("verdict", "formula", "error")
# The desk's table: every column but the phone's own.
DESK_COLUMNS = ("verdict", "formula", "error on your inputs", "corrected form's error", "document")
# Streamlit wraps a cell's text only in rows taller than 4rem (64 px); four lines hold the
# longest formula's name. Six rows in view, fewer if fewer are kept (a header is ~37 px).
PHONE_ROW_HEIGHT = 84
PHONE_ROWS_SHOWN = 6
# What a 390 px screen leaves the formula beside the selection box, the verdict and the error.
PHONE_FORMULA_WIDTH = 180
# On the desk and the projector the formula's and the document's columns are as wide as the
# others allow at 1024 px, and rows hold three lines, so no name is cut (at 200 px the longest
# document's name took four lines in presenter mode and ran into the next row). The wrapping
# needs rows taller than 4rem, which presenter mode's larger type makes 84 px.
DESK_ROW_HEIGHT = 70
PRESENTER_ROW_HEIGHT = 92
DESK_ROWS_SHOWN = 8
DESK_VERDICT_WIDTH = 90
DESK_FORMULA_WIDTH = 240
DESK_DOCUMENT_WIDTH = 260
SUMMARY_CSS = """
[class*="st-key-audit_pick_phone_"] { display: none; }
@media (max-width: 640px) {
  [class*="st-key-audit_pick_wide_"] { display: none; }
  [class*="st-key-audit_pick_phone_"] { display: flex; }
}
"""


# Both tables: a row is selected to open its explanation.
_PICKER = {
    "width": "stretch",
    "hide_index": True,
    "on_select": "rerun",
    "selection_mode": "single-row",
}


def picked_row(selection: Mapping, count: int) -> int | None:
    """The row a summary table's selection picks: None for none, or for a row past the table's
    `count`. Raises ValueError for one no click sends: several rows, or a row that is not a
    whole number from 0."""
    rows = selection["selection"]["rows"]
    if not rows:
        return None
    row = rows[0] if isinstance(rows, list) and len(rows) == 1 else None
    if isinstance(row, bool) or not isinstance(row, int) or row < 0:
        raise ValueError("is not one row of the table")
    return row if row < count else None


def picker_keys(shown: list[AuditResult]) -> tuple[str, str]:
    """The keys of the summary's two tables (the wide one and the phone's), named by the
    formulas they list. Streamlit keeps a keyed table's selection by position when its rows
    change (streamlit#17026): after the filter or new inputs change the list, the selected row
    would be another formula, which would open unasked. A table of other rows is another widget
    and starts unselected."""
    rows = hashlib.blake2s("\n".join(r.id for r in shown).encode(), digest_size=6).hexdigest()
    return f"audit_pick_wide_{rows}", f"audit_pick_phone_{rows}"


def summary(results: list[AuditResult], verdict: str, presenter: bool) -> AuditResult | None:
    """The count of every verdict and the table of the formulas the filter keeps (taller rows
    for a projector); returns the formula whose row was selected (its explanation opens below),
    or None. The tables' keys are picker_keys(kept(results, verdict)): a selection no click
    sends must be gone from the page's state before this draws them."""
    with st.container(key="main_figure"):
        st.header(counts(results))
    shown = kept(results, verdict)
    wide_key, phone_key = picker_keys(shown)
    st.caption("Select a row for its explanation.")
    # Converted once for both tables.
    table = _summary_table(tuple(shown))
    row_height = PRESENTER_ROW_HEIGHT if presenter else DESK_ROW_HEIGHT
    wide = st.dataframe(
        table,
        key=wide_key,
        **_PICKER,
        column_order=DESK_COLUMNS,
        row_height=row_height,
        height=_height(row_height, len(shown), DESK_ROWS_SHOWN),
        # Not pinned: Streamlit draws a pinned column's text faded (3.8:1 on white), and the
        # verdict is what a room reads first.
        column_config={
            "verdict": st.column_config.TextColumn(width=DESK_VERDICT_WIDTH),
            "formula": st.column_config.TextColumn(width=DESK_FORMULA_WIDTH),
            "document": st.column_config.TextColumn(width=DESK_DOCUMENT_WIDTH),
        },
    )
    phone = st.dataframe(
        table,
        key=phone_key,
        **_PICKER,
        column_order=PHONE_COLUMNS,
        row_height=PHONE_ROW_HEIGHT,
        height=_height(PHONE_ROW_HEIGHT, len(shown), PHONE_ROWS_SHOWN),
        column_config={
            "verdict": st.column_config.TextColumn(width=64),
            "formula": st.column_config.TextColumn(width=PHONE_FORMULA_WIDTH),
            "error": st.column_config.TextColumn(width=64),
        },
    )
    rows = [picked_row(event, len(shown)) for event in (wide, phone) if event is not None]
    return next((shown[row] for row in rows if row is not None), None)


def _height(row_height: int, rows: int, shown: int) -> int:
    """A table's height in pixels: its header and up to `shown` rows (one if it has none)."""
    return 40 + row_height * min(max(rows, 1), shown)


def document_labels(results: list[AuditResult]) -> dict[str, str]:
    """Each document's key and the label its choice shows: its name and number of formulas."""
    return {k: f"{d.name} ({sum(r.document == k for r in results)})" for k, d in DOCUMENTS.items()}


def document_entries(results: list[AuditResult], key: str, verdict: str, fold: Fold) -> None:
    """One document's formulas the filter keeps, each in a fold that `fold` binds to the page's
    record of open formulas, under its notation key."""
    document = DOCUMENTS[key]
    everything = [r for r in results if r.document == key]
    mine = kept(everything, verdict)
    st.header(document.name[0].upper() + document.name[1:])
    st.caption(plain(f"{document.summary} Here: {len(mine)} formulas, {_tally(mine)}."))
    _notation(document)
    # Keyed by its place in the whole document, so the filter does not move its fold.
    for place, result in enumerate(everything):
        if keeps(verdict, result):
            _entry(result, place, fold)
