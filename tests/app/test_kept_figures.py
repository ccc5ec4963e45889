"""The lab's figures keep their serialised form (ui.draw.figures.KeptFigure): what a chart sends
is what a plain Plotly figure of the same content would send, and the dict is made once."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools
import pytest

import ln_core
from ui.draw import figures

rng = np.random.default_rng(7)
ROWS = rng.standard_normal((3, 8))
BUILT = {
    "heatmap": lambda: figures.heatmap(ROWS, "x, boxed", boxes="rows"),
    "histograms": lambda: figures.overlaid_histograms.__wrapped__(
        {"a": ROWS[0], "b": ROWS[1]}, "dx entries"
    ),
    "bars": lambda: figures.grouped_bars.__wrapped__({"a": ROWS[0], "b": ROWS[1]}, "j", "v"),
    "eigenvalues": lambda: figures.eigenvalues.__wrapped__(np.arange(4.0), np.arange(4.0)),
    "steps": lambda: figures.error_vs_step.__wrapped__(
        ln_core.error_vs_step(ROWS[0], np.ones(8), np.zeros(8), ROWS[1])
    ),
}


def _sent(figure: go.Figure) -> dict:
    """The spec st.plotly_chart sends for `figure` (its own two steps in Streamlit 1.67), read
    back: a copy may order the keys otherwise."""
    as_dict = plotly.tools.return_figure_from_figure_or_data(figure, True)
    return json.loads(pio.to_json(as_dict, validate=False))


@pytest.mark.parametrize("name", BUILT)
def test_a_kept_figure_sends_what_a_plain_one_would(name):
    kept = BUILT[name]()
    assert isinstance(kept, figures.KeptFigure)
    plain = go.Figure(kept)
    assert _sent(kept) == _sent(plain)
    # Sent again (the next rerun): the same, from the one dict made the first time.
    assert _sent(kept) == _sent(plain)
    assert kept.to_dict() is kept.to_dict()


def test_a_plain_figure_makes_its_dict_anew_each_time():
    """The cost KeptFigure saves: Plotly copies the figure on every call."""
    plain = go.Figure(BUILT["heatmap"]())
    assert plain.to_dict() is not plain.to_dict()


@pytest.mark.parametrize("rows", [3, 80], ids=["kept by its content", "through Streamlit's cache"])
def test_a_heatmap_of_the_same_numbers_is_the_same_figure(rows):
    """A small matrix is its own key (ui.draw.tables.KEPT_ENTRIES); a large one goes through
    st.cache_resource. Either way equal numbers in another array find the figure built before,
    and other numbers or options do not."""
    matrix = rng.standard_normal((rows, 64))
    first = figures.heatmap(matrix, "J", limit=2.0)
    assert figures.heatmap(matrix.copy(), "J", limit=2.0) is first
    assert figures.heatmap(matrix + 1.0, "J", limit=2.0) is not first
    assert figures.heatmap(matrix.copy(), "J", limit=3.0) is not first
    assert (rows * 64 <= figures.KEPT_ENTRIES) == (rows == 3)
