"""Plotly figures: they only draw numbers from ln_core, with colours centred on 0.

Building a figure runs every property through Plotly's validators, the costliest part of a
chart's rerun, so each builder is cached by the content of its arguments and shared between
sessions. st.plotly_chart only reads a figure (it serialises a copy), so sharing is safe as
long as callers never modify what a builder returns. Each builder returns a KeptFigure, whose
serialised form is made once too.
"""

from __future__ import annotations

import functools
from typing import Literal

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import ln_core
from ui.draw.tables import KEPT_ENTRIES, Content, content_arrays, content_key

# Red for positive, blue for negative, white at 0: readable on a projector and in grey scale.
DIVERGING = "RdBu_r"
MARGIN = dict(l=40, r=10, t=20, b=40)
# Okabe-Ito blue and orange: told apart with every common colour blindness; curves also differ
# by marker or pattern, so no meaning rests on colour alone.
BLUE, ORANGE = "#0072B2", "#E69F00"
# Ticks and labels large enough for the back of a room, numbers as 1e-06 like every table.
FONT = dict(size=15)
EXPONENTS = dict(exponentformat="e", showexponent="all")

# Figures stay small (at most a few MB for a 512 x 512 heatmap); the bound and the time to live
# keep a class's worth of distinct inputs from growing the server without end.
_shared = st.cache_resource(max_entries=64, ttl=1800, show_spinner=False)


class KeptFigure(go.Figure):
    """A figure its builder has finished, never changed after: its dict is made once.

    st.plotly_chart serialises a figure on every run through to_dict(), which copies the whole
    figure and encodes every array again (a quarter of the CPU of a click on the Jacobian
    page). A builder's figure is shared and only read, so the first dict stays its dict; it
    holds the arrays once more, encoded, for as long as the builder's cache keeps the figure.
    """

    def to_dict(self) -> dict:
        kept = self.__dict__.get("_kept_dict")
        if kept is None:
            kept = super().to_dict()
            self._kept_dict = kept
        return kept


def heatmap(
    matrix: np.ndarray,
    title: str,
    x_label: str = "input j",
    y_label: str = "output i",
    x0: int = 0,
    y0: int = 0,
    step: int = 1,
    height: int = 420,
    boxes: Literal["rows", "columns"] | None = None,
    limit: float | None = None,
) -> KeptFigure:
    """A diverging heatmap centred at 0 whose hover shows (i, j, value).

    matrix: (R, C), sent as float32 to keep the page light. x0, y0, step place a window or a
    block-downsampled matrix at the right coordinates. boxes outlines each row or each column.
    limit: the colour scale runs from -limit to +limit (default: the largest |entry|), so
    panels compared side by side can share one scale.
    """
    options = (title, x_label, y_label, x0, y0, step, height, boxes, limit)
    if matrix.size <= KEPT_ENTRIES:
        return _small_heatmap(content_key({"matrix": matrix}), *options)
    return _large_heatmap(matrix, *options)


# A small matrix is its own cache key, found in about 2 µs; Streamlit's cache hashes every
# argument on each call (about 90 µs), and a page draws up to five heatmaps per click.
@functools.lru_cache(maxsize=64)
def _small_heatmap(content: Content, *options: object) -> KeptFigure:
    return _build_heatmap(content_arrays(content)["matrix"], *options)


@_shared
def _large_heatmap(matrix: np.ndarray, *options: object) -> KeptFigure:
    return _build_heatmap(matrix, *options)


def _build_heatmap(
    matrix: np.ndarray,
    title: str,
    x_label: str,
    y_label: str,
    x0: int,
    y0: int,
    step: int,
    height: int,
    boxes: Literal["rows", "columns"] | None,
    limit: float | None,
) -> KeptFigure:
    if limit is None:
        limit = float(np.max(np.abs(matrix))) if matrix.size else 1.0
    rows, cols = matrix.shape
    # float32 halves the payload, but turns entries past its range into inf.
    light = limit <= float(np.finfo(np.float32).max)
    fig = KeptFigure(
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
    if boxes is not None:
        fig.add_trace(_outlines(rows, cols, boxes))
    # The x axis and its title sit on top: the figure's title goes above them, with room.
    fig.update_layout(
        title=dict(text=title, y=0.99, yanchor="top", x=0, xanchor="left"),
        height=height,
        font=FONT,
        margin=dict(l=40, r=10, t=100, b=20),
        xaxis=dict(title=x_label, side="top", constrain="domain", **_integer_ticks(cols)),
        yaxis=dict(title=y_label, autorange="reversed", constrain="domain", **_integer_ticks(rows)),
    )
    return fig


def _outlines(rows: int, cols: int, along: Literal["rows", "columns"]) -> go.Scatter:
    """One rectangle per row (or column) of a (rows, cols) heatmap, as a single line trace.

    One trace whatever the count: a Plotly shape per rectangle makes the browser and the
    server pay per shape, which at D = 1024 columns took minutes.
    """
    if along == "rows":
        index = np.arange(rows, dtype=np.float64)
        left, right = np.full(rows, -0.5), np.full(rows, cols - 0.5)
        top, bottom = index - 0.45, index + 0.45
    else:
        index = np.arange(cols, dtype=np.float64)
        left, right = index - 0.45, index + 0.45
        top, bottom = np.full(cols, -0.5), np.full(cols, rows - 0.5)
    # Each rectangle is a closed path of five corners; NaN lifts the pen to the next one.
    gap = np.full_like(left, np.nan)
    xs = np.stack([left, right, right, left, left, gap], axis=1).ravel()
    ys = np.stack([top, top, bottom, bottom, top, gap], axis=1).ravel()
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        line=dict(color="black", width=1.5),
        hoverinfo="skip",
        showlegend=False,
        name="groups",
    )


