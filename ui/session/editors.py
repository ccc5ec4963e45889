"""Data editors bound to arrays in the shared state, read cell by cell and exactly.

The tables hold text, not numbers: a browser's number cell rewrites what a student types
(`1e-3` became -13), while text reaches the server as typed and ui.entry.numbers reads it exactly
or refuses it. Only the cells the student edited are read, so every other entry keeps its
exact value whatever the table shows: the wide table shows numbers to a few significant digits
(all seventeen were cut mid-number), and a cell committed as it was shown keeps its value.

Each array has two tables, of which the page's style shows one: a row per vector above 640 px,
and on a phone a row per entry (vector, feature, number), whose three columns fit a 390 px screen
with every digit. Both read their edits through the same checks into the same array.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from ui.draw.tables import KEPT_ENTRIES, Content, content_arrays, content_key, row_labels
from ui.entry.literal import literal
from ui.entry.numbers import format_number, parse_number, short_number, shown_digits
from ui.server import caps
from ui.session.errors import listed

EDIT_FIELDS = ("edited_rows", "added_rows", "deleted_rows")
UNREADABLE = object()
# The phone's table: the vector is its index, then the feature (not editable) and the number.
PHONE_COLUMNS = ("feature", "value")
PHONE_EDITABLE = ("value",)


@dataclass(frozen=True)
class Cell:
    """One edited cell: its row and column position in the table, what was typed, and what the
    table showed there before."""

    row: int
    column: int
    typed: object
    shown: str


def array_editor(
    name: str,
    array: np.ndarray,
    store: Callable[[np.ndarray], None],
    index: list[str] | None = None,
) -> None:
    """Edit `array` cell by cell; a valid edit is passed to `store` and the page reruns.

    The editor's key carries the state's editor_version, so arrays replaced from outside
    (preset, CSV, another upstream gradient) show up instead of old edits. An edit that is
    not a number, or an edit message no table sends (a row or column that does not exist,
    added or deleted rows), shows st.error under the table and leaves the array as it was.
    An array larger than the table cap is not drawn (a note says why): the browser would be
    slow to fill it.
    """
    too_large = caps.refusal("inputs", array.shape, what=f"The table of {name}")
    if too_large is not None:
        st.info(too_large)
        return
    frame, phone, digits = _frames(array, index)
    key = f"editor_{name}_{st.session_state['editor_version']}"
    phone_key = f"phone_{key}"
    tables = ((key, frame, None), (phone_key, phone, PHONE_EDITABLE))
    problems = []
    for own, shown, editable in tables:
        edits = _edits(own)
        try:
            new = applied(
                array, table_cells(edits, shown, editable, len(frame.columns)), name, frame
            )
        except ValueError as err:
            problems.append(str(err))
            new = array
        if not np.array_equal(new, array):
            # The other table's edits are in the array already; kept, they would be read again
            # over this one's.
            for other, _, _ in tables:
                if other != own:
                    st.session_state.pop(other, None)
            store(new)
            st.rerun()
        if edits is not None and edit_problem(edits, shown, editable) is not None:
            # Streamlit would fail on this message itself: the editor starts again from the array.
            del st.session_state[own]
    # Narrow columns keep a row of D numbers in view.
    narrow = {column: st.column_config.TextColumn(width="small") for column in frame.columns}
    st.data_editor(frame, key=key, width="stretch", column_config=narrow)
    st.data_editor(phone, key=phone_key, width="stretch", column_config=_PHONE_CONFIG)
    if digits is not None:
        st.caption(f"Shown to {digits} significant digits; every page computes with all.")
    for problem in problems:
        st.error(problem, icon=":material/error:")


_PHONE_CONFIG = {
    "feature": st.column_config.TextColumn(width="small", disabled=True),
    "value": st.column_config.TextColumn(width="medium"),
}


def _frames(
    array: np.ndarray, index: list[str] | None
) -> tuple[pd.DataFrame, pd.DataFrame, int | None]:
    """`array` as text in its two tables, and the significant digits the first shows where it
    rounds (None where it shows every number exactly), made once per content up to
    KEPT_ENTRIES numbers (the editors copy what they are given, so the frames stay unchanged).
    """
    labels = None if index is None else tuple(index)
    if array.size > KEPT_ENTRIES:
        return _text_frames(array, labels)
    return _kept_frames(content_key({"array": array}), labels)


@functools.lru_cache(maxsize=64)
def _kept_frames(
    content: Content, index: tuple[str, ...] | None
) -> tuple[pd.DataFrame, pd.DataFrame, int | None]:
    return _text_frames(content_arrays(content)["array"], index)


def _text_frames(
    array: np.ndarray, index: tuple[str, ...] | None
) -> tuple[pd.DataFrame, pd.DataFrame, int | None]:
    """_frames, made anew.

    The first has one row per vector (or per name of `index`) and one column per feature, its
    numbers to shown_digits; the phone's has one row per entry, with room for every digit: the
    vector's label as the index, then the feature and the number, vector after vector.
    """
    flat = np.asarray(array, dtype=np.float64).ravel().tolist()
    digits = shown_digits(flat)
    exact = [format_number(v) for v in flat]
    short = [short_number(v, digits) for v in flat]
    d = array.shape[-1]
    vectors = tuple(row_labels(array.shape) if index is None else index)
    labels = _labels(vectors, d)
    rows = [short[start : start + d] for start in range(0, len(short), d)]
    wide = pd.DataFrame(rows, index=labels.vectors, columns=labels.features)
    phone = pd.DataFrame(
        {"feature": labels.entry_features, "value": exact}, index=labels.entry_vectors
    )
    return wide, phone, None if short == exact else digits


@dataclass(frozen=True)
class _Labels:
    """The two tables' labels: the wide one's rows and columns, the phone's rows and features."""

    vectors: pd.Index
    features: pd.Index
    entry_vectors: pd.Index
    entry_features: tuple[str, ...]


