"""A metric that never stands alone: its tooltip says what it checks and what is expected, and
a caption under it says whether this one passes and why."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ln_core.bugs import CANNOT_TELL, CAUGHT, MISSED
from teaching.verdicts import AS_EXPECTED, CANNOT_RESOLVE, FAIL, PASS, Verdict

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


def verdict_metric(label: str, value: str, verdict: Verdict, where: Any = st) -> None:
    """st.metric(label, value) in `where` (a column), with the verdict in help and caption."""
    where.metric(label, value, help=verdict.help)
    where.caption(f"{ICONS[verdict.status]} {verdict.sentence}")
