"""The shared state of LayerNorm Lab: its keys, defaults, and how the arrays are (re)built.

Sidebar controls are widgets drawn by app.py on every run, so they keep their values across
pages. The arrays (x, gamma, beta, the upstream gradient and its target) live under plain
session_state keys that only this module writes, because a page's widgets forget their state
when another page is shown.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from ln_core.validation import as_float_array, check_shape
from teaching.presets import PRESETS, make_example
from teaching.upstream import one_hot
from ui import compute
from ui.csv_io import parse_csv
from ui.inputs import Inputs

SHAPE_KINDS = {"vector": "vector (D)", "rows": "rows (N x D)", "tokens": "tokens (B x L x D)"}
UPSTREAM_KINDS = {
    "random": "random (seeded)",
    "ones": "all ones",
    "one_hot": "one-hot at one output",
    "loss": "from the loss 1/2 ||y - target||^2",
    "edited": "edited by hand",
}
DTYPES = ("float64", "float32")
LIMITS = {"d": (1, 1024), "n": (1, 32), "b": (1, 8), "l": (1, 16), "seed": (0, 2**31 - 1)}

# Widget keys drawn in the sidebar, with their defaults.
CONTROLS = {
    "preset": "Random normal",
    "shape_kind": "rows",
    "d": 8,
    "n": 3,
    "b": 2,
    "l": 3,
    "seed": 0,
    "eps": 1e-5,
    "dtype": "float64",
}
# Plain keys owned by this module.
DATA_DEFAULTS = {
    "upstream": "random",
    "one_hot_index": 0,
    "editor_version": 0,
    "step": 1,
    "view_b": 0,
    "view_t": 0,
    "norm_kind": "layer",
    "presenter": False,
    "presenter_sidebar": False,
    "guide_checked": frozenset(),
    "quiz": False,
    "hidden": frozenset(),
    "revealed": frozenset(),
    "link_problems": [],
}



def shape() -> tuple[int, ...]:
    """The shape the sidebar asks for."""
    s = st.session_state
    kind = s["shape_kind"]
    if kind == "vector":
        return (s["d"],)
    if kind == "rows":
        return (s["n"], s["d"])
    return (s["b"], s["l"], s["d"])


def ensure_defaults() -> None:
    """Fill in every key on a session's first run (and keep sidebar widgets alive)."""
    s = st.session_state
    for key, value in {**CONTROLS, **DATA_DEFAULTS}.items():
        if key not in s:
            s[key] = value
        elif key in CONTROLS:
            s[key] = s[key]  # re-assign so a widget hidden on one run keeps its value
    if "x" not in s:
        regenerate()


def regenerate() -> None:
    """Rebuild x, gamma, beta and what depends on them from preset, shape and seed."""
    s = st.session_state
    example = make_example(s["preset"], shape(), s["seed"])
    s["x"], s["gamma"], s["beta"] = example.x, example.gamma, example.beta
    _reset_dependents()


def _reset_dependents() -> None:
    """A new x needs a random dout and a target of its shape, and fresh editors."""
    s = st.session_state
    rng = np.random.default_rng(s["seed"] + 1)
    s["dout_random"] = rng.standard_normal(s["x"].shape)
    s["target"] = rng.standard_normal(s["x"].shape)
    s["dout_edited"] = s["dout_random"]
    s["one_hot_index"] = min(s["one_hot_index"], s["x"].shape[-1] - 1)
    s["view_b"], s["view_t"] = 0, 0
    s["revealed"] = frozenset()
    bump_editors()


def bump_editors() -> None:
    """Give the data editors fresh keys, so they show arrays set from outside them."""
    st.session_state["editor_version"] += 1


def on_preset_change() -> None:
    """Apply the chosen preset's suggested shape and dtype, then rebuild the arrays."""
    s = st.session_state
    preset = PRESETS[s["preset"]]
    if preset.shape is not None:
        show_shape(preset.shape)
    if preset.dtype is not None:
        s["dtype"] = preset.dtype
    regenerate()


