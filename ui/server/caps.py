"""How large an input each page takes, and the one way a page refuses a larger one.

Each cap keeps the page's first run under about a second on a 2-core machine (measured in
bench/bench_pages.py); above it the page says why instead of hanging.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class Cap:
    """Largest D (features) and number of entries of x a page accepts, and why.

    max_entries None: the page works on one vector at a time, so only D matters.
    """

    max_d: int
    max_entries: int | None
    why: str


CAPS = {
    "stepper": Cap(64, 2048, "it shows every number of every node and checks each one"),
    "jacobian": Cap(512, None, "J has D x D entries and its eigenvalues cost D^3"),
    "gradcheck": Cap(512, 4096, "every entry gets its own row and its own central difference"),
    "audit": Cap(512, 4096, "the residual derivation's lines and the Jacobian entries are D x D"),
    "derive": Cap(512, 4096, "your formula runs on every entry, then on eight more inputs"),
    "residual": Cap(32, 1024, "every entry of x and of W (D x D) is checked numerically"),
    "batchnorm": Cap(1024, 16384, "the heatmaps draw every entry"),
    "export": Cap(1024, 4096, "the report and the bundle hold every node of every entry"),
    # Not a whole page: the Inputs page's tables, each entry an editable cell in the browser.
    "inputs": Cap(128, 4096, "every entry is a cell of its own"),
}


def refusal(page: str, x_shape: tuple[int, ...], what: str = "This page") -> str | None:
    """Why an x of this shape is too large for `page` (a sentence for students), or None."""
    cap = CAPS[page]
    d, size = x_shape[-1], math.prod(x_shape)
    if d <= cap.max_d and (cap.max_entries is None or size <= cap.max_entries):
        return None
    limit = f"D up to {cap.max_d}" + (
        f" and up to {cap.max_entries:,} entries" if cap.max_entries else ""
    )
    return (
        f"{what} takes {limit}, because {cap.why}; the current x has D = {d} and "
        f"{size:,} entries. Lower D or the number of vectors in the sidebar."
    )


def enforce(page: str) -> None:
    """Stop the page with an explanation if the current x is larger than its cap."""
    why = refusal(page, st.session_state["x"].shape)
    if why is not None:
        st.error(why, icon=":material/block:")
        st.stop()
