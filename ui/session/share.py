"""Shareable links: the whole view in the URL's query string, read back with strict checks.

A link carries the sidebar controls, the upstream-gradient choice, the stepper's step, the
chosen vector, the gradient check's bug, the Jacobian's three-paths toggle, presenter and quiz
modes, the layer's affine and per-sequence options, the derivation check's quantity and
formula, hide flags, and each array edited by hand while it is small (left_out says which
edits a link cannot carry). Anything that does not parse or is out of range falls back to its
default and is reported, so a tampered link never breaks the app.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any
from urllib.parse import urlencode, urlsplit

import numpy as np
import streamlit as st

from ln_core.bugs import Bug
from ln_core.derivation import TARGETS
from teaching.inputs import AFFINE, PER
from teaching.presets import PRESETS, Example, make_example
from teaching.quiz import PAGE_QUESTIONS
from teaching.steps import N_STEPS
from ui.entry.limits import LINK_FORMULA_CHARS, LINK_MAX_CELLS, LINK_MAX_ENTRIES, SIDEBAR
from ui.entry.literal import literal
from ui.entry.numbers import parse_eps, parse_number, parse_whole
from ui.session import address, state
from ui.session.errors import listed

ARRAYS = ("x", "gamma", "beta", "target", "dout_edited")
# The arrays only one upstream kind uses, and that kind.
UPSTREAM_ARRAYS = {"target": "loss", "dout_edited": "edited"}
# How the Inputs page names each array, for the student told that a link leaves it out.
ARRAY_NAMES = {
    "x": "x",
    "gamma": "gamma",
    "beta": "beta",
    "target": "the loss's target",
    "dout_edited": "the hand-edited dout",
}
# The pages a link can hide or mark checked, by URL path, with the titles app.py gives them (a
# test compares). Not the Overview, where every lesson starts, nor the instructor's Class page:
# neither is a stop of the lesson (ui/lesson/guide.py), which every hidden page must be.
LESSON_PAGES = {
    "inputs": "Inputs",
    "stepper": "Stepper",
    "jacobian": "Jacobian",
    "gradcheck": "Gradient check",
    "audit": "Derivation audit",
    "derive": "Check your derivation",
    "residual": "Residual block",
    "batchnorm": "LayerNorm vs BatchNorm",
    "export": "Export and share",
}
HIDEABLE = ("controls", *LESSON_PAGES)
# Answers already shown: the stepper's steps and the pages' questions (revealed), and the
# pages whose predict-then-check answer was asked for (guide_checked), by their URL path.
REVEALABLE = tuple(str(n) for n in range(1, N_STEPS + 1)) + tuple(PAGE_QUESTIONS)


def _whole(low: int, high: int) -> Callable[[str], int]:
    return partial(parse_whole, low=low, high=high)


def _choice(options: Any) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return text

    return parse


def _formula(text: str) -> str:
    """A typed formula as a link carries it: short, printable, one line. Whether it reads as
    a formula is the page's to say, as for a typed one."""
    if len(text) > LINK_FORMULA_CHARS:
        raise ValueError(f"is {len(text)} characters long; a link may carry {LINK_FORMULA_CHARS}")
    if not text.isprintable():
        raise ValueError("holds characters that are not printable")
    return text


def _flag(text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError("must be 0 or 1")
    return text == "1"


# query key -> (state key, parser). Controls first: they decide the shape the arrays must have.
SCALARS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "preset": ("preset", _choice(PRESETS)),
    "shape": ("shape_kind", _choice(state.SHAPE_KINDS)),
    **{k: (k, _whole(SIDEBAR[k].low, SIDEBAR[k].high)) for k in ("d", "n", "b", "l", "seed")},
    "eps": ("eps", parse_eps),
    "dtype": ("dtype", _choice(state.DTYPES)),
    "upstream": ("upstream", _choice(state.UPSTREAM_KINDS)),
    "onehot": ("one_hot_index", _whole(0, SIDEBAR["d"].high - 1)),
    "step": ("step", _whole(1, N_STEPS)),
    "vb": ("view_b", _whole(0, SIDEBAR["n"].high - 1)),
    "vt": ("view_t", _whole(0, SIDEBAR["l"].high - 1)),
    "norm": ("norm_kind", _choice(("layer", "batch", "rms"))),
    "presenter": ("presenter", _flag),
    "quiz": ("quiz", _flag),
    "paths": ("jacobian_paths", _flag),
    "bug": ("bug", _choice(["none", *(bug.value for bug in Bug)])),
    "affine": ("affine", _choice(AFFINE)),
    "quantity": ("derive_target", _choice(TARGETS)),
    "formula": ("derive_formula", _formula),
    "feps": ("derive_eps", _flag),
    "fscalar": ("derive_scalar", _flag),
    "per": ("per", _choice(PER)),
}


