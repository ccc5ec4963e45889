"""Arrays as tables: one row per vector, so a (B, L, D) batch reads as B*L labelled rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import ln_core


def row_labels(shape: tuple[int, ...]) -> list[str]:
    """Labels for the vectors of an array of this shape (all axes but the last)."""
    if len(shape) <= 1:
        return ["vector"]
    if len(shape) == 2:
        return [f"row {i}" for i in range(shape[0])]
    return [f"b{b} t{t}" for b in range(shape[0]) for t in range(shape[1])]


def vectors_frame(array: np.ndarray, column: str = "") -> pd.DataFrame:
    """A DataFrame with one row per vector and one column per entry of the last axis.

    array: (D,), (N, D) or (B, L, D); a reduced node such as (N, 1) gives one column.
    """
    array = np.asarray(array)
    rows = array.reshape(-1, array.shape[-1]) if array.ndim else array.reshape(1, 1)
    columns = [f"{column}{j}" for j in range(rows.shape[1])]
    labels = row_labels(array.shape) if rows.shape[0] == len(row_labels(array.shape)) else None
    return pd.DataFrame(rows, columns=columns, index=labels)


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


# A band is drawn as a coloured label: green good, amber suspicious, red wrong.
BAND_COLOURS = {"good": "#2b8a3e", "suspicious": "#e67700", "wrong": "#c92a2a"}


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
            "band": [[ln_core.band(float(e), dtype)] for e in np.ravel(errors)],
        },
        index=[str(i) for i in np.ndindex(np.shape(analytic))],
    )


CHECK_COLUMNS = {
    "analytic": st.column_config.NumberColumn(format="%.6g"),
    "numerical": st.column_config.NumberColumn(format="%.6g"),
    "relative error": st.column_config.NumberColumn(format="%.1e"),
    "band": st.column_config.MultiselectColumn(
        options=list(BAND_COLOURS), color=list(BAND_COLOURS.values())
    ),
}
