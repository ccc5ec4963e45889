"""Input checks that turn every kind of bad input into one ValueError a student can read.

Everything public in ln_core funnels its arguments through here, so the rest of the package may
assume finite float arrays of matching shapes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np


def as_float_array(
    name: str, value: Any, dtype: np.dtype | None = None, finite: bool = True
) -> np.ndarray:
    """Return `value` as a finite float32/float64 array, or raise ValueError naming `name`.

    Integers and booleans become float64; float16 becomes float32; float32 stays float32 so that
    a float32 lesson really runs in float32. With `dtype` given, the result is cast to it.
    finite=False skips the pass that looks for NaN and inf, for a caller that detects them in
    its own results and then calls again with finite=True for the message.
    """
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"{name} must be an array of numbers; could not read it ({err})."
        ) from None
    if array.dtype.kind == "O":
        if any(entry is None for entry in array.flat):
            raise ValueError(f"{name} contains None; every entry must be a number.")
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must contain only numbers, but some entries are not."
            ) from None
        except OverflowError:
            raise ValueError(
                f"{name} contains a number too large for float64 (about 1.8e308 at most)."
            ) from None
    if array.dtype.kind == "c":
        raise ValueError(f"{name} must contain real numbers; complex numbers are not supported.")
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"{name} must contain numbers, but it holds {array.dtype.name} values "
            "(text or another non-numeric type)."
        )
    if dtype is None:
        dtype = np.dtype(np.float32) if array.dtype.kind == "f" and array.itemsize <= 4 else None
        dtype = dtype or np.dtype(np.float64)
    dtype = np.dtype(dtype)
    source = array
    with np.errstate(over="ignore", invalid="ignore"):
        array = array.astype(dtype, copy=False)
    if array.size == 0:
        raise ValueError(f"{name} is empty; it needs at least one number.")
    if not finite:
        return array
    bad = ~np.isfinite(array)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        if array is not source and np.isfinite(source[where]):
            raise ValueError(
                f"{name} has a value at index {where} that is too large for {dtype.name} "
                f"(at most about {float(np.finfo(dtype).max):.1e}); rescale it."
            )
        kind = "NaN" if np.isnan(array[where]) else "an infinite value"
        raise ValueError(
            f"{name} contains {kind} at index {where} ({int(bad.sum())} non-finite entries in "
            "all); every entry must be a finite number."
        )
    return array


def check_shape(name: str, array: np.ndarray, shape: tuple[int, ...], why: str) -> None:
    """Raise ValueError unless `array.shape == shape`; `why` says where that shape comes from."""
    if array.shape != shape:
        raise ValueError(f"{name} has shape {array.shape} but must have shape {shape} ({why}).")


def check_eps(eps: Any) -> float:
    """Return eps as a float after checking it is a finite number >= 0."""
    try:
        value = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"eps must be a number >= 0, got {eps!r}.") from None
    if not np.isfinite(value):
        raise ValueError(f"eps must be a finite number >= 0, got {value}.")
    if value < 0:
        raise ValueError(
            f"eps must be >= 0, got {value}: a negative eps can make var + eps negative, "
            "and its square root undefined."
        )
    return value


def check_axis(axis: Any, ndim: int) -> int:
    """Return `axis` as a negative index (so a stacked leading axis never shifts it)."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ValueError(f"axis must be an integer, got {axis!r}.")
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"axis {axis} is out of range for an input with {ndim} dimension(s); "
            f"use an axis from {-ndim} to {ndim - 1}."
        )
    return int(axis) - ndim if axis >= 0 else int(axis)


def check_input_x(x: Any, finite: bool = True) -> np.ndarray:
    """Validate x: an array of shape (D,), (N, D) or (B, L, D), finite unless finite=False."""
    array = as_float_array("x", x, finite=finite)
    if array.ndim == 0:
        raise ValueError("x is a single number; it must be a vector (D,) or a batch of vectors.")
    return array


def check_params(x: np.ndarray, gamma: Any, beta: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate gamma and beta: (D,) with D = x.shape[-1], cast to x's dtype."""
    d = x.shape[-1]
    why = f"one entry per feature; x has D = {d} features on its last axis"
    gamma = as_float_array("gamma", gamma, x.dtype)
    check_shape("gamma", gamma, (d,), why)
    beta = as_float_array("beta", beta, x.dtype)
    check_shape("beta", beta, (d,), why)
    return gamma, beta


def check_dout(
    dout: Any, shape: tuple[int, ...], dtype: np.dtype, finite: bool = True
) -> np.ndarray:
    """Validate the upstream gradient: same shape as the output, cast to its dtype."""
    dout = as_float_array("dout", dout, dtype, finite=finite)
    check_shape("dout", dout, shape, "the upstream gradient has one entry per output")
    return dout


@contextmanager
def numeric_guard(what: str) -> Iterator[None]:
    """Turn NumPy overflow / invalid / divide-by-zero into a ValueError that says `what` failed.

    Underflow is allowed: a tiny deviation that rounds to 0 is harmless. Anything else would
    silently produce inf or NaN, which the app must never show as if it were an answer.
    """
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        try:
            yield
        except FloatingPointError as err:
            raise ValueError(
                f"{what} is not representable in floating point ({err}); the numbers are too "
                "large or a variance is too close to 0. Rescale the input, use float64, or "
                "raise eps."
            ) from None
