"""Residual (post-LN) block: y = LN(x + F(x)); x's gradient arrives along two paths."""

import streamlit as st

from teaching.verdicts import numerical_agreement, resolving_inputs
from ui.draw.figures import grouped_bars, heatmap
from ui.draw.glossary import glossary_list
from ui.draw.opening import opening
from ui.draw.tables import rows_numbers, vectors_numbers
from ui.draw.verdict_metric import verdict_metric
from ui.server import caps, compute
from ui.session import state
from ui.session.errors import stops_on_error
from ui.session.picker import pick_vector

s = st.session_state

opening(
    "Residual block (post-LN)",
    "In $y = \\mathrm{LN}(x + F(x))$, x's gradient comes back two ways: through the skip and "
    "through F.",
)
caps.enforce("residual")

with stops_on_error():
    inputs = state.inputs()
    cache, grads, judgements = compute.residual(inputs, int(s["seed"]))
    hint = resolving_inputs(cache.ln, inputs.dout)
    with st.container(key="main_figure"):
        cols = st.columns(3)
        for col, (name, judgement) in zip(cols, judgements.items(), strict=True):
            verdict = numerical_agreement(
                f"{name} of the block's backward pass against central differences",
                judgement,
                inputs.dtype,
                hint,
            )
            verdict_metric(f"{name} vs numerical", judgement.relative, verdict, col)
        # The bars come before the vector's picker on the screen; the picker decides them.
        bars = st.container()
    index = pick_vector(inputs.x.shape)
    parts = {
        "through the skip (= dz)": grads.dx_skip[index],
        "through F": grads.dx_sublayer[index],
        "dx (sum)": grads.dx[index],
    }
    bars.plotly_chart(grouped_bars(parts, "feature j", "gradient", height=300), width="stretch")
    st.caption("Read: per feature, dx is the skip's bar plus F's.")
    with st.expander("More about the block"):
        st.markdown(
            "In a post-LN transformer layer the sublayer's output is added to its input and the "
            "sum is normalized: $z = x + F(x)$, $y = \\mathrm{LN}(z)$, here with a small "
            "sublayer $F(x) = \\tanh(xW + c)$ seeded by the sidebar's seed. Since $x$ reaches "
            "$z$ twice, "
            "$dx = dz + dz\\,\\partial F/\\partial x$: the skip connection hands $dz$ straight "
            "back, which is why deep residual networks keep a healthy gradient."
        )
        glossary_list(("post-LN", "staged"))
    rows_numbers(parts)
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
        st.caption(
            "Read: red where the path through F raises the loss as x grows, blue where it "
            "lowers it, white where F passes nothing back."
        )
    with st.expander("z = x + F(x) and dz"):
        vectors_numbers(cache.z[index])
        vectors_numbers(grads.dz[index])
