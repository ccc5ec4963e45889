"""How the lab shows a problem: in the student's words, literally, and without crashing.

Messages go through Streamlit's Markdown, so any text a student typed or linked is escaped
first (literal), cut short, and a long list of problems is cut to a handful (listed). A page
whose inputs fail stops right there with the message (stops_on_error); the sidebar, drawn
before the page, stays usable.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import streamlit as st

from ui.entry.limits import SHOWN_PROBLEMS
from ui.entry.literal import literal as literal

_ICON = ":material/error:"


def listed(problems: Sequence[str], limit: int = SHOWN_PROBLEMS) -> str:
    """At most `limit` problems as a Markdown list, then how many more there are."""
    lines = [f"- {p}" for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"- and {len(problems) - limit} more")
    return "\n".join(lines)


@contextmanager
def shown_errors(where: Any = st) -> Iterator[None]:
    """Run a block; a ValueError ends only that block and is shown as st.error in `where`."""
    try:
        yield
    except ValueError as err:
        where.error(str(err), icon=_ICON)


@contextmanager
def stops_on_error() -> Iterator[None]:
    """Run a page's block; a ValueError shows its message and ends the page cleanly there."""
    try:
        yield
    except ValueError as err:
        st.error(str(err), icon=_ICON)
        st.stop()