def _integer_ticks(count: int) -> dict:
    """Whole-number ticks: every index when there are few, Plotly's choice otherwise."""
    return {"tickmode": "linear", "dtick": 1} if count <= 16 else {"tickformat": "d"}


@_shared
def error_vs_step(sweep: ln_core.StepSweep) -> KeptFigure:
    """Both dtypes' error curves against the step h (log-log), each with its default h marked
    by a dashed line labelled at the line itself."""
    fig = KeptFigure()
    curves = ((sweep.float64, BLUE, "circle", 1.0), (sweep.float32, ORANGE, "square", 0.9))
    for curve, colour, marker, height in curves:
        name = curve.dtype.name
        fig.add_trace(
            go.Scatter(
                x=sweep.steps,
                y=curve.errors,
                mode="lines+markers",
                name=name,
                line_color=colour,
                marker_symbol=marker,
                hovertemplate="step h = %{x:.1e}<br>relative error of dx = %{y:.1e}"
                f"<extra>{name}</extra>",
            )
        )
        fig.add_shape(
            type="line",
            x0=curve.default_h,
            x1=curve.default_h,
            y0=0,
            y1=1,
            yref="paper",
            line=dict(color=colour, dash="dash"),
        )
        # On a log axis an annotation's x is the exponent: log10(h) puts the label at its line.
        fig.add_annotation(
            x=float(np.log10(curve.default_h)),
            y=height,
            yref="paper",
            text=f"default h ({name}) = {curve.default_h:.1e}",
            showarrow=False,
            xanchor="left",
            xshift=4,
            bgcolor="rgba(255,255,255,0.85)",
        )
    fig.update_layout(
        xaxis=dict(type="log", title="step h", **EXPONENTS),
        yaxis=dict(type="log", title="relative error of dx", **EXPONENTS),
        height=400,
        font=FONT,
        legend=dict(orientation="h", y=-0.25),
        margin=dict(l=40, r=10, t=50, b=40),
    )
    return fig


@_shared
def eigenvalues(found: np.ndarray, predicted: np.ndarray | None) -> KeptFigure:
    """found, predicted: (D,) ascending; the prediction drawn as crosses when there is one."""
    order = np.arange(1, found.size + 1)
    fig = KeptFigure(
        go.Scatter(
            x=order,
            y=found,
            mode="markers",
            name="eigenvalues of J",
            marker=dict(color=BLUE, size=10, symbol="circle-open", line_width=2),
            hovertemplate="index = %{x}<br>eigenvalue = %{y:.4g}<extra></extra>",
        )
    )
    if predicted is not None:
        fig.add_trace(
            go.Scatter(
                x=order,
                y=predicted,
                mode="markers",
                marker=dict(color=ORANGE, size=10, symbol="x"),
                name="predicted",
                hovertemplate="index = %{x}<br>predicted = %{y:.4g}<extra></extra>",
            )
        )
    fig.update_layout(
        height=320,
        font=FONT,
        xaxis_title="index (ascending)",
        yaxis=dict(title="eigenvalue", **EXPONENTS),
        margin=MARGIN,
    )
    return fig


@_shared
def grouped_bars(
    parts: dict[str, np.ndarray], x_title: str, y_title: str, height: int = 360
) -> KeptFigure:
    """One bar group per entry, one bar per part; every part has the same (K,) shape. Parts
    differ by pattern as well as colour."""
    colours, patterns = (BLUE, ORANGE, "#333333"), ("", "/", ".")
    fig = KeptFigure(
        [
            go.Bar(
                name=name,
                y=value.reshape(-1),
                marker_color=colours[k % 3],
                marker_pattern_shape=patterns[k % 3],
                hovertemplate=f"{x_title} = %{{x}}<br>{name} = %{{y:.4g}}<extra></extra>",
            )
            for k, (name, value) in enumerate(parts.items())
        ]
    )
    fig.update_layout(
        barmode="group",
        height=height,
        font=FONT,
        xaxis_title=x_title,
        yaxis=dict(title=y_title, **EXPONENTS),
        margin=MARGIN,
    )
    return fig


@_shared
def overlaid_histograms(parts: dict[str, np.ndarray], x_title: str) -> KeptFigure:
    """The distribution of each part's entries, drawn over one another in colours and patterns
    told apart without colour vision."""
    colours, patterns = (BLUE, ORANGE), ("", "/")
    fig = KeptFigure(
        [
            go.Histogram(
                x=np.ravel(value),
                name=name,
                opacity=0.6,
                marker_color=colours[k % 2],
                marker_pattern_shape=patterns[k % 2],
                hovertemplate=f"{x_title} = %{{x}}<br>count = %{{y}}<extra>{name}</extra>",
            )
            for k, (name, value) in enumerate(parts.items())
        ]
    )
    fig.update_layout(
        barmode="overlay",
        height=280,
        font=FONT,
        margin=MARGIN,
        xaxis=dict(title=x_title, **EXPONENTS),
        yaxis_title="count of entries",
    )
    return fig
