"""Input checks that turn every kind of bad input into one ValueError a student can read.

Everything public in ln_core funnels its arguments through here, so the rest of the package may
assume finite float arrays of matching shapes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

# Below this float64 keeps fewer digits (subnormal numbers), and below about 5e-324 it keeps
# none: the number stored would not be the number written.
SMALLEST = sys.float_info.min

T = TypeVar("T")


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
        # PyTorch returns an empty result for (0, D); here every page needs numbers to show,
        # and an empty input is always a slip, so it is named rather than passed through.
        raise ValueError(
            f"{name} is empty (shape {array.shape}); it needs at least one number. "
            "There is nothing to normalize."
        )
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


def too_small(text: str, number: float) -> bool:
    """True if `number`, read with float() from the decimal `text` (digits 0-9), is not the
    non-zero number written there: float64 stored it with fewer digits, or as 0."""
    if number == 0:
        # 1e-400 reads as 0 like 0e5 does: only the digits before the exponent tell them apart.
        return re.search("[1-9]", re.split("[eE]", text)[0]) is not None
    return abs(number) < SMALLEST


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


def check_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    """Return `axis` (one axis or several) as a sorted tuple of negative indices.

    Negative, so a stacked leading axis never shifts them. (-1,) normalizes each vector over its
    features; (-2, -1) normalizes each (L, D) block, like torch.nn.LayerNorm((L, D)); (0,) is
    BatchNorm's view (each feature over the batch).
    """
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if not axes:
        raise ValueError("axis must name at least one axis to normalize over.")
    checked = []
    for one in axes:
        if isinstance(one, bool) or not isinstance(one, (int, np.integer)):
            raise ValueError(
                f"axis must be an integer, got {axis!r} (or a tuple of integers for several)."
            )
        if not -ndim <= one < ndim:
            raise ValueError(
                f"axis {one} is out of range for an input with {ndim} dimension(s); "
                f"use an axis from {-ndim} to {ndim - 1}."
            )
        checked.append(int(one) - ndim if one >= 0 else int(one))
    if len(set(checked)) != len(checked):
        raise ValueError(f"axis {axis!r} names the same axis twice.")
    return tuple(sorted(checked))


def resolve_axis(axis: Any, x: np.ndarray, gamma: Any = None, beta: Any = None) -> tuple[int, ...]:
    """`check_axis`, where axis=None follows gamma's (or beta's) shape, as in PyTorch.

    torch.nn.LayerNorm(normalized_shape) normalizes over the last len(normalized_shape) axes,
    and its weight has that shape: a gamma of shape x.shape[-k:] implies the last k axes. Any
    other gamma (or none) implies the last axis; check_params then names a mismatch.
    """
    if axis is None:
        given = [value for value in (gamma, beta) if value is not None]
        k = len(_shape(given[0])) if given else 0
        trailing = 1 <= k <= x.ndim and _shape(given[0]) == x.shape[x.ndim - k :]
        axis = tuple(range(-k, 0)) if trailing else -1
    return check_axis(axis, x.ndim)


def _shape(value: Any) -> tuple[int, ...]:
    """The shape of an array or nested list; () for a ragged one (check_params names it)."""
    try:
        return np.shape(value)
    except (TypeError, ValueError):
        return ()


def param_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of gamma and beta for x of `shape` normalized over `axes` (from check_axis).

    Over the trailing axes (LayerNorm) they cover the normalized block, as in PyTorch: (D,) for
    (-1,), (L, D) for (-2, -1). Over any other axes (BatchNorm's view) they act per feature on
    the last axis: (D,).
    """
    trailing = axes == tuple(range(-len(axes), 0))
    return tuple(shape[len(shape) - len(axes) :]) if trailing else (shape[-1],)


def check_input_x(x: Any, finite: bool = True) -> np.ndarray:
    """Validate x: an array of shape (D,), (N, D) or (B, L, D), finite unless finite=False."""
    array = as_float_array("x", x, finite=finite)
    if array.ndim == 0:
        raise ValueError("x is a single number; it must be a vector (D,) or a batch of vectors.")
    return array


