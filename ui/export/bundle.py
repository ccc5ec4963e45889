"""One example, everything about it: inputs, the ten nodes, every gradient and the check.

Exports (JSON, .npz, an HTML report, a NumPy snippet) are all written from this one bundle, so
they cannot disagree with each other or with the app.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import numpy as np

from ln_core.backward import backward
from ln_core.forward import NODE_NAMES, forward
from ln_core.gradcheck import TENSORS, gradient_check

MERGE_FIELDS = ("dx_sm_via_normalized_x", "dx_sm_via_sq_xsm", "dx_via_x_sm", "dx_via_sample_mean")


@dataclass(frozen=True)
class Bundle:
    """arrays: name -> array ("inputs/x", "nodes/x_sm", "grads/dx_sm", "numerical/dx", ...);
    meta: eps, dtype, step h, tolerance, per-tensor relative errors, the verdict, and the advice
    for any tensor the check cannot resolve."""

    arrays: dict[str, np.ndarray]
    meta: dict


def make_bundle(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float = 1e-5
) -> Bundle:
    """Run forward, backward and the gradient check once and collect every number."""
    cache = forward(x, gamma, beta, eps)
    grads = backward(dout, cache)
    check = gradient_check(cache.x, cache.gamma, cache.beta, grads.dout, eps)
    arrays = {
        "inputs/x": cache.x,
        "inputs/gamma": cache.gamma,
        "inputs/beta": cache.beta,
        "inputs/dout": grads.dout,
        **{f"nodes/{name}": getattr(cache, name) for name in NODE_NAMES},
        **{f"grads/d{name}": grads.of(name) for name in NODE_NAMES},
        **{f"grads/{name}": getattr(grads, name) for name in MERGE_FIELDS},
        **{f"grads/{t}": getattr(grads, t) for t in TENSORS},
        **{f"numerical/{t}": getattr(check.numerical, t) for t in TENSORS},
    }
    meta = {
        "eps": cache.eps,
        "dtype": cache.dtype.name,
        "shape": list(cache.x.shape),
        "h": check.h,
        "tolerance": check.tolerance,
        "relative_errors": check.errors,
        "passed": check.passed,
        # Why a tensor was neither passed nor failed: too small for central differences.
        "cannot_resolve": [check.advice(t) for t in check.unresolved],
    }
    return Bundle(arrays, meta)


def to_json(bundle: Bundle) -> str:
    """The bundle as JSON: arrays as nested lists (full float64 precision), meta as is."""
    arrays = {name: np.asarray(a, dtype=np.float64).tolist() for name, a in bundle.arrays.items()}
    return json.dumps({"meta": bundle.meta, "arrays": arrays}, indent=1)


def to_npz(bundle: Bundle) -> bytes:
    """The bundle as a compressed .npz: one array per name ('/' becomes '__'), meta as JSON."""
    buffer = io.BytesIO()
    arrays = {name.replace("/", "__"): a for name, a in bundle.arrays.items()}
    np.savez_compressed(buffer, meta=np.array(json.dumps(bundle.meta)), **arrays)
    return buffer.getvalue()


# The staged forward and backward passes in plain NumPy, line for line as ln_core runs them,
# so the snippet runs anywhere NumPy does and gives the numbers the lab shows.
_STANDALONE = """
# Forward: the ten nodes; each vector is normalized over its last axis.
sample_mean = np.mean(x, axis=-1, keepdims=True)
x_sm = x - sample_mean
sq_xsm = x_sm**2
sample_var = np.mean(sq_xsm, axis=-1, keepdims=True)
sve = sample_var + eps
sqrt_sve = np.sqrt(sve)
inv_sqrt_sve = 1.0 / sqrt_sve
normalized_x = x_sm * inv_sqrt_sve
gx = gamma * normalized_x
out = gx + beta

# Backward: the same lines in reverse, for the loss sum(dout * out).
D = x.shape[-1]
vectors = tuple(range(x.ndim - 1))  # gamma and beta are shared by every vector
dbeta = np.sum(dout, axis=vectors)
dgamma = np.sum(normalized_x * dout, axis=vectors)
dnormalized_x = gamma * dout
dx_sm_via_normalized_x = inv_sqrt_sve * dnormalized_x
dinv_sqrt_sve = np.sum(x_sm * dnormalized_x, axis=-1, keepdims=True)
dsqrt_sve = -1.0 / sqrt_sve**2 * dinv_sqrt_sve
dsve = 0.5 / sqrt_sve * dsqrt_sve
dsample_var = dsve
dsq_xsm = np.ones_like(sq_xsm) / D * dsample_var
dx_sm = dx_sm_via_normalized_x + 2.0 * x_sm * dsq_xsm
dsample_mean = -np.sum(dx_sm, axis=-1, keepdims=True)
dx = dx_sm + np.ones_like(x) / D * dsample_mean

print("out =", out.tolist())
print("dx =", dx.tolist())
print("dgamma =", dgamma.tolist())
print("dbeta =", dbeta.tolist())
"""


def numpy_snippet(bundle: Bundle) -> str:
    """Python code, needing only NumPy, that rebuilds this example's inputs and computes out,
    dx, dgamma and dbeta with the ten staged lines (printed at full precision)."""

    def literal(name: str) -> str:
        array = bundle.arrays[f"inputs/{name}"]
        return f"np.array({np.asarray(array, dtype=np.float64).tolist()!r}, dtype=np.{array.dtype})"

    inputs = [f"{name} = {literal(name)}" for name in ("x", "gamma", "beta", "dout")]
    return "\n".join(["import numpy as np", "", *inputs, f"eps = {bundle.meta['eps']!r}"]) + (
        _STANDALONE
    )
