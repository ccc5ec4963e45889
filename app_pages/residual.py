"""Residual (post-LN) block: y = LN(x + F(x)); x's gradient arrives along two paths."""

import pandas as pd
import streamlit as st

from ui import caps, compute, state
from ui.errors import stops_on_error
from ui.figures import grouped_bars, heatmap
from ui.picker import pick_vector
from ui.tables import vectors_frame

s = st.session_state

st.title("Residual block (post-LN)")
st.markdown(
    "In a post-LN transformer layer the sublayer's output is added to its input and the sum is "
    "normalized: $z = x + F(x)$, $y = \\mathrm{LN}(z)$, here with a small sublayer "
    "$F(x) = \\tanh(xW + c)$ seeded by the sidebar's seed. Since $x$ reaches $z$ twice, "
    "$dx = dz + dz\\,\\partial F/\\partial x$: the skip connection hands $dz$ straight back, "
    "which is why deep residual networks keep a healthy gradient."
)
caps.enforce("residual")

with stops_on_error():
    inputs = state.inputs()
    cache, grads, errors = compute.residual(inputs, int(s["seed"]))
    cols = st.columns(3)
    for col, name in zip(cols, ("dx", "dW", "dc"), strict=True):
        col.metric(
            f"{name} vs numerical",
            f"{errors[name]:.1e}",
            help="Relative error against central differences; below 1e-6 in float64 "
            "(1e-2 in float32) the analytic gradient is confirmed.",
        )
    index = pick_vector(inputs.x.shape)
    parts = {
        "through the skip (= dz)": grads.dx_skip[index],
        "through F": grads.dx_sublayer[index],
        "dx (sum)": grads.dx[index],
    }
    st.plotly_chart(grouped_bars(parts, "feature j", "gradient"), width="stretch")
    st.dataframe(pd.DataFrame({k: v.reshape(-1) for k, v in parts.items()}).T, width="stretch")
    if inputs.x.ndim > 1:
        st.plotly_chart(
            heatmap(
                grads.dx_sublayer.reshape(-1, inputs.x.shape[-1]),
                "dx through F, every vector (rows) and feature (columns)",
                x_label="feature",
                y_label="vector",
                height=300,
            ),
            width="stretch",
        )
    with st.expander("z = x + F(x) and dz"):
        st.dataframe(vectors_frame(cache.z[index]), width="stretch")
        st.dataframe(vectors_frame(grads.dz[index]), width="stretch")