# Built once per shape: pandas turns a list of strings into an Arrow string array, which cost
# more than the rest of building a small table (as in ui.draw.tables).
@functools.lru_cache(maxsize=64)
def _labels(vectors: tuple[str, ...], d: int) -> _Labels:
    features = [str(j) for j in range(d)]
    return _Labels(
        pd.Index(vectors),
        pd.Index(features),
        pd.Index([v for v in vectors for _ in features]),
        tuple(features) * len(vectors),
    )


def _edits(key: str) -> object:
    """The editor's edit message, None before any edit, or a marker for an unreadable one
    (a message of null included: no table sends one)."""
    try:
        if key not in st.session_state:
            return None
        edits = st.session_state[key]
        return UNREADABLE if edits is None else edits
    except (ValueError, TypeError, AttributeError, KeyError):
        # Streamlit decodes the message on first read; a hand-built one may not decode.
        return UNREADABLE


def edit_problem(
    edits: object, frame: pd.DataFrame, editable: Sequence[str] | None = None
) -> str | None:
    """Why a data editor's message cannot come from this table, or None if it can.

    editable: the columns a cell may be edited in (None: every column).
    """
    if not isinstance(edits, Mapping) or not set(edits) <= set(EDIT_FIELDS):
        return "The table received an edit it does not understand; nothing was changed."
    if edits.get("added_rows") or edits.get("deleted_rows"):
        return (
            "Rows cannot be added or deleted here, so nothing was changed: the table keeps its "
            f"{len(frame)} rows. "
            "Change N, B, L or D in the sidebar for another shape."
        )
    rows = edits.get("edited_rows") or {}
    if not isinstance(rows, Mapping):
        return "The table received an edit it does not understand; nothing was changed."
    columns = [str(c) for c in frame.columns]
    problems = []
    for row, changes in rows.items():
        if _position(row, len(frame)) is None:
            problems.append(f"row {literal(row)} does not exist")
        elif not isinstance(changes, Mapping):
            problems.append(f"row {literal(row)} holds no cells")
        else:
            for column in map(str, changes):
                if column not in columns:
                    problems.append(f"column {literal(column)} does not exist")
                elif editable is not None and column not in editable:
                    problems.append(f"column {literal(column)} cannot be edited")
    if not problems:
        return None
    cells = (
        f"and columns 0 to {len(columns) - 1}"
        if editable is None
        else "and only its column " + " and ".join(map(literal, editable)) + " can be edited"
    )
    return (
        "The table received edits for cells it does not have, so nothing was changed "
        f"(it has {len(frame)} rows {cells}):\n\n" + listed(problems)
    )


def edited_cells(
    edits: object, frame: pd.DataFrame, editable: Sequence[str] | None = None
) -> list[Cell]:
    """The cells a data editor's message changes. Raises ValueError if it is malformed."""
    if edits is None:
        return []
    problem = edit_problem(edits, frame, editable)
    if problem is not None:
        raise ValueError(problem)
    columns = [str(c) for c in frame.columns]
    cells = []
    for row, changes in (edits.get("edited_rows") or {}).items():
        position = _position(row, len(frame))
        for column, typed in changes.items():
            where = columns.index(str(column))
            cells.append(Cell(position, where, typed, str(frame.iat[position, where])))
    return cells


def table_cells(
    edits: object, shown: pd.DataFrame, editable: Sequence[str] | None, d: int
) -> list[Cell]:
    """The cells of the row-per-vector table of D columns that an edit of `shown` changes.

    shown: that table (editable None), or its phone form (editable PHONE_EDITABLE), whose row
    k is entry k % D of vector k // D. Raises ValueError if the message is malformed.
    """
    cells = edited_cells(edits, shown, editable)
    if editable is None:
        return cells
    return [Cell(cell.row // d, cell.row % d, cell.typed, cell.shown) for cell in cells]


def applied(array: np.ndarray, cells: list[Cell], name: str, frame: pd.DataFrame) -> np.ndarray:
    """`array` with the edited cells read in; ValueError naming every cell that is refused.

    array: (D,), (N, D) or (B, L, D); the table shows it as rows of D.
    """
    rows = np.array(array, dtype=np.float64).reshape(len(frame), -1)
    problems = []
    for cell in cells:
        if cell.typed == cell.shown:
            continue  # committed as shown: a rounded number must not replace the exact one
        try:
            rows[cell.row, cell.column] = parse_number(cell.typed)
        except ValueError as err:
            where = f"{frame.index[cell.row]}, column {frame.columns[cell.column]}"
            problems.append(f"the cell in {where} {err}")
    if problems:
        raise ValueError(
            f"{name}: the last valid values are still in use, because\n\n" + listed(problems)
        )
    return rows.reshape(array.shape)


def _position(row: object, count: int) -> int | None:
    """A row key of an edit message as a row position, or None if there is no such row."""
    text = str(row)
    if isinstance(row, bool) or not text.isdigit() or int(text) >= count:
        return None
    return int(text)


# The page's style (ui.session.presenter) shows one table of each array: a row per vector above
# 640 px, a row per entry on a phone, where eight columns of numbers would be cut mid-digit.
PHONE_TABLES_CSS = """
[class*="st-key-phone_editor_"] { display: none; }
@media (max-width: 640px) {
  [class*="st-key-editor_"] { display: none; }
  [class*="st-key-phone_editor_"] { display: flex; }
}
"""
