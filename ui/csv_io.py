"""CSV in and out for the inputs: parsed strictly as numbers, size-capped, never evaluated."""

from __future__ import annotations

import io
import re

import numpy as np

MAX_CSV_BYTES = 64 * 1024
MAX_ROWS, MAX_COLUMNS = 64, 1024
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def parse_csv(data: str | bytes) -> np.ndarray:
    """A CSV of numbers (comma-separated, one vector per line) as a float64 array.

    One line gives a vector (D,), several give rows (N, D). Raises ValueError for anything
    else: too large, ragged rows, or any cell that is not a plain decimal number.
    """
    if isinstance(data, bytes):
        if len(data) > MAX_CSV_BYTES:
            raise ValueError(f"The CSV is {len(data)} bytes; the limit is {MAX_CSV_BYTES}.")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError("The CSV is not UTF-8 text.") from None
    if len(data.encode()) > MAX_CSV_BYTES:
        raise ValueError(f"The CSV is larger than the limit of {MAX_CSV_BYTES} bytes.")
    lines = [line.strip() for line in data.strip().splitlines() if line.strip()]
    if not lines:
        raise ValueError("The CSV is empty: give one vector per line, numbers separated by commas.")
    if len(lines) > MAX_ROWS:
        raise ValueError(f"The CSV has {len(lines)} rows; at most {MAX_ROWS} are allowed.")
    rows = []
    for r, line in enumerate(lines, start=1):
        cells = [cell.strip() for cell in line.split(",")]
        for c, cell in enumerate(cells, start=1):
            if not _NUMBER.fullmatch(cell):
                raise ValueError(
                    f"CSV line {r}, value {c} is {cell!r}, which is not a number. Use plain "
                    "decimals like 1.5 or -2e-3, separated by commas; no header line."
                )
        rows.append([float(cell) for cell in cells])
    widths = {len(row) for row in rows}
    if len(widths) != 1:
        raise ValueError(f"Every CSV line needs the same number of values; found {sorted(widths)}.")
    if widths.pop() > MAX_COLUMNS:
        raise ValueError(f"A CSV line may hold at most {MAX_COLUMNS} values.")
    array = np.array(rows)
    if not np.all(np.isfinite(array)):
        raise ValueError("The CSV has a number too large to represent; keep values finite.")
    return array[0] if len(rows) == 1 else array


def to_csv(array: np.ndarray) -> str:
    """One vector per line, full precision, no header: parse_csv reads it back exactly."""
    buffer = io.StringIO()
    rows = np.asarray(array).reshape(-1, np.shape(array)[-1])
    np.savetxt(buffer, rows, delimiter=",", fmt="%.17g")
    return buffer.getvalue()
