"""The nodes that stay defined when LayerNorm's output is not: the mean and the variance.

A constant vector with eps = 0 has sve = 0, so sqrt_sve = 0 and every node after it is 0 / 0;
sample_mean, x_sm, sq_xsm, sample_var and sve are still well defined and worth showing.
"""

from __future__ import annotations

import numpy as np

from ln_core.forward import NODE_NAMES, run_nodes
from ln_core.validation import check_eps, check_input_x, check_params, numeric_guard, resolve_axis

# Nodes 1..5: everything up to and including sve.
BEFORE_THE_ROOT = NODE_NAMES[: NODE_NAMES.index("sve") + 1]


def nodes_before_the_root(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    eps: float,
    axis: int | tuple[int, ...] | None = None,
) -> dict[str, np.ndarray]:
    """sample_mean, x_sm, sq_xsm, sample_var, sve for these inputs (each with forward()'s
    shape), computed whatever the variance. Raises ValueError on inputs forward() refuses for
    another reason (a non-finite x, a wrong shape)."""
    x = check_input_x(x)
    eps = check_eps(eps)
    axis = resolve_axis(axis, x, gamma, beta)
    gamma, beta = check_params(x, gamma, beta, axis)
    with numeric_guard("The forward pass"):
        values = run_nodes({"x": x, "gamma": gamma, "beta": beta}, axis, eps, through="sve")
    return {name: values[name] for name in BEFORE_THE_ROOT}
