"""The two layer options a PyTorch user chooses, on the pages where they teach something.

Which affine parameters the layer applies (torch's elementwise_affine and bias: gamma and beta,
gamma only, or neither) and, for a token batch (B, L, D), whether one statistic averages over a
token's D features or over a whole sequence's L x D (torch.nn.LayerNorm((L, D))). The choice
lives in the shared state (keys "affine" and "per"), travels in the share link, and reaches
ln_core through the Inputs of the pages that draw it (Stepper, Gradient check).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import streamlit as st

from teaching.inputs import AFFINE, PER, Inputs
from ui.server import caps
from ui.session import state

# The pages whose numbers follow the options, by url_path, each with the largest group (L x D)
# it can treat per sequence (None: any). The sidebar's check runs with the same options.
PAGES: dict[str, int | None] = {
    "stepper": None,
    # Per sequence, a sequence is one group: the same bound as D per token (the export's
    # bundle holds the gradient check, whose work grows with the group).
    "gradcheck": caps.CAPS["gradcheck"].max_d,
    "export": caps.CAPS["export"].max_d,
}


def _too_long(max_group: int | None) -> str | None:
    """Why per sequence is not offered at this size (a sentence), or None when it is."""
    s = st.session_state
    group = s["l"] * s["d"]
    if max_group is None or s["shape_kind"] != "tokens" or group <= max_group:
        return None
    return (
        f"Per sequence makes each sequence one group of L x D = {group} numbers, and this page "
        f"checks every entry against its whole group, so it takes groups of at most {max_group} "
        "(as it takes D up to that many per token). Shown per token; lower L or D for per "
        "sequence."
    )


def per_token_instead(url_path: str) -> str | None:
    """Why the page at `url_path` shows per token though per sequence is chosen, or None: for
    a page that does not draw the choice itself (draw says it under the choice)."""
    if st.session_state["per"] != "sequence":
        return None
    return _too_long(PAGES[url_path])


def _choice(column: Any, label: str, key: str, labels: Mapping[str, str], why: str) -> None:
    """A select box over `labels` (value -> what it reads as) that is a view of state `key`."""
    column.selectbox(label, list(labels), format_func=labels.get, help=why, **state.bound(key))


def draw(max_group: int | None = None) -> None:
    """The affine choice, and the per-token / per-sequence choice for a token batch.

    max_group: the largest group (L x D) the page can treat per sequence, or None for any.
    """
    columns = st.columns(2)
    _choice(
        columns[0],
        "Affine parameters",
        "affine",
        AFFINE,
        "out = gamma * normalized_x + beta. Leaving gamma or beta out is torch's "
        "elementwise_affine=False or bias=False: the nodes gx and out then pass their input on.",
    )
    if st.session_state["shape_kind"] == "tokens":
        _choice(
            columns[1],
            "Normalize",
            "per",
            PER,
            "Per token: each token's D features share one mean and variance. Per sequence: all "
            "L x D numbers of a sequence share them, as torch.nn.LayerNorm((L, D)).",
        )
        why = _too_long(max_group)
        if why is not None and st.session_state["per"] == "sequence":
            st.warning(why, icon=":material/straighten:")


def applied(inputs: Inputs, max_group: int | None = None) -> Inputs:
    """The inputs with the chosen options (per sequence only for a token batch that fits)."""
    s = st.session_state
    sequence = s["per"] == "sequence" and inputs.x.ndim == 3 and _too_long(max_group) is None
    return replace(inputs, affine=s["affine"], per="sequence" if sequence else "token")


def for_page(inputs: Inputs, url_path: str) -> Inputs:
    """The inputs as the page at `url_path` computes with them: its options, if it has any."""
    return applied(inputs, PAGES[url_path]) if url_path in PAGES else inputs
