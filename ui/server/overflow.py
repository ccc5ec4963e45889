"""Results that overflowed are named in words instead of reaching the screen as NaN or inf.

Inputs may be finite and still too large for what a page computes from them (beta = 1e308
makes the loss sum(dout * y) overflow float64). compute.py looks for a NaN or inf in every
result once (first_nonfinite), names it on every use (require_finite), and turns NumPy's
FloatingPointError into `overflowed`: each gives a ValueError a student can read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from teaching.inputs import Inputs


def first_nonfinite(value: object) -> str | None:
    """Where in `value` (arrays, numbers, dataclasses, dicts, lists) a NaN or inf sits.

    Returns a readable path such as "ResidualGrads.dx" or "dx", "" for value itself, or None
    when everything is finite.
    """
    if isinstance(value, np.ndarray):
        finite = value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
        return None if finite else ""
    if isinstance(value, (float, np.floating)):
        return None if np.isfinite(value) else ""
    parts = _parts(value)
    for label, part in parts:
        found = first_nonfinite(part)
        if found is not None:
            return ".".join(p for p in (label, found) if p)
    return None


def _parts(value: object) -> list[tuple[str, object]]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        return [(f"{name}.{f.name}", getattr(value, f.name)) for f in dataclasses.fields(value)]
    if isinstance(value, Mapping):
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [("", v) for v in value]
    return []


def require_finite(what: str, where: str | None, inputs: Inputs | None) -> None:
    """Raise ValueError naming what overflowed, where first_nonfinite found a NaN or inf in
    its result (None: nowhere), and the largest input."""
    if where is not None:
        raise overflowed(what, f"{where or 'its result'} is not a finite number", inputs)


def overflowed(what: str, detail: str, inputs: Inputs | None) -> ValueError:
    """The error a student reads when `what` overflowed: `detail`, then the largest input."""
    message = f"The {what} overflowed: {detail}."
    if inputs is not None:
        largest = {name: _largest(getattr(inputs, name)) for name in ("x", "gamma", "beta", "dout")}
        name = max(largest, key=largest.__getitem__)
        limit = float(np.finfo(np.dtype(inputs.dtype)).max)
        message += (
            f" The numbers are too large for {inputs.dtype} arithmetic (which holds up to "
            f"about {limit:.1e}): the largest input is |{name}| = {largest[name]:.3g}. "
            "Use smaller values."
        )
    return ValueError(message)


def _largest(array: np.ndarray) -> float:
    return float(np.max(np.abs(array))) if array.size else 0.0
