"""Overview: what LayerNorm Lab teaches and how to use each page."""

import streamlit as st

from teaching.presets import PRESETS
from ui.draw.glossary import glossary_expander
from ui.draw.opening import opening
from ui.lesson import guide
from ui.live.student import join_box

# Links per row on the first screen: the path reads left to right, then on the next row.
PER_ROW = 5

opening(
    "LayerNorm Lab",
    "LayerNorm's backward pass, taken apart into **ten small nodes**, each gradient checked "
    "numerically.",
)
with st.container(key="main_figure"):
    st.latex(
        r"y = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta,"
        r"\qquad \mu = \tfrac{1}{D}\sum_j x_j,\quad \sigma^2 = \tfrac{1}{D}\sum_j (x_j - \mu)^2"
    )
    path = guide.visible_path()
    for start in range(0, len(path), PER_ROW):
        row = path[start : start + PER_ROW]
        for column, stop in zip(st.columns(PER_ROW), row, strict=False):
            column.page_link(stop.script, help=stop.teaches)

# A student types the code the instructor reads aloud; an instructor finds the Class page.
join_box()

with st.expander("How to use the lab"):
    st.markdown(
        """
The forward pass is easy. The backward pass is where students get lost: every input
reaches every output three ways (directly, through the mean, and through the variance).
This lab takes the formula apart into ten small nodes, walks through them forward and
back, and checks every gradient against a numerical one, so you never have to take a
formula on trust.

The pages go in order (hover a link for what it teaches). The sidebar's inputs (preset,
shape, seed, `eps`, dtype) are shared by every page. LayerNorm rescales each vector to mean 0
and variance 1, then scales by `gamma` and shifts by `beta`. Each page ends with what to try, a
question to predict before the app answers it with its own numbers, and a link to the next
page.
"""
    )
    st.markdown("**The presets**, each showing one behaviour:")
    st.markdown("\n".join(f"- **{p.name}**: {p.description}" for p in PRESETS.values()))
glossary_expander(title="The ten nodes in plain words")
