"""A verdict as a student reads it: the outcome in plain words and a number they know first
("Fail: off by 33.3 %, far beyond round-off", "Pass: agrees to 11 digits"), the reasoning one
click away ("Why?"). Every page shows its verdicts through here.

A metric never stands alone: its tooltip says what it checks, what is expected and the value
with every digit; the number on the card has 3 significant digits."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ln_core.bugs import CANNOT_TELL, CAUGHT, MISSED
from teaching.verdicts import AS_EXPECTED, CANNOT_RESOLVE, FAIL, PASS, Verdict, number

# A caught bug is the check doing its job, but never shown with a pass mark: the buggy dx fails.
ICONS = {
    PASS: ":material/check_circle:",
    AS_EXPECTED: ":material/check_circle:",
    FAIL: ":material/cancel:",
    CANNOT_RESOLVE: ":material/help:",
    CAUGHT: ":material/bug_report:",
    MISSED: ":material/warning:",
    CANNOT_TELL: ":material/help:",
}
WHY = "Why?"


def folded_reason(reason: str, where: Any = st, detail: str = "") -> None:
    """The reasoning behind a verdict, in `where`, one click away; detail: a second caption."""
    with where.popover(WHY, icon=":material/help_outline:"):
        st.caption(reason)
        if detail:
            st.caption(detail)


def verdict_lines(verdict: Verdict, where: Any = st) -> None:
    """The verdict's headline, then its reason folded, in `where` (a column, or the page)."""
    where.caption(f"{ICONS[verdict.status]} {verdict.headline}")
    folded_reason(verdict.reason, where, verdict.help)


def verdict_metric(label: str, value: str | float, verdict: Verdict, where: Any = st) -> None:
    """st.metric(label, value) in `where` (a column), with the verdict under it. A float value
    shows at 3 significant digits, and with every digit in its tooltip."""
    if isinstance(value, str):
        where.metric(label, value, help=verdict.help)
    else:
        where.metric(label, number(value), help=f"{verdict.help} Value: {value!r}.")
    verdict_lines(verdict, where)