@dataclass(frozen=True)
class LinkState:
    """What a link asks for: state values, arrays, hidden items, and what was rejected."""

    values: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    hidden: frozenset[str] = frozenset()
    revealed: frozenset[int | str] = frozenset()
    checked: frozenset[str] = frozenset()
    problems: list[str] = field(default_factory=list)


def _parse_array(text: str) -> np.ndarray:
    cells = text.split(",")
    if len(cells) > LINK_MAX_CELLS:
        raise ValueError(f"holds {len(cells)} numbers; a link may carry {LINK_MAX_ENTRIES}")
    values = []
    for position, cell in enumerate(cells, start=1):
        try:
            values.append(parse_number(cell))
        except ValueError as err:
            raise ValueError(f"number {position} {err}") from None
    return np.array(values)


def parse(params: Mapping[str, str]) -> LinkState:
    """Read query parameters; every rejected one is named in `problems` and left out."""
    values: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    problems: list[str] = []
    for key, (state_key, parser) in SCALARS.items():
        if key in params:
            try:
                values[state_key] = parser(params[key])
            except ValueError as err:
                problems.append(f"{key}={literal(params[key])} {err}")
    for name in ARRAYS:
        if name in params:
            try:
                arrays[name] = _parse_array(params[name])
            except ValueError as err:
                problems.append(f"{name} {err}")
    hidden = _names(params.get("hide", ""), HIDEABLE, "hide", "page or control", problems)
    revealed = _names(params.get("rev", ""), REVEALABLE, "rev", "step or question", problems)
    checked = _names(
        params.get("checked", ""), ("home", *LESSON_PAGES), "checked", "page", problems
    )
    return LinkState(
        values,
        arrays,
        frozenset(hidden),
        frozenset(int(n) if n.isdigit() else n for n in revealed),
        frozenset("" if n == "home" else n for n in checked),
        problems,
    )


def _names(text: str, known: Any, key: str, kind: str, problems: list[str]) -> list[str]:
    """The comma-separated names in `text` that are `known`; the others become problems."""
    found = []
    for item in filter(None, text.split(",")):
        if item in known:
            found.append(item)
        else:
            problems.append(f"{key}={literal(item)} names no {kind}")
    return found


# Link values that pick one entry of an axis of x: state key -> (query key, what an entry
# of that axis is). Whether they fit is only known once the shape is.
INDEXES = {
    "one_hot_index": ("onehot", "output"),
    "view_b": ("vb", "row (or batch element)"),
    "view_t": ("vt", "token"),
}
SHAPE_KEYS = {"shape_kind": "shape", "d": "d", "n": "n", "b": "b", "l": "l"}


def _index_sizes(shape: tuple[int, ...]) -> dict[str, int]:
    """How many entries each INDEXES key may choose from in x of `shape`."""
    return {
        "one_hot_index": shape[-1],
        "view_b": shape[0] if len(shape) >= 2 else 1,
        "view_t": shape[1] if len(shape) == 3 else 1,
    }


