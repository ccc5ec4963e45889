"""Plotly figures: they only draw numbers from ln_core, with colours centred on 0."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

# Red for positive, blue for negative, white at 0: readable on a projector and in grey scale.
DIVERGING = "RdBu_r"


def heatmap(
    matrix: np.ndarray,
    title: str,
    x_label: str = "input j",
    y_label: str = "output i",
    x0: int = 0,
    y0: int = 0,
    step: int = 1,
    height: int = 420,
) -> go.Figure:
    """A diverging heatmap centred at 0 whose hover shows (i, j, value).

    matrix: (R, C), sent as float32 to keep the page light. x0, y0, step place a window or a
    block-downsampled matrix at the right coordinates.
    """
    limit = float(np.max(np.abs(matrix))) if matrix.size else 1.0
    rows, cols = matrix.shape
    # float32 halves the payload, but turns entries past its range into inf.
    light = limit <= float(np.finfo(np.float32).max)
    fig = go.Figure(
        go.Heatmap(
            z=np.asarray(matrix, dtype=np.float32 if light else np.float64),
            x=x0 + step * np.arange(cols),
            y=y0 + step * np.arange(rows),
            colorscale=DIVERGING,
            zmid=0.0,
            zmin=-limit or -1.0,
            zmax=limit or 1.0,
            hovertemplate=f"{y_label} = %{{y}}, {x_label} = %{{x}}<br>value = %{{z:.4g}}"
            "<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        height=height,
        margin=dict(l=40, r=10, t=40, b=40),
        xaxis=dict(title=x_label, side="top", constrain="domain", **_integer_ticks(cols)),
        yaxis=dict(title=y_label, autorange="reversed", constrain="domain", **_integer_ticks(rows)),
    )
    return fig


def _integer_ticks(count: int) -> dict:
    """Whole-number ticks: every index when there are few, Plotly's choice otherwise."""
    return {"tickmode": "linear", "dtick": 1} if count <= 16 else {"tickformat": "d"}
