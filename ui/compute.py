"""Cached calls into ln_core. Pages call these, never NumPy arithmetic of their own.

st.cache_data keys on the argument values (arrays included), so reruns that change nothing
(switching pages, stepping through nodes) reuse the results.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import ln_core
from ln_core.bundle import Bundle, make_bundle
from ln_core.gradcheck import compare


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


@st.cache_data(max_entries=32, show_spinner=False)
def jacobian_facts(
    x: np.ndarray, gamma: np.ndarray, dout: np.ndarray, eps: float, dtype: str
) -> ln_core.JacobianFacts:
    return ln_core.jacobian_facts(*_cast(dtype, x, gamma, dout), eps)


@st.cache_data(max_entries=32, show_spinner=False)
def jacobian_parts(x: np.ndarray, gamma: np.ndarray, eps: float, dtype: str) -> ln_core.PathTerms:
    return ln_core.jacobian_parts(*_cast(dtype, x, gamma), eps)


@st.cache_data(max_entries=32, show_spinner=False)
def gradient_check(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float, dtype: str
) -> ln_core.GradientCheck:
    return ln_core.gradient_check(*_cast(dtype, x, gamma, beta, dout), eps)


@st.cache_data(max_entries=16, show_spinner=False)
def step_sweep(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float
) -> ln_core.StepSweep:
    return ln_core.error_vs_step(x, gamma, beta, dout, eps)


@st.cache_data(max_entries=32, show_spinner=False)
def bug_check(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float,
    dtype: str,
    bug: str,
) -> tuple[dict[str, float], float]:
    """rel_error of the buggy backward against numerical gradients, and the tolerance."""
    cache = forward(x, gamma, beta, eps, dtype)
    dout = np.asarray(dout).astype(dtype)
    check = gradient_check(x, gamma, beta, dout, eps, dtype)
    buggy = ln_core.buggy_backward(dout, cache, bug)
    return compare(buggy, check.numerical), check.tolerance


@st.cache_data(max_entries=32, show_spinner=False)
def bug_jacobian_gap(
    x: np.ndarray, gamma: np.ndarray, eps: float, dtype: str, bug: str
) -> np.ndarray:
    """Buggy analytic Jacobian minus the numerical one for one vector, (D, D)."""
    x, gamma = _cast(dtype, x, gamma)
    analytic = ln_core.jacobian_from_backward(
        lambda d, c: ln_core.buggy_backward(d, c, bug), x, gamma, eps
    )
    return analytic - ln_core.numerical_jacobian(x, gamma, eps)


@st.cache_data(max_entries=16, show_spinner=False)
def audit(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float, dtype: str
) -> list[ln_core.AuditResult]:
    return ln_core.audit(*_cast(dtype, x, gamma, beta, dout), eps)


@st.cache_data(max_entries=16, show_spinner=False)
def residual(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float,
    dtype: str,
    seed: int,
) -> tuple[ln_core.ResidualCache, ln_core.ResidualGrads, dict[str, float]]:
    """The post-LN block with the seeded sublayer, its gradients, and their numerical check."""
    x, gamma, beta, dout = _cast(dtype, x, gamma, beta, dout)
    sublayer = ln_core.make_sublayer(x.shape[-1], seed, dtype=x.dtype)
    cache = ln_core.residual_forward(x, sublayer, gamma, beta, eps)
    grads = ln_core.residual_backward(dout, cache)
    h = ln_core.default_h(cache.ln)
    numerical = ln_core.residual_numerical_grads(x, sublayer, gamma, beta, dout, eps, h)
    errors = {k: ln_core.rel_error(getattr(grads, k), v) for k, v in numerical.items()}
    return cache, grads, errors


@st.cache_data(max_entries=16, show_spinner=False)
def bn_vs_ln(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float, dtype: str
) -> ln_core.BNComparison:
    return ln_core.compare_bn_ln(*_cast(dtype, x, gamma, beta, dout), eps)


@st.cache_data(max_entries=16, show_spinner=False)
def rms(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float, dtype: str
) -> tuple[ln_core.RMSCache, ln_core.RMSGrads]:
    x, gamma, beta, dout = _cast(dtype, x, gamma, beta, dout)
    cache = ln_core.rms_forward(x, gamma, beta, eps)
    return cache, ln_core.rms_backward(dout, cache)


@st.cache_data(max_entries=8, show_spinner=False)
def bundle(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float, dtype: str
) -> Bundle:
    return make_bundle(*_cast(dtype, x, gamma, beta, dout), eps)