def apply(link: LinkState, session: Any) -> list[str]:
    """Write a parsed link into the session state; returns problems found while applying.

    Arrays only apply when they fit the shape the link's controls give; the others keep the
    preset's numbers, and the edited upstream kind without its dout falls back to the random
    one. A chosen entry past the end of its axis is refused, not moved.
    """
    problems = []
    session.update({k: v for k, v in link.values.items() if k not in INDEXES})
    state.regenerate()
    shape = session["x"].shape
    # A hand-written preset keeps its own shape; the sidebar must say so, and so must we.
    state.show_shape(shape)
    overridden = [
        f"{SHAPE_KEYS[k]}={link.values[k]}"
        for k in SHAPE_KEYS
        if k in link.values and session[k] != link.values[k]
    ]
    if overridden:
        problems.append(
            f"{', '.join(overridden)} not used: the preset {literal(session['preset'])} has "
            f"its own shape {' x '.join(map(str, shape))}"
        )
    # regenerate() resets the chosen entries; the link's choice wins when it exists.
    for key, size in _index_sizes(shape).items():
        if key not in link.values:
            continue
        if link.values[key] < size:
            session[key] = link.values[key]
        else:
            query, what = INDEXES[key]
            problems.append(
                f"{query}={link.values[key]} asks for {what} {link.values[key]}, but x of shape "
                f"{' x '.join(map(str, shape))} has {size} (numbered from 0); 0 is used"
            )
    expected = {
        "x": shape,
        "gamma": shape[-1:],
        "beta": shape[-1:],
        "target": shape,
        "dout_edited": shape,
    }
    received = set()
    for name, flat in link.arrays.items():
        if flat.size != int(np.prod(expected[name])):
            problems.append(
                f"{name} has {flat.size} numbers but the shape needs "
                f"{int(np.prod(expected[name]))}; kept the preset's values"
            )
            continue
        session[name] = flat.reshape(expected[name])
        received.add(name)
    # The edited kind without its numbers would show the seeded dout under its name.
    if session["upstream"] == "edited" and "dout_edited" not in received:
        problems.append(
            "upstream=edited needs the hand-edited dout, which this link does not carry (a link "
            f"carries arrays of at most {LINK_MAX_ENTRIES} numbers); the seeded random dout is used"
        )
        session["upstream"] = "random"
    session["hidden"] = link.hidden
    # After regenerate(), which forgets the answers shown for the numbers it replaces.
    session["revealed"] = link.revealed
    session["guide_checked"] = link.checked
    state.bump_editors()
    return problems


def encode(session: Any) -> dict[str, str]:
    """The query parameters that reproduce this session's view."""
    params = {key: _format(session[state_key]) for key, (state_key, _) in SCALARS.items()}
    # Each array on its own: a large x must not keep its small gamma and beta out of the link.
    for name, array in _edited(session).items():
        if array.size <= LINK_MAX_ENTRIES:
            params[name] = _cells(array)
    if session.get("hidden"):
        params["hide"] = ",".join(sorted(session["hidden"]))
    if session.get("revealed"):
        params["rev"] = ",".join(sorted(str(n) for n in session["revealed"]))
    if session.get("guide_checked"):
        params["checked"] = ",".join(sorted(n or "home" for n in session["guide_checked"]))
    return params


def left_out(session: Any) -> str | None:
    """What this view's link cannot carry, said for the student who shares it, or None."""
    large = {name: a.size for name, a in _edited(session).items() if a.size > LINK_MAX_ENTRIES}
    if not large:
        return None
    edits = [f"{ARRAY_NAMES[name]} ({size} numbers)" for name, size in large.items()]
    listing = f"{', '.join(edits[:-1])} and {edits[-1]}" if len(edits) > 1 else edits[0]
    return (
        f"This link leaves out your edits to {listing}: a link carries an array only while it "
        f"has at most {LINK_MAX_ENTRIES} numbers, so whoever opens it sees the preset's or the "
        "seeded numbers there instead. The downloads on the Export page keep every edit."
    )


def _edited(session: Any) -> dict[str, np.ndarray]:
    """The arrays in use whose numbers a fresh session opened on the link's controls would not
    make: hand edits, and the hand-edited dout whatever its numbers (it is the view's own)."""
    shape, seed = state.shape(session), session["seed"]
    example = _example(session["preset"], shape, seed)
    edited = {}
    for name in ARRAYS:
        if not _in_use(name, session):
            continue
        if name == "dout_edited":
            edited[name] = session[name]
            continue
        fresh = _seeded_target(shape, seed) if name == "target" else getattr(example, name)
        if not np.array_equal(session[name], fresh):
            edited[name] = session[name]
    return edited


# The link is encoded two or three times per rerun (app.py, a fragment, a download's link); the
# numbers it is compared with depend on these values only. Read, never changed.
@lru_cache(maxsize=32)
def _example(preset: str, shape: tuple[int, ...], seed: int) -> Example:
    return make_example(preset, shape, seed)


