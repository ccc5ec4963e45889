"""CSV in and out for the inputs: parsed strictly as numbers, size-capped, never evaluated."""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from ui.entry.limits import CSV_MAX_BYTES, CSV_MAX_COLUMNS, CSV_MAX_ROWS
from ui.entry.numbers import parse_number


@dataclass(frozen=True)
class Download:
    """One of the Inputs page's CSV downloads other than x.csv: its first line names it, so
    the file uploaded back as x is recognised and refused instead of read as numbers."""

    file_name: str
    holds: str  # what its lines are, for the student

    @property
    def comment(self) -> str:
        return f"{self.signature}: {self.holds}"

    @property
    def signature(self) -> str:
        """The comment line's start, which says whose file it is."""
        return f"# {self.file_name} from LayerNorm Lab"


GAMMA_BETA = Download("gamma_beta.csv", "line 2 is gamma, line 3 is beta")
DOUT = Download("dout.csv", "the upstream gradient dout, one vector per line")


def parse_csv(data: str | bytes) -> np.ndarray:
    """A CSV of numbers (comma-separated, one vector per line) as a float64 array.

    One line gives a vector (D,), several give rows (N, D). Raises ValueError for anything
    else: too large, ragged rows, or any cell that is not a plain decimal number.
    """
    if isinstance(data, bytes):
        if len(data) > CSV_MAX_BYTES:
            raise ValueError(f"The CSV is {len(data)} bytes; the limit is {CSV_MAX_BYTES}.")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError("The CSV is not UTF-8 text.") from None
    if len(data.encode()) > CSV_MAX_BYTES:
        raise ValueError(f"The CSV is larger than the limit of {CSV_MAX_BYTES} bytes.")
    lines = [line.strip() for line in data.strip().splitlines() if line.strip()]
    if not lines:
        raise ValueError("The CSV is empty: give one vector per line, numbers separated by commas.")
    for download in (GAMMA_BETA, DOUT):
        if lines[0].startswith(download.signature):
            raise ValueError(
                f"This is the lab's {download.file_name} ({download.holds}), not x: upload "
                "x.csv here, or paste x itself, one vector per line."
            )
    if len(lines) > CSV_MAX_ROWS:
        raise ValueError(
            f"The CSV has {len(lines)} rows; at most {CSV_MAX_ROWS} are allowed (the most N "
            "the sidebar takes)."
        )
    rows = [_parse_line(r, line) for r, line in enumerate(lines, start=1)]
    widths = {len(row) for row in rows}
    if len(widths) != 1:
        raise ValueError(f"Every CSV line needs the same number of values; found {sorted(widths)}.")
    array = np.array(rows)
    return array[0] if len(rows) == 1 else array


def _parse_line(number: int, line: str) -> list[float]:
    """The values of CSV line `number`; ValueError naming the first one that is not a number."""
    values = []
    for position, cell in enumerate(line.split(","), start=1):
        try:
            values.append(parse_number(cell))
        except ValueError as err:
            raise ValueError(
                f"CSV line {number}, value {position} {err}. Use plain decimals like 1.5 or "
                "-2e-3, separated by commas; no header line."
            ) from None
    if len(values) > CSV_MAX_COLUMNS:
        raise ValueError(
            f"CSV line {number} holds {len(values)} values; at most {CSV_MAX_COLUMNS} are "
            "allowed (the most D the sidebar takes)."
        )
    return values


def to_csv(array: np.ndarray, download: Download | None = None) -> str:
    """One vector per line, full precision: parse_csv reads it back exactly. x.csv has no
    header; another `download` starts with its comment line."""
    buffer = io.StringIO()
    rows = np.asarray(array).reshape(-1, np.shape(array)[-1])
    header = "" if download is None else download.comment.removeprefix("# ")
    np.savetxt(buffer, rows, delimiter=",", fmt="%.17g", header=header, comments="# ")
    return buffer.getvalue()
