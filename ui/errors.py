"""Showing ln_core's ValueErrors where they happen, without stopping the rest of the page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st


@contextmanager
def shown_errors(where: Any = st) -> Iterator[None]:
    """Run a block; a ValueError ends only that block and is shown as st.error in `where`."""
    try:
        yield
    except ValueError as err:
        where.error(str(err), icon=":material/error:")
