"""Cached calls into ln_core. Pages call these, never NumPy arithmetic of their own.

st.cache_data keys on the argument values (arrays included), so reruns that change nothing
(switching pages, stepping through nodes) reuse the results.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import ln_core


def _cast(dtype: str, *arrays: np.ndarray) -> list[np.ndarray]:
    return [np.asarray(a).astype(dtype) for a in arrays]


@st.cache_data(max_entries=64, show_spinner=False)
def forward(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float, dtype: str, axis: int = -1
) -> ln_core.Cache:
    return ln_core.forward(*_cast(dtype, x, gamma, beta), eps, axis)


@st.cache_data(max_entries=64, show_spinner=False)
def forward_backward(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float,
    dtype: str,
    axis: int = -1,
) -> tuple[ln_core.Cache, ln_core.StagedGrads]:
    cache = forward(x, gamma, beta, eps, dtype, axis)
    return cache, ln_core.backward(np.asarray(dout).astype(dtype), cache)


@st.cache_data(max_entries=256, show_spinner=False)
def node_check(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float,
    dtype: str,
    node: str,
    axis: int = -1,
) -> ln_core.NodeCheck:
    cache, grads = forward_backward(x, gamma, beta, dout, eps, dtype, axis)
    return ln_core.check_node(cache, grads, node)
