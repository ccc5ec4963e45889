"""A (D, D) matrix on screen that stays light in the browser at any allowed D."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.draw.downsample import block_mean
from ui.draw.figures import heatmap

FULL_RESOLUTION = 300  # above this many rows, show block means plus a zoomable window
WINDOW = 128


def shared_limit(matrices: list[np.ndarray]) -> float:
    """The largest |entry| of several matrices: one colour scale, centred at 0, for them all."""
    return max((float(np.max(np.abs(m))) for m in matrices if m.size), default=1.0)


def draw_matrix(
    matrix: np.ndarray, title: str, height: int = 420, limit: float | None = None
) -> None:
    """Every entry up to FULL_RESOLUTION rows; beyond, block means and a window to zoom into.
    `limit`: the colour scale's ±end, shared with the panels it is compared with."""
    if matrix.shape[0] <= FULL_RESOLUTION:
        st.plotly_chart(heatmap(matrix, title, height=height, limit=limit), width="stretch")
        return
    small = block_mean(matrix, FULL_RESOLUTION // 2)
    label = f"{title} (means of {small.block}x{small.block} blocks)"
    st.plotly_chart(
        heatmap(small.matrix, label, step=small.block, height=height, limit=limit),
        width="stretch",
    )
    start = st.slider(
        f"Zoom into {title}: first row and column of a {WINDOW} x {WINDOW} window",
        0,
        matrix.shape[0] - WINDOW,
        0,
        step=16,
        key=f"zoom_{title}",
    )
    window = matrix[start : start + WINDOW, start : start + WINDOW]
    st.plotly_chart(
        heatmap(
            window,
            f"{title}, entries {start} to {start + WINDOW - 1}",
            x0=start,
            y0=start,
            height=height,
            limit=limit,
        ),
        width="stretch",
    )