def show_shape(dims: tuple[int, ...]) -> None:
    """Set the sidebar's shape controls to `dims` (only before the sidebar is drawn)."""
    s = st.session_state
    s["shape_kind"] = {1: "vector", 2: "rows", 3: "tokens"}[len(dims)]
    keys = {1: ("d",), 2: ("n", "d"), 3: ("b", "l", "d")}[len(dims)]
    for key, value in zip(keys, dims, strict=True):
        s[key] = value


def on_shape_change() -> None:
    """A hand-written preset cannot take another shape: fall back to random numbers."""
    s = st.session_state
    if PRESETS[s["preset"]].fixed and shape() != make_example(s["preset"], shape(), 0).x.shape:
        s["preset"] = "Random normal"
    regenerate()


def set_array(name: str, value: np.ndarray) -> None:
    """Store an edited array after checking it is finite and keeps its shape.

    Raises ValueError (and leaves the state untouched) otherwise.
    """
    s = st.session_state
    array = as_float_array(name, value, np.dtype(np.float64))
    check_shape(name, array, s[name].shape, "edits keep the current shape")
    s[name] = array


def replace_x(value: np.ndarray) -> None:
    """Replace x by a vector or table of rows (from a CSV); gamma and beta follow its D.

    Raises ValueError (and leaves the state untouched) if the array is not usable.
    """
    s = st.session_state
    x = as_float_array("x", value, np.dtype(np.float64))
    if x.ndim not in (1, 2):
        raise ValueError(f"A CSV gives a vector or a table of rows, not shape {x.shape}.")
    if x.shape[-1] != s["gamma"].shape[0]:
        fresh = make_example("Random normal", x.shape, s["seed"])
        s["gamma"], s["beta"] = fresh.gamma, fresh.beta
    s["x"] = x
    show_shape(x.shape)
    _reset_dependents()


def load_csv(data: str | bytes) -> None:
    """Button callback: replace x by a parsed CSV, or keep the error for the page to show."""
    try:
        replace_x(parse_csv(data))
    except ValueError as err:
        st.session_state["csv_error"] = str(err)


def upstream_gradient() -> np.ndarray:
    """dout for the chosen upstream kind, float64, x's shape. Raises ValueError when undefined."""
    s = st.session_state
    kind = s["upstream"]
    if kind == "random":
        return s["dout_random"]
    if kind == "ones":
        return np.ones_like(s["x"])
    if kind == "one_hot":
        return one_hot(s["x"].shape, s["one_hot_index"])
    if kind == "loss":
        return compute.loss_gradient(s["x"], s["gamma"], s["beta"], float(s["eps"]), s["target"])
    return s["dout_edited"]


def inputs(dtype_name: str | None = None) -> Inputs:
    """The current inputs, cast once to the chosen dtype (or to `dtype_name`).

    Raises ValueError when they are undefined.
    """
    s = st.session_state
    name = dtype_name or s["dtype"]
    target = np.dtype(name)
    # as_float_array names a value too large for float32 instead of letting it become inf.
    return Inputs(
        x=as_float_array("x", s["x"], target),
        gamma=as_float_array("gamma", s["gamma"], target),
        beta=as_float_array("beta", s["beta"], target),
        dout=as_float_array("dout", upstream_gradient(), target),
        eps=float(s["eps"]),
        dtype=name,
    )


def check() -> None:
    """Raise ValueError if the current inputs do not define a LayerNorm output."""
    compute.forward(inputs())


def bound(key: str, on_change: Callable[[], None] | None = None, widget: str = "") -> dict:
    """Keyword arguments that tie a page widget to the plain state key `key`.

    A page's widget loses its value when another page is shown, so the plain key is the
    truth: it is copied into the widget before it is drawn and back when the user changes it.
    `widget` tells apart several widgets bound to the same key.
    """
    widget_key = f"w_{key}_{widget}"
    st.session_state[widget_key] = st.session_state[key]

    def copy_back() -> None:
        st.session_state[key] = st.session_state[widget_key]
        if on_change is not None:
            on_change()

    return {"key": widget_key, "on_change": copy_back}
