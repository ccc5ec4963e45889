"""Edits by hand, made visible: which cells differ from the preset's numbers, and a button that
puts the preset's numbers back."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from teaching.presets import make_example
from ui.draw.tables import row_labels
from ui.session import state

SHOWN_EDITS = 8  # cells listed by name; past this, a count


@dataclass(frozen=True)
class Edit:
    """One cell of `array` (x, gamma, beta, dout or target) that differs from the preset's
    number."""

    array: str
    row: str
    column: int
    value: float
    was: float

    def __str__(self) -> str:
        where = self.array if self.row == "vector" else f"{self.array} {self.row}"
        return f"{where}, column {self.column}: {self.value:.6g} (was {self.was:.6g})"


def _cells(name: str, current: np.ndarray, original: np.ndarray) -> list[Edit]:
    """Every cell where current != original; both have the same shape S, rows over S[:-1]."""
    labels = row_labels(current.shape) if current.ndim > 1 else ["vector"]
    rows = current.reshape(-1, current.shape[-1])
    before = original.reshape(rows.shape)
    return [
        Edit(name, labels[r], int(c), float(rows[r, c]), float(before[r, c]))
        for r, c in np.argwhere(rows != before)
    ]


def edits() -> tuple[list[Edit], list[str]]:
    """(cells edited by hand, arrays replaced whole, e.g. by a CSV of another shape)."""
    s = st.session_state
    example = make_example(s["preset"], state.shape(), s["seed"])
    pairs = {"x": (s["x"], example.x), "gamma": (s["gamma"], example.gamma)}
    pairs["beta"] = (s["beta"], example.beta)
    dout, target = state.seeded_dout_and_target(s["x"].shape, s["seed"])
    if s["upstream"] == "edited":
        pairs["dout"] = (s["dout_edited"], dout)
    if s["upstream"] == "loss":
        pairs["target"] = (s["target"], target)
    cells, replaced = [], []
    for name, (current, original) in pairs.items():
        if current.shape != original.shape:
            replaced.append(name)
        else:
            cells.extend(_cells(name, current, original))
    return cells, replaced


def _reset() -> None:
    """Back to the preset's numbers for this shape and seed, and the seeded dout and target."""
    s = st.session_state
    if s["upstream"] == "edited":
        s["upstream"] = "random"
    state.reset_arrays()


def edits_bar() -> None:
    """Name the edited cells (the first few) and offer to reset them; nothing if none."""
    cells, replaced = edits()
    if not cells and not replaced:
        return
    listed = [str(c) for c in cells[:SHOWN_EDITS]]
    if len(cells) > SHOWN_EDITS:
        listed.append(f"and {len(cells) - SHOWN_EDITS} more")
    listed += [f"{name} replaced whole" for name in replaced]
    left, right = st.columns([5, 1], vertical_alignment="center")
    left.caption(
        f":material/edit: Edited by hand ({len(cells)} cell{'s' * (len(cells) != 1)}): "
        + "; ".join(listed)
        + "."
    )
    right.button("Reset edits", on_click=_reset, icon=":material/restart_alt:", width="stretch")
