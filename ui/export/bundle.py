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
from teaching.verdicts import gradient_verdict, resolving_inputs
from ui.export.notebook_code import numpy_lines
from ui.export.python_literal import assignment, float_literal

INPUT_NAMES = ("x", "gamma", "beta", "dout")
MERGE_FIELDS = ("dx_sm_via_normalized_x", "dx_sm_via_sq_xsm", "dx_via_x_sm", "dx_via_sample_mean")


@dataclass(frozen=True)
class Bundle:
    """arrays: name -> array ("inputs/x", "nodes/x_sm", "grads/dx_sm", "numerical/dx", ...);
    meta: eps, dtype, step h, per-tensor relative errors, statuses and round-off bounds, the
    verdict, and the reason for any tensor the check cannot resolve."""

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
        "relative_errors": check.errors,
        "statuses": {m: {t: check.status(m, t) for t in check.tensors} for m in check.errors},
        "bounds": check.resolution,
        "passed": check.passed,
        # Why a tensor was neither passed nor failed: right and wrong would look the same.
        "cannot_resolve": [
            f"{t}: {gradient_verdict(check, t, resolving_inputs(cache, grads.dout)).sentence}"
            for t in check.unresolved
        ],
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


# What the snippet prints: the output and the three gradients, at full precision.
_PRINTS = """

print("out =", out.tolist())
print("dx =", dx.tolist())
print("dgamma =", dgamma.tolist())
print("dbeta =", dbeta.tolist())
"""


def numpy_snippet(bundle: Bundle) -> str:
    """Python code, needing only NumPy, that rebuilds this example's inputs and computes out,
    dx, dgamma and dbeta with the ten staged lines (the notebooks' own lines), printed at full
    precision."""
    inputs = [assignment(name, bundle.arrays[f"inputs/{name}"]) for name in INPUT_NAMES]
    eps = f"eps = {float_literal(bundle.meta['eps'])}"
    axis = "axis = (-1,)  # each vector is normalized over its D features"
    return "\n".join(["import numpy as np", "", *inputs, eps, axis, "", numpy_lines()]) + _PRINTS
