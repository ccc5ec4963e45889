"""How the lab shows a problem: in the student's words, literally, and without crashing.

Messages go through Streamlit's Markdown, so any text a student typed or linked is escaped
first (literal), cut short, and a long list of problems is cut to a handful (listed). A page
whose inputs fail stops right there with the message (stops_on_error); the sidebar, drawn
before the page, stays usable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import streamlit as st

from ln_core.forward import ZeroVariance
from ui.entry.limits import SHOWN_PROBLEMS
from ui.session import way_out as fixes

_ICON = ":material/error:"
PAGE, IN_SIDEBAR = "page", "sidebar"


def _show(err: ValueError, where: Any, way_out: str | None) -> None:
    where.error(str(err), icon=_ICON)
    # Inputs with no defined output carry the buttons that fix them: no dead end.
    if way_out is not None and isinstance(err, ZeroVariance):
        with where.container():
            fixes.way_out(way_out)


def listed(
    problems: Sequence[str], limit: int = SHOWN_PROBLEMS, named: Callable[[str], str] | None = None
) -> str:
    """At most `limit` problems as a Markdown list, then how many more there are, named by
    `named` (a problem's short name, such as the link key it is about) when given: each name
    once, so a link that repeats one key thousands of times still gets a short message."""
    lines = [f"- {p}" for p in problems[:limit]]
    rest = problems[limit:]
    if rest:
        names = f": {', '.join(dict.fromkeys(named(p) for p in rest))}" if named else ""
        lines.append(f"- and {len(rest)} more{names}")
    return "\n".join(lines)


@contextmanager
def shown_errors(where: Any = st, way_out: str | None = PAGE) -> Iterator[None]:
    """Run a block; a ValueError ends only that block and is shown as st.error in `where`,
    with the buttons that fix it, keyed by `way_out` (PAGE or IN_SIDEBAR; None: no buttons, for a
    message the page says again)."""
    try:
        yield
    except ValueError as err:
        _show(err, where, way_out)


@contextmanager
def stops_on_error() -> Iterator[None]:
    """Run a page's block; a ValueError shows its message and ends the page cleanly there."""
    try:
        yield
    except ValueError as err:
        _show(err, st, PAGE)
        st.stop()
