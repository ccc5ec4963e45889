"""Overview: what LayerNorm Lab teaches and how to use each page."""

import streamlit as st

from teaching.presets import PRESETS
from ui.lesson import guide
from ui.lesson.glossary import glossary_expander

st.title("LayerNorm Lab")
st.markdown(
    """
Layer Normalization rescales each vector to mean 0 and variance 1, then applies a learned
scale `gamma` and shift `beta`:
"""
)
st.latex(
    r"y = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta,"
    r"\qquad \mu = \tfrac{1}{D}\sum_j x_j,\quad \sigma^2 = \tfrac{1}{D}\sum_j (x_j - \mu)^2"
)
st.markdown(
    """
The forward pass is easy. The backward pass is where students get lost: every input
reaches every output three ways (directly, through the mean, and through the variance).
This lab takes the formula apart into **ten small nodes**, walks through them forward and
back, and checks every gradient against a numerical one, so you never have to take a
formula on trust.

**How to use it.** The sidebar's inputs (preset, shape, seed, `eps`, dtype) are shared by
every page. Follow the pages in this order: each ends with what to try, a question to predict
before the app answers it with its own numbers, and a link to the next page.
"""
)
glossary_expander(title="The ten nodes and the other names, in plain words")

for stop in guide.visible_path():
    st.page_link(stop.script)
    st.caption(stop.teaches)

st.markdown("**Classroom presets**: each demonstrates one behaviour.")
st.markdown("\n".join(f"- **{p.name}**: {p.description}" for p in PRESETS.values()))
