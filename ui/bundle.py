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
from ln_core.gradcheck import gradient_check

MERGE_FIELDS = ("dx_sm_via_normalized_x", "dx_sm_via_sq_xsm", "dx_via_x_sm", "dx_via_sample_mean")


@dataclass(frozen=True)
class Bundle:
    """arrays: name -> array ("inputs/x", "nodes/x_sm", "grads/dx_sm", "numerical/dx", ...);
    meta: eps, dtype, step h, tolerance, per-tensor relative errors, the verdict, and the advice
    for any tensor the check cannot resolve."""

    arrays: dict[str, np.ndarray]
    meta: dict


def make_bundle(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    dout: np.ndarray,
    eps: float = 1e-5,
    axis: int | tuple[int, ...] = -1,
) -> Bundle:
    """Run forward, backward and the gradient check once and collect every number.

    gamma and beta as the layer applies them (None when skipped; (L, D) per sequence), and
    `axis` the axes one statistic averages over, exactly as the pages pass them to ln_core.
    """
    cache = forward(x, gamma, beta, eps, axis)
    grads = backward(dout, cache)
    check = gradient_check(cache.x, cache.gamma, cache.beta, grads.dout, eps, axis=cache.axis)
    params = {name: getattr(cache, name) for name in ("gamma", "beta")}
    used = [name for name, value in params.items() if value is not None]
    arrays = {
        "inputs/x": cache.x,
        **{f"inputs/{name}": params[name] for name in used},
        "inputs/dout": grads.dout,
        **{f"nodes/{name}": getattr(cache, name) for name in NODE_NAMES},
        **{f"grads/d{name}": grads.of(name) for name in NODE_NAMES},
        **{f"grads/{name}": getattr(grads, name) for name in MERGE_FIELDS},
        **{f"grads/{t}": getattr(grads, t) for t in check.tensors},
        **{f"numerical/{t}": getattr(check.numerical, t) for t in check.tensors},
    }
    meta = {
        "eps": cache.eps,
        "dtype": cache.dtype.name,
        "shape": list(cache.x.shape),
        # The view's layer options, so the file says which layer its numbers belong to.
        "affine": {(): "neither", ("gamma",): "gamma", ("gamma", "beta"): "both"}[tuple(used)],
        "per": "sequence" if len(cache.axis) == 2 else "token",
        "axis": list(cache.axis),
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
# so the snippet runs anywhere NumPy does and gives the numbers the lab shows. A line marked
# "gamma" or "beta" is for a layer that applies that parameter; its "!" twin for one that skips
# it (torch's elementwise_affine=False or bias=False).
_STANDALONE = (
    ("", "# Forward: the ten nodes; each group of `axis` is normalized on its own."),
    ("", "sample_mean = np.mean(x, axis=axis, keepdims=True)"),
    ("", "x_sm = x - sample_mean"),
    ("", "sq_xsm = x_sm**2"),
    ("", "sample_var = np.mean(sq_xsm, axis=axis, keepdims=True)"),
    ("", "sve = sample_var + eps"),
    ("", "sqrt_sve = np.sqrt(sve)"),
    ("", "inv_sqrt_sve = 1.0 / sqrt_sve"),
    ("", "normalized_x = x_sm * inv_sqrt_sve"),
    ("gamma", "gx = gamma * normalized_x"),
    ("!gamma", "gx = normalized_x  # no gamma: the layer does not scale"),
    ("beta", "out = gx + beta"),
    ("!beta", "out = gx  # no beta: the layer does not shift"),
    ("", ""),
    ("", "# Backward: the same lines in reverse, for the loss sum(dout * out)."),
    ("", "D = int(np.prod([x.shape[a] for a in axis]))  # the numbers one mean averages"),
    ("", "vectors = tuple(range(x.ndim - len(axis)))  # gamma and beta are shared by these"),
    ("beta", "dbeta = np.sum(dout, axis=vectors)"),
    ("gamma", "dgamma = np.sum(normalized_x * dout, axis=vectors)"),
    ("gamma", "dnormalized_x = gamma * dout"),
    ("!gamma", "dnormalized_x = dout"),
    ("", "dx_sm_via_normalized_x = inv_sqrt_sve * dnormalized_x"),
    ("", "dinv_sqrt_sve = np.sum(x_sm * dnormalized_x, axis=axis, keepdims=True)"),
    ("", "dsqrt_sve = -1.0 / sqrt_sve**2 * dinv_sqrt_sve"),
    ("", "dsve = 0.5 / sqrt_sve * dsqrt_sve"),
    ("", "dsample_var = dsve"),
    ("", "dsq_xsm = np.ones_like(sq_xsm) / D * dsample_var"),
    ("", "dx_sm = dx_sm_via_normalized_x + 2.0 * x_sm * dsq_xsm"),
    ("", "dsample_mean = -np.sum(dx_sm, axis=axis, keepdims=True)"),
    ("", "dx = dx_sm + np.ones_like(x) / D * dsample_mean"),
    ("", ""),
    ("", 'print("out =", out.tolist())'),
    ("", 'print("dx =", dx.tolist())'),
    ("gamma", 'print("dgamma =", dgamma.tolist())'),
    ("beta", 'print("dbeta =", dbeta.tolist())'),
)


def numpy_snippet(bundle: Bundle) -> str:
    """Python code, needing only NumPy, that rebuilds this example's inputs and computes out,
    dx and the gradients of the parameters the layer applies with the ten staged lines, over
    the same axes (printed at full precision)."""
    used = {name for name in ("gamma", "beta") if f"inputs/{name}" in bundle.arrays}

    def literal(name: str) -> str:
        array = bundle.arrays[f"inputs/{name}"]
        return f"np.array({np.asarray(array, dtype=np.float64).tolist()!r}, dtype=np.{array.dtype})"

    def wanted(condition: str) -> bool:
        name = condition.lstrip("!")
        return not condition or (name in used) != condition.startswith("!")

    names = [name for name in ("x", "gamma", "beta", "dout") if name in used | {"x", "dout"}]
    header = [
        "import numpy as np",
        "",
        f"# {bundle.meta['dtype']}, affine: {bundle.meta['affine']}, per {bundle.meta['per']}",
        *(f"{name} = {literal(name)}" for name in names),
        f"eps = {bundle.meta['eps']!r}",
        f"axis = {tuple(bundle.meta['axis'])!r}",
        "",
    ]
    body = [line for condition, line in _STANDALONE if wanted(condition)]
    return "\n".join(header + body) + "\n"
