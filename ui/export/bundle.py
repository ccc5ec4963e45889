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
from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS
from teaching.verdicts import check_headline, gradient_verdict, resolving_inputs
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
        "relative_errors": check.errors,
        "statuses": {m: {t: check.status(m, t) for t in check.tensors} for m in check.errors},
        "bounds": check.resolution,
        # The page's words: "cannot resolve" where nothing fails but some tensor is not pinned,
        # so a file never says "passes" where the Gradient check page would not.
        "verdict": FAIL if not check.passed else CANNOT_RESOLVE if check.unresolved else PASS,
        "headline": check_headline(check),
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


def numpy_snippet(bundle: Bundle) -> str:
    """Python code, needing only NumPy, that rebuilds this example's inputs and computes out,
    dx and the gradients of the parameters the layer applies with the ten staged lines (the
    notebooks' own lines), over the same axes, printed at full precision."""
    used = [name for name in ("gamma", "beta") if f"inputs/{name}" in bundle.arrays]
    prefixed = [f"d{name}" for name in used]
    skipped = tuple(name for name in ("gamma", "beta") if name not in used)
    meta = bundle.meta
    lines = [
        "import numpy as np",
        "",
        f"# {meta['dtype']}, affine: {meta['affine']}, per {meta['per']}",
        *(
            assignment(name, bundle.arrays[f"inputs/{name}"])
            if name not in skipped
            else f"{name} = None  # this layer has no {name}"
            for name in INPUT_NAMES
        ),
        f"eps = {float_literal(meta['eps'])}",
        f"axis = {tuple(meta['axis'])!r}  # the axes one mean and one variance average over",
        "",
        numpy_lines(skipped),
        "",
        *(f'print("{name} =", {name}.tolist())' for name in ("out", "dx", *prefixed)),
    ]
    return "\n".join(lines) + "\n"
