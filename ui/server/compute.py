"""Cached calls into ln_core. Pages call these, never NumPy arithmetic of their own.

Every wrapper takes the frozen Inputs of the current rerun (already cast to its dtype) and
st.cache_data keys it by content (Inputs.digest), so reruns that change nothing (switching
pages, stepping through nodes) reuse the results.

Every cache is bounded three ways, so no sequence of visitors grows the server without end: a
number of entries, a size (Streamlit drops the least recently used results past it, counting
pickled bytes), and a time to live. The sizes add up to CACHE_BUDGET_MB (ui.server.cache_budget),
which .streamlit/config.toml also sets as Streamlit's ceiling for all cached data together;
each size holds several results at the largest input its pages accept (measured in bench/).
"""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

import ln_core
from ln_core.defined_nodes import nodes_before_the_root as nodes_before_the_root_of
from ln_core.derivation import DerivationCheck, check_formula
from ln_core.residual_check import residual_check
from teaching.inputs import Inputs
from teaching.upstream import squared_error_gradient
from ui.export.bundle import Bundle, make_bundle
from ui.server.overflow import first_nonfinite, overflowed, require_finite

CACHE_TTL_S = 3600  # a lesson: results outlive page switches, not the day
SIZES_MB: dict[str, int] = {}  # wrapper name -> its size bound, for the budget's test


def cached(max_entries: int, max_mb: int):
    """st.cache_data keyed on Inputs by content: at most `max_entries` results and `max_mb`
    MiB of them (pickled), each kept at most CACHE_TTL_S seconds.

    A result with a NaN or inf, or an arithmetic error, raises ValueError naming it.
    """

    def decorate(function):
        SIZES_MB[function.__name__] = max_mb

        # Where the result is not finite is found once, when it is computed, and kept beside
        # it: walking a large result (the audit's) on every cache hit cost more than the hit.
        @functools.wraps(function)
        def with_nonfinite(*args, **kwargs):
            result = function(*args, **kwargs)
            return result, first_nonfinite(result)

        store = st.cache_data(
            max_entries=max_entries,
            max_size=f"{max_mb}MiB",
            ttl=CACHE_TTL_S,
            show_spinner=False,
            hash_funcs={Inputs: lambda i: i.digest},
        )(with_nonfinite)
        what = function.__name__.replace("_", " ") + " computation"

        @functools.wraps(function)
        def checked(inputs: Inputs, *args, **kwargs):
            # An overflow shows up in the result, which require_finite names for the student.
            try:
                with np.errstate(over="ignore", invalid="ignore"):
                    result, nonfinite = store(inputs, *args, **kwargs)
            except FloatingPointError as err:
                raise overflowed(what, str(err), inputs) from None
            require_finite(what, nonfinite, inputs)
            return result

        checked.clear = store.clear
        return checked

    return decorate


@cached(64, 48)
def forward(inputs: Inputs, axis: int | None = None) -> ln_core.Cache:
    """The staged pass with the inputs' affine option, over their axes unless `axis` is given
    (0 for BatchNorm's view)."""
    axis = inputs.axis if axis is None else axis
    return ln_core.forward(inputs.x, inputs.layer_gamma, inputs.layer_beta, inputs.eps, axis)


@cached(64, 32)
def forward_backward(
    inputs: Inputs, axis: int | None = None
) -> tuple[ln_core.Cache, ln_core.StagedGrads]:
    cache = forward(inputs, axis)
    return cache, ln_core.backward(inputs.dout, cache)


@cached(64, 16)
def loss_gradient(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float, target: np.ndarray
) -> np.ndarray:
    """dout for L = 1/2 ||LN(x) - target||^2, in float64 (x's shape)."""
    return squared_error_gradient(ln_core.forward(x, gamma, beta, eps).out, target)


@cached(256, 8)
def node_check(inputs: Inputs, node: str) -> ln_core.NodeCheck:
    cache, grads = forward_backward(inputs)
    return ln_core.check_node(cache, grads, node)


@cached(32, 16)
def jacobian_facts(vector: Inputs) -> ln_core.JacobianFacts:
    """Facts about J for one vector (x, dout: (D,))."""
    return ln_core.jacobian_facts(vector.x, vector.gamma, vector.dout, vector.eps)


@cached(32, 24)
def jacobian_parts(vector: Inputs) -> ln_core.PathTerms:
    """The three paths of J for one vector (x: (D,)), each (D, D)."""
    return ln_core.jacobian_parts(vector.x, vector.gamma, vector.eps)


@cached(32, 8)
def gradient_check(inputs: Inputs) -> ln_core.GradientCheck:
    return ln_core.gradient_check(
        inputs.x,
        inputs.layer_gamma,
        inputs.layer_beta,
        inputs.dout,
        inputs.eps,
        axis=inputs.axis,
    )


