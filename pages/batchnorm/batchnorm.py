"""LayerNorm vs BatchNorm vs RMSNorm: the same graph with another axis, or without the mean."""

import streamlit as st

from teaching.verdicts import Verdict, combined, resolving_inputs, rounding_agreement
from ui.draw.figures import heatmap, overlaid_histograms
from ui.draw.glossary import glossary_list
from ui.draw.opening import opening
from ui.draw.tables import columns_table
from ui.draw.verdict_metric import verdict_lines, verdict_metric
from ui.export.notebook import View
from ui.export.notebook_download import notebook_expander
from ui.server import caps, compute
from ui.session import share, state
from ui.session.errors import stops_on_error

s = st.session_state
NORMS = {
    "layer": "LayerNorm: each vector (row) over its D features",
    "batch": "BatchNorm: each feature (column) over the N vectors",
    "rms": "RMSNorm: each row, scaled by its root mean square, no mean node",
}

opening(
    "LayerNorm vs BatchNorm",
    "LayerNorm averages each row, BatchNorm each column: **BatchNorm is LayerNorm on the "
    "transpose**.",
)
if s["x"].ndim == 1:
    st.error(
        "BatchNorm needs a batch: x is a single vector. Choose rows (vectors x D) or tokens in the "
        "sidebar (tokens are treated as B * L rows)."
    )
    st.stop()
caps.enforce("batchnorm")


def transpose_check() -> tuple[dict[str, Verdict], str]:
    """BatchNorm's staged graph against LayerNorm on the transpose, tensor by tensor, and what
    would resolve a tensor these inputs cannot."""
    batch = state.inputs().rows()
    comparison = compute.bn_vs_ln(batch)
    hint = resolving_inputs(compute.forward(batch, 0), batch.dout)
    verdicts = {
        name: rounding_agreement(
            f"BatchNorm's {name} from the staged graph (axis = 0) against LayerNorm on the "
            "transpose",
            comparison.judgements[name],
            batch.dtype,
            hint,
        )
        for name in comparison.errors
    }
    return verdicts, hint


with stops_on_error(), st.container(key="main_verdict"):
    verdicts, hint = transpose_check()
    verdict_lines(
        combined(
            verdicts,
            "BatchNorm on x against LayerNorm on x transposed, every tensor (the check below)",
            "BatchNorm on x equals LayerNorm on x transposed, up to rounding.",
            hint,
        )
    )


@st.fragment
def normalized() -> None:
    """The Normalize choice reruns only this part: the check below does not depend on it."""
    norm = st.radio(
        "Normalize",
        list(NORMS),
        format_func=lambda kind: NORMS[kind].split(":")[0],
        horizontal=True,
        # What each one averages over, on hover: the boxes on x below show it too.
        help="\n\n".join(f"{said}." for said in NORMS.values()),
        **state.bound("norm_kind"),
    )
    # The chosen normalization is part of the link. Written first, so the notebooks' link below
    # reuses it: the radio changes the state only through its callback, before this run.
    view = share.write_link()

    with stops_on_error():
        # Tokens become rows: BatchNorm then averages over every token of every sequence.
        batch = state.inputs().rows()
        fig = heatmap(
            batch.x,
            "x, boxed by group",
            x_label="feature",
            y_label="vector",
            height=280,
            boxes="columns" if norm == "batch" else "rows",
        )
        with st.container(key="main_figure"):
            st.plotly_chart(fig, width="stretch")
        st.caption("Read: red positive, blue negative; each black box is one group averaged.")

        if norm == "rms":
            cache, grads = compute.rms(batch)
            st.caption("Mean square per vector (no mean is subtracted)")
            stats = columns_table(
                {"mean square": cache.mean_sq.reshape(-1)},
                tuple(f"vector {i}" for i in range(cache.mean_sq.size)),
            )
            st.dataframe(stats, width="stretch")
        else:
            axis = 0 if norm == "batch" else -1
            cache, grads = compute.forward_backward(batch, axis)
            per = "feature" if norm == "batch" else "vector"
            st.caption(f"Statistics per {per}")
            stats = columns_table(
                {"mean": cache.sample_mean.reshape(-1), "variance": cache.sample_var.reshape(-1)},
                tuple(f"{per} {i}" for i in range(cache.sample_mean.size)),
            )
            st.dataframe(stats, width="stretch")
        left, right = st.columns(2)
        with left:
            st.plotly_chart(
                heatmap(cache.out, "output y", x_label="feature", y_label="vector", height=300),
                width="stretch",
            )
        with right:
            st.plotly_chart(
                heatmap(grads.dx, "gradient dx", x_label="feature", y_label="vector", height=300),
                width="stretch",
            )
        st.caption(
            "Read: the output (left) and dx (right) entry by entry, red positive, blue negative; "
            "compare which axis their patterns run along as you switch normalization."
        )
        # The notebooks show the normalization chosen above, on the same rows.
        notebook_expander(
            "jupyter_batchnorm",
            lambda: View(batch, s["preset"], share.current_link(view=view), norm),
        )


normalized()
with st.expander("More about the three norms, and the words on this page"):
    st.markdown(
        "The ten nodes do not care which axis they average over. LayerNorm averages each row "
        "of the input (vectors x D) over its features; BatchNorm averages each column over the "
        "batch (with gamma and beta still per feature). RMSNorm drops the mean node and "
        "divides by the root mean square."
    )
    glossary_list(("staged", "broadcast"))

with stops_on_error():
    st.header("Check: BatchNorm on x equals LayerNorm on x transposed")
    batch = state.inputs().rows()
    comparison = compute.bn_vs_ln(batch)
    cols = st.columns(4)
    for col, (name, error) in zip(cols, comparison.errors.items(), strict=True):
        verdict_metric(name, error, verdicts[name], col)
    st.caption(
        "Relative error between the staged graph with axis = 0 and LayerNorm (axis = -1, "
        "unit gamma, zero beta) run on the transpose with gamma and beta applied per feature."
    )
    layer = compute.forward_backward(batch, -1)[1].dx
    histograms = overlaid_histograms(
        {"LayerNorm dx": layer, "BatchNorm dx": comparison.direct.dx}, "dx entries"
    )
    st.plotly_chart(histograms, width="stretch")
    st.caption(
        "Read: how the entries of dx spread, LayerNorm's (blue, plain) over BatchNorm's "
        "(orange, hatched). Normalizing over another axis sends the gradient elsewhere: the two "
        "shapes differ even though x and dout are the same."
    )