@lru_cache(maxsize=8)
def _seeded_target(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return state.seeded_dout_and_target(shape, seed)[1]


def _in_use(name: str, session: Any) -> bool:
    """x, gamma and beta always; target and the hand-edited dout only for the upstream kind
    that uses them."""
    return UPSTREAM_ARRAYS.get(name, session["upstream"]) == session["upstream"]


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def load_link_once() -> None:
    """On a session's first run, take the view from the URL's query parameters."""
    session = st.session_state
    if session.get("link_loaded"):
        return
    session["link_loaded"] = True
    given = {key: st.query_params.get_all(key) for key in st.query_params}
    if not given:
        return
    # A key given twice is ambiguous: neither value is taken over the other.
    repeated = [
        f"{key} is given {len(values)} times ({', '.join(literal(v) for v in values[:3])}); "
        "a link names each once, so none was used"
        for key, values in given.items()
        if len(values) > 1
    ]
    params = {key: values[0] for key, values in given.items() if len(values) == 1}
    link = parse(params)
    session["link_problems"] = repeated + link.problems + apply(link, session)


def _key_of(problem: str) -> str:
    """The link key a problem is about: every problem starts with it (a key of the link's own
    set, so it needs no quoting)."""
    return re.split(r"[= ]", problem, maxsplit=1)[0]


def show_link_problems() -> None:
    """Say which parts of the link were ignored, until the reader dismisses it."""
    problems = st.session_state["link_problems"]
    if not problems:
        return
    st.warning(
        "Parts of this link were not usable, so their defaults are shown instead:\n\n"
        + listed(problems, named=_key_of),
        icon=":material/link_off:",
    )
    st.button("Dismiss", on_click=lambda: st.session_state.update(link_problems=()))


def _encoded_view() -> dict[str, str]:
    """encode() of this session, read in one pass: each read of st.session_state costs about
    9 µs, a copy of all of it as much as 11 reads, and encode reads about 40 keys."""
    return encode(st.session_state.to_dict())


def write_link() -> dict[str, str]:
    """Keep the URL's query string equal to the current view (written before the page runs);
    returns the view's query parameters (encode's), for what else needs them before the page
    changes anything."""
    params = _encoded_view()
    # Most reruns leave the view as it was: rewriting the same query string sends a message
    # for nothing. Compared key by key with every value, so a key given twice is rewritten.
    if {key: st.query_params.get_all(key) for key in st.query_params} != {
        key: [value] for key, value in params.items()
    }:
        st.query_params.from_dict(params)
    return params


def current_link(url_path: str | None = None, view: dict[str, str] | None = None) -> str:
    """The full link to this view at the address a class can open: this page, or the page
    `url_path` ("" for the Overview) with this session's state (`view`: its query parameters
    as write_link returned them, if nothing has changed since)."""
    path = urlsplit(st.context.url or "").path if url_path is None else f"/{url_path}"
    params = _encoded_view() if view is None else view
    return f"{address.current().base}{path}?{urlencode(params)}"


def link_warning() -> str | None:
    """Why students cannot open this server's links, or None."""
    return address.current().warning


def input_link(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float,
    url_path: str = "stepper",
) -> str:
    """A link that opens the page `url_path` on these inputs, for a student to redo them by
    hand: x and dout (V, D) as rows with dout edited by hand, gamma and beta (D,), eps, in
    float64. Read back by parse and apply like any link; the arrays must fit a link
    (LINK_MAX_ENTRIES numbers each)."""
    free = next(name for name, preset in PRESETS.items() if not preset.fixed)
    params = {
        "preset": free,
        "shape": "rows",
        "n": str(x.shape[0]),
        "d": str(x.shape[1]),
        "eps": repr(float(eps)),
        "dtype": "float64",
        "upstream": "edited",
        "x": _cells(x),
        "gamma": _cells(gamma),
        "beta": _cells(beta),
        "dout_edited": _cells(dout),
    }
    return f"{address.current().base}/{url_path}?{urlencode(params)}"


def _cells(array: np.ndarray) -> str:
    return ",".join(repr(float(v)) for v in np.ravel(array))
