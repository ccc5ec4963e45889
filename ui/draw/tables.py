"""Arrays as tables: one row per vector, so a (B, L, D) batch reads as B*L labelled rows."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import ln_core
from ui.streamlit_private import StreamlitDuplicateElementKey


def row_labels(shape: tuple[int, ...]) -> pd.Index:
    """Labels for the vectors of an array of this shape (all axes but the last)."""
    return _row_labels(tuple(shape[:-1]) if len(shape) > 1 else ())


# Labels are built once per shape: pandas turns a list of strings into an Arrow string array,
# which took longer than the rest of building a small table.
@functools.lru_cache(maxsize=256)
def _row_labels(leading: tuple[int, ...]) -> pd.Index:
    if not leading:
        return pd.Index(["vector"])
    if len(leading) == 1:
        return pd.Index([f"row {i}" for i in range(leading[0])])
    return pd.Index([f"b{b} t{t}" for b in range(leading[0]) for t in range(leading[1])])


@functools.lru_cache(maxsize=256)
def _columns(count: int) -> pd.Index:
    return pd.Index([str(j) for j in range(count)])


@functools.lru_cache(maxsize=256)
def _entry_labels(shape: tuple[int, ...]) -> pd.Index:
    return pd.Index([str(i) for i in np.ndindex(shape)])


def vectors_frame(array: np.ndarray) -> pd.DataFrame:
    """A DataFrame with one row per vector and one column per entry of the last axis.

    array: (D,), (N, D) or (B, L, D); a reduced node such as (N, 1) gives one column.
    """
    array = np.asarray(array)
    rows = array.reshape(-1, array.shape[-1]) if array.ndim else array.reshape(1, 1)
    labels = row_labels(array.shape)
    index = labels if rows.shape[0] == len(labels) else None
    return pd.DataFrame(rows, columns=_columns(rows.shape[1]), index=index)


# Streamlit sends a table as Arrow, and converting a small DataFrame to Arrow costs more than
# drawing it (0.4 ms for one row of 8), on every rerun. Tables of up to this many numbers are
# converted once per content and kept; Arrow's own conversion (pa.Table.from_pandas, index
# included) is what Streamlit does, so the table sent is the same. Larger ones are converted
# each time: keeping them would hold megabytes per entry.
KEPT_ENTRIES = 4096


# Named arrays as a cache key: each name with its bytes, dtype and shape.
Content = tuple[tuple[str, bytes, str, tuple[int, ...]], ...]


def content_key(arrays: dict[str, np.ndarray]) -> Content:
    """Named arrays as a cache key (content_arrays gives them back, read-only)."""
    named = {name: np.asarray(values) for name, values in arrays.items()}
    return tuple((name, a.tobytes(), a.dtype.str, a.shape) for name, a in named.items())


def content_arrays(content: Content) -> dict[str, np.ndarray]:
    return {
        name: np.frombuffer(data, dtype=dtype).reshape(shape)
        for name, data, dtype, shape in content
    }


def columns_table(columns: dict[str, np.ndarray], index: tuple[str, ...]) -> pa.Table:
    """A table of named 1-D columns with these row labels, as Arrow, converted once per content
    (as vectors_numbers; its callers show one number per vector or feature, a few thousand at
    most, so every table is kept)."""
    return _columns_table(content_key({name: np.ravel(c) for name, c in columns.items()}), index)


@functools.lru_cache(maxsize=128)
def _columns_table(content: Content, index: tuple[str, ...]) -> pa.Table:
    return pa.Table.from_pandas(pd.DataFrame(content_arrays(content), index=list(index)))


def rows_numbers(rows: dict[str, np.ndarray]) -> None:
    """numbers_table of one row per named array (its entries as columns 0, 1, ...), both its
    forms converted to Arrow once per content (its callers show one vector per row)."""
    content = content_key({name: np.ravel(row) for name, row in rows.items()})
    numbers_table(*_kept_tables(content, _rows_frame))


def _rows_frame(content: Content) -> pd.DataFrame:
    return pd.DataFrame(content_arrays(content)).T


def _vectors_frame(content: Content) -> pd.DataFrame:
    return vectors_frame(content_arrays(content)["array"])


@functools.lru_cache(maxsize=128)
def _kept_tables(
    content: Content, frame_of: Callable[[Content], pd.DataFrame]
) -> tuple[pa.Table, pa.Table]:
    """The table `frame_of` makes of `content` and its entries_frame, both as Arrow."""
    frame = frame_of(content)
    entries = pa.Table.from_pandas(entries_frame(frame), preserve_index=False)
    return pa.Table.from_pandas(frame), entries


# Tables show numbers to 4 significant digits, so 8 features fit side by side; the frame keeps
# every digit (hover a cell, or copy the table).
DISPLAY_FORMAT = "%.4g"


# A 390 px phone shows the row labels and this many numbers side by side; a wider table is also
# drawn one row per number, and the page's style (ui.session.presenter) shows that one there.
PHONE_NUMBERS = 4
NUMBERS_CSS = """
[class*="st-key-numbers_phone_"] { display: none; }
@media (max-width: 640px) {
  [class*="st-key-numbers_wide_"] { display: none; }
  [class*="st-key-numbers_phone_"] { display: flex; }
}
"""
_ENTRY_COLUMNS = {
    "row": st.column_config.TextColumn(),  # as wide as its longest label
    "column": st.column_config.TextColumn(width="small"),
    "value": st.column_config.NumberColumn(format=DISPLAY_FORMAT),
}


def vectors_numbers(array: np.ndarray) -> None:
    """numbers_table of an array as one row per vector, both its forms converted to Arrow once
    per content (see KEPT_ENTRIES; larger arrays each time)."""
    array = np.asarray(array)
    if array.size > KEPT_ENTRIES:
        numbers_table(vectors_frame(array))
        return
    numbers_table(*_kept_tables(content_key({"array": array}), _vectors_frame))


def _first_free(name: str) -> DeltaGenerator:
    """A container keyed `name`_n, n the first number not yet drawn in this run: the same
    table keeps its key from one run to the next, so the browser keeps its grid (a new key
    mounts a new one: a following student's phone spent most of a followed step on them)."""
    drawn = 1
    while True:
        try:
            return st.container(key=f"{name}_{drawn}")
        except StreamlitDuplicateElementKey:
            drawn += 1


def numbers_table(
    frame: pd.DataFrame | pa.Table, entries: pd.DataFrame | pa.Table | None = None, **kwargs
) -> None:
    """st.dataframe with every number column rounded for display, never cut mid-number (on a
    phone too: see PHONE_NUMBERS). `entries`: the frame's entries_frame, where it is kept."""
    if isinstance(frame, pa.Table):
        numeric = [f.name for f in frame.schema if pa.types.is_floating(f.type)]
    else:
        numeric = [str(c) for c in frame.select_dtypes("number").columns]
    formats = {c: st.column_config.NumberColumn(format=DISPLAY_FORMAT) for c in numeric}
    if len(numeric) <= PHONE_NUMBERS:
        st.dataframe(frame, width="stretch", column_config=formats, **kwargs)
        return
    # The keys name the two for the style (NUMBERS_CSS).
    with _first_free("numbers_wide"):
        st.dataframe(frame, width="stretch", column_config=formats, **kwargs)
    if entries is None:
        entries = entries_frame(frame if isinstance(frame, pd.DataFrame) else frame.to_pandas())
    with _first_free("numbers_phone"):
        st.dataframe(entries, width="stretch", column_config=_ENTRY_COLUMNS, hide_index=True)


def entries_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` one row per number: its row (the label, with the row's text columns, such as a
    contribution's part) and column, then the number."""
    text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    numeric = [c for c in frame.columns if c not in text]
    parts = [frame.index.astype(str).tolist(), *(frame[c].astype(str).tolist() for c in text)]
    labels = [" · ".join(names) for names in zip(*parts, strict=True)]
    return pd.DataFrame(
        {
            "row": np.repeat(labels, len(numeric)),
            "column": np.tile([str(c) for c in numeric], len(labels)),
            "value": frame[numeric].to_numpy().ravel(),
        }
    )


def contributions_frame(parts: list[tuple[str, np.ndarray]]) -> pd.DataFrame:
    """Several arrays of one shape interleaved per vector: row i of each part, then row i + 1.

    Used where a gradient is the sum of two contributions, so each vector's two parts and
    their sum stand directly above one another; the first column names the part.
    """
    frames = [vectors_frame(array) for _, array in parts]
    rows = []
    for position, row in enumerate(frames[0].index):
        for (label, _), frame in zip(parts, frames, strict=True):
            rows.append(pd.concat([pd.Series({"part": label}), frame.iloc[position]]).rename(row))
    return pd.DataFrame(rows)


# A band is drawn as a coloured label: green tiny, amber small, red large.
BAND_COLOURS = {"tiny": "#2b8a3e", "small": "#e67700", "large": "#c92a2a"}


def check_table(analytic: np.ndarray, numerical: np.ndarray, dtype: np.dtype) -> pa.Table:
    """check_frame as Arrow, converted once per content (see KEPT_ENTRIES): the gradient
    check's arrays are at most one group of its cap, 4,096 numbers."""
    return _check_table(content_key({"analytic": analytic, "numerical": numerical}), str(dtype))


@functools.lru_cache(maxsize=64)
def _check_table(content: Content, dtype: str) -> pa.Table:
    arrays = content_arrays(content)
    return pa.Table.from_pandas(
        check_frame(arrays["analytic"], arrays["numerical"], np.dtype(dtype))
    )


def check_frame(analytic: np.ndarray, numerical: np.ndarray, dtype: np.dtype) -> pd.DataFrame:
    """One row per entry: analytic, numerical, their relative error and its band.

    The band is a one-label list, the form Streamlit draws as a coloured label (see
    CHECK_COLUMNS); colouring cells through a pandas Styler cost more than the check itself.
    """
    errors = ln_core.elementwise_rel_error(analytic, numerical)
    return pd.DataFrame(
        {
            "analytic": np.ravel(analytic),
            "numerical": np.ravel(numerical),
            "relative error": np.ravel(errors),
            "entry error": [[ln_core.band(float(e), dtype)] for e in np.ravel(errors)],
        },
        index=_entry_labels(np.shape(analytic)),
    )


CHECK_COLUMNS = {
    "analytic": st.column_config.NumberColumn(format="%.6g"),
    "numerical": st.column_config.NumberColumn(format="%.6g"),
    "relative error": st.column_config.NumberColumn(format="%.1e"),
    "entry error": st.column_config.MultiselectColumn(
        options=list(BAND_COLOURS), color=list(BAND_COLOURS.values())
    ),
}


def bug_table(result: ln_core.BugCheck) -> pa.Table:
    """One row per entry of one vector: the true dx, the buggy dx, central differences, and
    the buggy dx's gap to the numerical one beside the bound the check judges it against."""
    return columns_table(
        {
            "true dx": np.ravel(result.true_dx),
            "buggy dx": np.ravel(result.dx),
            "numerical dx": np.ravel(result.numerical_dx),
            "|buggy - numerical|": np.ravel(result.gaps),
            "round-off bound": np.ravel(result.bound),
        },
        tuple(_entry_labels(np.shape(result.dx))),
    )


def bug_across_eps_table(
    eps_values: tuple[float, ...], results: tuple[ln_core.BugCheck, ...]
) -> pa.Table:
    """One row per eps: the buggy dx's relative error and whether the check caught it (kept
    per content, as columns_table keeps every table: through pandas and Arrow on every click
    it cost as much as the three checks' cache hits)."""
    return columns_table(
        {
            "buggy dx relative error": np.array([f"{r.judgement.relative:.1e}" for r in results]),
            "caught": np.array([r.outcome for r in results]),
        },
        tuple(f"eps = {eps:g}" for eps in eps_values),
    )
