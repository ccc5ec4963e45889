"""Overview: what LayerNorm Lab teaches and how to use each page."""

import streamlit as st

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

**How to use it**

1. **Sidebar**: choose a preset, the shape (one vector, rows, or a batch of tokens), the
   seed, `eps` and the dtype. Every page uses these inputs.
2. **Inputs**: edit x, gamma, beta and the upstream gradient `dout` cell by cell, paste or
   upload a CSV for x, or download the current inputs.
3. **Stepper**: twenty steps, the ten nodes forward and then backward. Each step shows the
   node's formula, shape, values, and on the way back the local derivative, the gradient
   and a numerical check of that one node.

Try the presets: the *classroom* numbers can be followed by hand; the *constant vector*
shows why `eps` exists (set it to 0); the *large offset* in float32 shows round-off eating
the digits of a gradient check.
"""
)
