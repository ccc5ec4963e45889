"""Import, in full, every library the pages reach, before any page runs. app.py imports it first.

Streamlit runs each session's script in a thread of its own. On a fresh server, a class's
first requests arrive together and their threads import pandas, plotly and pyarrow at the same
moment. Plotly and Streamlit look some of them up in sys.modules without importing them
("is pandas loaded?"), and a thread can find a module another thread is still executing:
`AttributeError: partially initialized module 'pandas' has no attribute 'Series'`.

Python gives other threads a module only once its import has finished, so the first thread
to import this module runs everything below while the others wait for it. Importing the
libraries is not enough: plotly and Streamlit import more of them on first use (a trace type,
JSON encoding, the Arrow conversion of a table), so a small rehearsal of what the pages do
follows. tests/server/test_warmup.py checks that no page imports a library this missed.
"""

from __future__ import annotations

import nbformat
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io
import pyarrow
import segno
import sqlalchemy  # noqa: F401  # the live class's store (ui/live/store.py), imported by app.py
from PIL import Image

from ui.streamlit_private import dataframe_util


def _rehearse() -> None:
    """Build and encode one small figure of each trace type the pages draw, and one table."""
    values = np.linspace(0.0, 1.0, 4)
    figure = go.Figure(
        [
            go.Scatter(x=values, y=pd.Series(values), line={"dash": "dot"}),
            go.Bar(x=["a", "b"], y=[1.0, 2.0], marker_pattern_shape="/"),
            go.Histogram(x=values, marker_pattern_shape="."),
            go.Heatmap(z=np.outer(values, values), colorscale="RdBu_r"),
        ]
    )
    figure.add_vline(x=0.5, line_dash="dot", annotation_text="h")
    figure.update_layout(
        title="t",
        height=100,
        margin={"t": 10},
        xaxis_title="x",
        yaxis_title="y",
        font={"size": 15},
        legend={"orientation": "h"},
    )
    plotly.io.to_json(figure)
    table = pd.DataFrame({"x": values, "name": [str(v) for v in values]})
    dataframe_util.convert_anything_to_arrow_bytes(table)
    dataframe_util.convert_anything_to_arrow_bytes(pyarrow.table({"x": values}))
    # The notebook downloads validate and write a notebook (its JSON schema loads on first use).
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1", id="warm")])
    nbformat.validate(notebook)
    nbformat.writes(notebook)
    # Streamlit imports PIL for the page icon (even given as a data URL); the class link's QR
    # code is segno's.
    Image.init()
    segno.make("warm").svg_inline()


_rehearse()