@cached(16, 1)
def step_sweep(vector: Inputs) -> ln_core.StepSweep:
    """Error against the step h for one float64 vector, in both dtypes."""
    return ln_core.error_vs_step(vector.x, vector.gamma, vector.beta, vector.dout, vector.eps)


@cached(32, 8)
def bug_check(inputs: Inputs, bug: str) -> ln_core.BugCheck:
    """The buggy backward put through the gradient check of these inputs, by its rule."""
    return ln_core.check_bug(gradient_check(inputs), inputs.dout, forward(inputs), bug)


@cached(32, 1)
def bug_across_eps(
    vector: Inputs, bug: str, eps_values: tuple[float, ...]
) -> tuple[ln_core.BugCheck, ...]:
    """bug_check of one vector at each of `eps_values`: the page's table of them is one cache
    hit on a click, not one per eps."""
    return tuple(bug_check(vector.with_eps(eps), bug) for eps in eps_values)


@cached(32, 8)
def bug_jacobian_gap(vector: Inputs, bug: str) -> np.ndarray:
    """Buggy analytic Jacobian minus the numerical one for one vector (x: (D,)), (D, D)."""
    analytic = ln_core.jacobian_from_backward(
        lambda d, c: ln_core.buggy_backward(d, c, bug), vector.x, vector.gamma, vector.eps
    )
    return analytic - ln_core.numerical_jacobian(vector.x, vector.gamma, vector.eps)


@cached(16, 2)
def audit(inputs: Inputs) -> list[ln_core.AuditResult]:
    """Every formula of the source documents, judged on these inputs (in float64)."""
    return ln_core.audit(inputs.x, inputs.gamma, inputs.beta, inputs.dout, inputs.eps)


@cached(32, 4)
def derivation(
    inputs: Inputs, target: str, text: str, with_eps: bool, scalar_gamma: bool
) -> DerivationCheck:
    """A student's formula for the gradient `target`, read and judged (in float64)."""
    return check_formula(
        text,
        target,
        inputs.x,
        inputs.gamma,
        inputs.beta,
        inputs.dout,
        inputs.eps,
        with_eps=with_eps,
        scalar_gamma=scalar_gamma,
    )


@cached(16, 4)
def residual(
    inputs: Inputs, seed: int
) -> tuple[ln_core.ResidualCache, ln_core.ResidualGrads, dict[str, ln_core.Judgement]]:
    """The post-LN block with the seeded sublayer, its gradients, and their numerical check
    (dx, dW, dc judged by ln_core.verdict's rule)."""
    x, gamma, beta, dout, eps = inputs.x, inputs.gamma, inputs.beta, inputs.dout, inputs.eps
    sublayer = ln_core.make_sublayer(x.shape[-1], seed, dtype=x.dtype)
    cache = ln_core.residual_forward(x, sublayer, gamma, beta, eps)
    grads = ln_core.residual_backward(dout, cache)
    return cache, grads, residual_check(cache, grads, dout).judgements


@cached(16, 8)
def bn_vs_ln(rows: Inputs) -> ln_core.BNComparison:
    """BatchNorm on rows (x: (N, D)) against LayerNorm on their transpose."""
    return ln_core.compare_bn_ln(rows.x, rows.gamma, rows.beta, rows.dout, rows.eps)


@cached(16, 8)
def rms(inputs: Inputs) -> tuple[ln_core.RMSCache, ln_core.RMSGrads]:
    cache = ln_core.rms_forward(inputs.x, inputs.gamma, inputs.beta, inputs.eps)
    return cache, ln_core.rms_backward(inputs.dout, cache)


@cached(8, 8)
def bundle(inputs: Inputs) -> Bundle:
    return make_bundle(
        inputs.x, inputs.layer_gamma, inputs.layer_beta, inputs.dout, inputs.eps, inputs.axis
    )


@cached(64, 8)
def closed_form(inputs: Inputs) -> tuple[ln_core.Grads, dict[str, ln_core.Judgement]]:
    """The compact closed form's dx, dgamma, dbeta and their agreement with the staged pass
    (judged against rounding)."""
    cache, grads = forward_backward(inputs)
    closed = ln_core.closed_form_backward(inputs.dout, cache)
    return closed, ln_core.agreement(cache, inputs.dout, grads, closed)


@cached(32, 4)
def dx_sum(inputs: Inputs) -> ln_core.DxSum:
    """Σ dx over each vector of the inputs, and its size next to dx."""
    cache, grads = forward_backward(inputs)
    return ln_core.dx_sum(grads, cache)


@cached(16, 8)
def nodes_before_the_root(inputs: Inputs) -> dict[str, np.ndarray]:
    """Nodes 1..5 (sample_mean to sve), defined even where the output is not."""
    return nodes_before_the_root_of(
        inputs.x, inputs.layer_gamma, inputs.layer_beta, inputs.eps, inputs.axis
    )
