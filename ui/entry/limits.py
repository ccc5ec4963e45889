"""The sizes every entrance accepts, in one place, so the sidebar, CSV and links agree.

A CSV may hold as many rows as the sidebar's N and as many values per line as its D; a link
carries arrays only while they are small, and echoes back at most a few problems.
"""

from __future__ import annotations

from dataclasses import dataclass

from ln_core.formula.tokens import MAX_CHARS as FORMULA_MAX_CHARS


@dataclass(frozen=True)
class Range:
    """The whole numbers a sidebar field accepts, low and high included."""

    low: int
    high: int


SIDEBAR = {
    "d": Range(1, 1024),
    "n": Range(1, 32),
    "b": Range(1, 8),
    "l": Range(1, 16),
    "seed": Range(0, 2**31 - 1),
}
EPS_MAX = 10.0

CSV_MAX_BYTES = 64 * 1024
CSV_MAX_ROWS = SIDEBAR["n"].high
CSV_MAX_COLUMNS = SIDEBAR["d"].high

LINK_MAX_ENTRIES = 64  # arrays larger than this stay out of links (URLs have practical limits)
LINK_MAX_CELLS = LINK_MAX_ENTRIES * 4  # beyond this a link's array is not even read

SHOWN_CHARS = 40  # user text echoed in a message is cut to this many characters
SHOWN_PROBLEMS = 6  # a message lists at most this many problems, then says how many more

# A link carries a typed formula whole, up to the longest the formula box and grammar accept, so
# every formula a student can type can be shared.
LINK_FORMULA_CHARS = FORMULA_MAX_CHARS