def check_params(
    x: np.ndarray, gamma: Any, beta: Any, axes: tuple[int, ...] = (-1,)
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Validate gamma and beta, each None (skipped) or of `param_shape`, cast to x's dtype."""
    shape = param_shape(x.shape, axes)
    if len(shape) == 1:
        why = f"one entry per feature; x has D = {shape[0]} features on its last axis"
    else:
        why = f"one entry per normalized entry; x is normalized over its last {len(shape)} axes"
    checked = []
    for name, value in (("gamma", gamma), ("beta", beta)):
        if value is not None:
            value = as_float_array(name, value, x.dtype)
            check_shape(name, value, shape, why)
        checked.append(value)
    return checked[0], checked[1]


def check_dout(
    dout: Any, shape: tuple[int, ...], dtype: np.dtype, finite: bool = True
) -> np.ndarray:
    """Validate the upstream gradient: same shape as the output, cast to its dtype."""
    dout = as_float_array("dout", dout, dtype, finite=finite)
    check_shape("dout", dout, shape, "the upstream gradient has one entry per output")
    return dout


def check_representable(
    what: str, values: Iterable[tuple[str, np.ndarray | None]], advice: str
) -> None:
    """Raise ValueError naming the first of `values` with an entry beyond its dtype's range.

    For a pass computed with overflow let through (np.errstate(all="ignore")) so that the
    refusal can name the value that left the range, in the order the pass computes them.
    """
    for name, value in values:
        if value is None:
            continue
        bad = ~np.isfinite(value)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"{what} cannot show {name} at index {index}: it is not representable in "
                f"{value.dtype.name} (beyond about {np.finfo(value.dtype).max:.1e}). {advice}"
            )


@contextmanager
def numeric_guard(what: str) -> Iterator[None]:
    """Turn NumPy overflow / invalid / divide-by-zero into a ValueError that says `what` failed.

    Anything else would silently produce inf or NaN, which the app must never show as if it
    were an answer. Underflow is not refused (a tiny deviation that rounds to 0 is harmless to
    the value), but it is not harmless to a verdict: it is left as the caller set it, so that
    `underflowed` sees it.
    """
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            yield
        except FloatingPointError as err:
            raise ValueError(_not_representable(what, str(err))) from None


def underflowed(compute: Callable[[], T]) -> tuple[T, bool]:
    """compute()'s result, and whether a rounding in it underflowed.

    A rounding underflows when its result is below the dtype's smallest normal number
    (np.finfo(dtype).tiny: 1.2e-38 in float32, 2.2e-308 in float64) and not exact: there
    round-off is an absolute error (up to half of np.finfo(dtype).smallest_subnormal) and no
    longer a small fraction of the value, so no relative bound on round-off holds. Exact results
    raise no flag: 0 * x (a one-hot or zero upstream gradient), a sum of tiny numbers, a
    subnormal times 1. Every error setting but underflow's is left as compute sets it.
    """
    roundings = []
    with np.errstate(under="call", call=lambda *_: roundings.append(1)):
        value = compute()
    return value, bool(roundings)


def checked_product(a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """np.dot(a, b) for finite a and b, refused by its value rather than by floating-point flags.

    OpenBLAS can raise the invalid flag on finite inputs whose product it computes correctly
    (its kernels work on padding and discard it: OpenBLAS #1924, NumPy #24067), and NumPy
    reports the flags after every BLAS call, so inside numeric_guard a correct product would be
    refused at random. Finite inputs give a non-finite product only by overflow, which the
    product's own entries show.
    """
    with np.errstate(all="ignore"):
        product = np.dot(a, b)
    if not np.all(np.isfinite(product)):
        raise ValueError(_not_representable(what, "overflow in a matrix product"))
    return product


def _not_representable(what: str, reason: str) -> str:
    return (
        f"{what} is not representable in floating point ({reason}); the numbers are too large "
        "or a variance is too close to 0. Rescale the input, use float64, or raise eps."
    )
