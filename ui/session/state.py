"""The shared state of LayerNorm Lab: every session key, its default, and how it persists.

SCHEMA names every key a session holds (FAMILIES the keys made per item) and how each one
lives on across reruns and page switches:

- a sidebar control is drawn by app.py on every run; a page widget only while its page is
  shown. Both follow one rule: the plain state key is the truth and the widget is a view of
  it, made by bound(), so a value survives pages that do not draw its widget (and a link
  that hides the sidebar);
- a widget-owned key is the widget's own value, needed only while its page is shown;
- a derived key is written only by this module's functions (the arrays and what follows
  from them) or by the link and CSV loaders through them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Any

import numpy as np
import streamlit as st

from ln_core.audit import DOCUMENTS
from ln_core.bugs import Bug
from ln_core.derivation import TARGETS
from ln_core.validation import as_float_array, check_shape
from teaching.inputs import AFFINE, PER, Inputs
from teaching.presets import PRESETS, make_example
from teaching.steps import N_STEPS
from teaching.upstream import one_hot
from ui.entry.csv_io import parse_csv
from ui.entry.limits import SIDEBAR
from ui.entry.literal import literal
from ui.entry.numbers import parse_eps, parse_whole
from ui.server import compute
from ui.streamlit_private import ThreadState, get_script_run_ctx

SHAPE_KINDS = {"vector": "vector (D)", "rows": "rows (vectors x D)", "tokens": "tokens (B x L x D)"}
UPSTREAM_KINDS = {
    "random": "random (seeded)",
    "ones": "all ones",
    "one_hot": "one-hot at one output",
    "loss": "from the loss 1/2 ||y - target||^2",
    "edited": "edited by hand",
}
DTYPES = ("float64", "float32")
NORM_KINDS = ("layer", "batch", "rms")


def one_of(options: Collection[Any]) -> Callable[[Any], Any]:
    """A check that a value is one of `options`, of the same type (a widget message may send
    1 for "1", or a list); raises ValueError otherwise."""

    def check(value: Any) -> Any:
        if not any(type(value) is type(o) and value == o for o in options):
            raise ValueError("is not one of the choices offered")
        return value

    return check


def whole(low: int, high: int) -> Callable[[Any], int]:
    """A check that a value is a whole number from `low` to `high` (text is read as typed)."""
    return partial(parse_whole, low=low, high=high)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("is not text")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("is not on or off")
    return value


class Persist(Enum):
    """How a session key keeps its value."""

    SIDEBAR = "sidebar control, drawn by app.py through bound()"
    PAGE = "page widget, drawn by its page through bound()"
    WIDGET = "widget-owned, kept only while its page is shown"
    DERIVED = "derived, written only through this module"


@dataclass(frozen=True)
class Key:
    """One session key: its first value (None: made on demand), how it persists, and for a
    key a widget writes, the check every value must pass (it returns the value to store, or
    raises ValueError saying why not)."""

    default: Any
    persist: Persist
    meaning: str
    valid: Callable[[Any], Any] | None = None


_S, _P, _W, _D = Persist.SIDEBAR, Persist.PAGE, Persist.WIDGET, Persist.DERIVED
SCHEMA: dict[str, Key] = {
    "preset": Key("Random normal", _S, "the example the arrays are built from", one_of(PRESETS)),
    "shape_kind": Key("rows", _S, "vector, rows or tokens", one_of(SHAPE_KINDS)),
    **{
        key: Key(default, _S, meaning, whole(SIDEBAR[key].low, SIDEBAR[key].high))
        for key, default, meaning in (
            ("d", 8, "D, features per vector"),
            ("n", 3, "N, vectors in a table of rows"),
            ("b", 2, "B, sequences in a batch of tokens"),
            ("l", 3, "L, tokens per sequence"),
            ("seed", 0, "the seed of every random array"),
        )
    },
    "eps": Key(1e-5, _S, "added to the variance", parse_eps),
    "dtype": Key("float64", _S, "the dtype every page computes in", one_of(DTYPES)),
    "presenter": Key(False, _S, "larger type for a projector", _flag),
    "presenter_sidebar": Key(False, _P, "the sidebar kept open in presenter mode", _flag),
    "upstream": Key(
        "random", _P, "where dout comes from (a key of UPSTREAM_KINDS)", one_of(UPSTREAM_KINDS)
    ),
    "one_hot_index": Key(
        0, _P, "the output a one-hot dout puts its 1 on", whole(0, SIDEBAR["d"].high - 1)
    ),
    "step": Key(1, _P, "the stepper's step, 1 to 20", one_of(range(1, N_STEPS + 1))),
    "step_browser_sent": Key(
        None, _D, "the step last drawn into the Stepper's hidden control (pages/stepper/browser.py)"
    ),
    "quiz": Key(False, _P, "predict before reveal on the stepper", _flag),
    "view_b": Key(0, _P, "the chosen row, or batch element", whole(0, SIDEBAR["n"].high - 1)),
    "view_t": Key(0, _P, "the chosen token of a batch element", whole(0, SIDEBAR["l"].high - 1)),
    "norm_kind": Key("layer", _P, "layer, batch or rms on the comparison page", one_of(NORM_KINDS)),
    "bug": Key(
        "none",
        _P,
        "the gradient check's injected bug: a Bug's value, or none",
        one_of(["none", *(bug.value for bug in Bug)]),
    ),
    "jacobian_paths": Key(False, _P, "the Jacobian page shows J's three paths", _flag),
    "audit_document": Key(
        "000", _P, "the audit document whose formulas are unfolded", one_of(DOCUMENTS)
    ),
    "audit_filter": Key(
        "all",
        _P,
        "the audit's verdict filter: all, wrong or cannot decide",
        one_of(("all", "wrong", "cannot decide")),
    ),
    "audit_picked": Key(None, _D, "the audit formula last picked in the summary: (document, step)"),
    "audit_opened": Key(frozenset(), _D, "the audit formulas unfolded: (document, step) pairs"),
    "derive_target": Key(
        "dx", _P, "the gradient a typed formula claims (a key of TARGETS)", one_of(TARGETS)
    ),
    "derive_formula": Key(
        "", _P, "the formula typed on Check your derivation (empty until one is typed)", _text
    ),
    "derive_eps": Key(True, _P, "the typed derivation has ε (else it is judged at ε = 0)", _flag),
    "derive_scalar": Key(False, _P, "the typed derivation has one scalar γ and β", _flag),
    "affine": Key(
        "both",
        _P,
        "which of gamma and beta the layer applies (teaching.inputs.AFFINE)",
        one_of(AFFINE),
    ),
    "per": Key("token", _P, "a token batch normalized per token or per sequence", one_of(PER)),
    "guide_check": Key(None, _W, "the guide's button that shows a page's answer"),
    "reconnect_rerun": Key(None, _W, "the hidden button a reconnected tab clicks for a full run"),
    "csv_text": Key(None, _W, "the pasted CSV"),
    "csv_file": Key(None, _W, "the uploaded CSV"),
    "x": Key(None, _D, "x: (D,), (N, D) or (B, L, D), float64"),
    "gamma": Key(None, _D, "gamma: (D,), float64"),
    "beta": Key(None, _D, "beta: (D,), float64"),
    "dout_random": Key(None, _D, "the seeded random dout, x's shape"),
    "target": Key(None, _D, "the loss's target y*, x's shape"),
    "dout_edited": Key(None, _D, "dout edited by hand, x's shape"),
    "editor_version": Key(0, _D, "part of every editor's key: a new one shows new arrays"),
    "revealed": Key(frozenset(), _D, "questions whose answer is shown: steps and page names"),
    "hidden": Key(frozenset(), _D, "pages and controls a link hides"),
    "view_page": Key("", _D, "the last page shown other than Export: the page its link opens"),
    "guide_checked": Key(frozenset(), _D, "pages whose predict-then-check answer is shown"),
    "defaults_given": Key(None, _D, "every default above is in this session (ensure_defaults)"),
    "link_loaded": Key(False, _D, "the URL has been read into this session"),
    "reconnect_seen": Key(None, _D, "the browser's saved view was checked on the first run"),
    "link_problems": Key((), _D, "what the link asked for that could not be used"),
    "csv_error": Key(None, _D, "why the last CSV was refused, shown once"),
    "csv_notice": Key(None, _D, "what the last CSV's x could not keep, shown once"),
    "field_problems": Key({}, _D, "sidebar fields whose typed text was refused, by key"),
    "browser_id": Key(None, _D, "this browser's opaque id in live classes (ui/live/connect.py)"),
    "cookies": Key({}, _D, "the cookies this session keeps in its browser, by name"),
    "live": Key(None, _D, "the live class this browser is in (ui/live/membership.py)"),
    "live_restored": Key(False, _D, "the join link and class cookies were read on the first run"),
    "clicks_acted": Key(
        {}, _D, "the drawing each button's click last acted on (ui/session/clicks.py)"
    ),
    "live_problem": Key("", _D, "why the last class action failed, shown until dismissed"),
}
# Keys made per item, by prefix.
FAMILIES: dict[str, Key] = {
    "w_": Key(None, _W, "a widget's view of a sidebar or page key (see bound)"),
    "stepper_walk": Key(None, _W, "the Stepper's browser part (pages/stepper/browser.py)"),
    "editor_": Key(None, _W, "a data editor's edits: editor_<array>_<editor_version>"),
    "phone_editor_": Key(None, _W, "the same array's editor on a phone: phone_editor_<...>"),
    "audit_entry_": Key(None, _W, "one audit formula's fold: audit_entry_<its place>"),
    "audit_pick_": Key(
        None, _W, "the audit summary's selected row: audit_pick_<wide or phone>_<its rows>"
    ),
    "jupyter_": Key(None, _W, "a page's folded notebook downloads: jupyter_<page>"),
    "guess_": Key(None, _W, "a prediction for one question: guess_<step or question name>"),
    "reveal_": Key(None, _W, "the Reveal button of one question: reveal_<step or name>"),
    "zoom_": Key(None, _W, "a large matrix's zoom window: zoom_<title>"),
    "builder_": Key(None, _W, "the Export page's link builder for a class: builder_<choice>"),
    "FormSubmitter:": Key(None, _W, "a form's submit button, keyed by Streamlit itself"),
    "live_": Key(None, _W, "a live class control: the bar's buttons, a vote, the Class page's"),
}
SIDEBAR_KEYS = tuple(k for k, v in SCHEMA.items() if v.persist is Persist.SIDEBAR)


def registered(key: str) -> bool:
    """True if `key` is in SCHEMA or made by one of FAMILIES."""
    return key in SCHEMA or any(key.startswith(prefix) for prefix in FAMILIES)


def shape(session: Mapping[str, Any] | None = None) -> tuple[int, ...]:
    """The shape the sidebar asks for (in `session`, by default this session's state)."""
    s = st.session_state if session is None else session
    kind = s["shape_kind"]
    if kind == "vector":
        return (s["d"],)
    if kind == "rows":
        return (s["n"], s["d"])
    return (s["b"], s["l"], s["d"])


def ensure_defaults() -> None:
    """Give every schema key its default on a session's first run, and build the arrays."""
    s = st.session_state
    # Schema keys are never deleted (only widget-owned ones are): once given, the defaults stay,
    # and every later run skips a lookup per key (each costs as much as drawing a caption).
    if s.get("defaults_given"):
        return
    for key, spec in SCHEMA.items():
        if key not in s and spec.default is not None:
            s[key] = spec.default
    if "x" not in s:
        regenerate()
    s["defaults_given"] = True


def regenerate() -> None:
    """Rebuild x, gamma, beta and what depends on them from preset, shape and seed."""
    s = st.session_state
    example = make_example(s["preset"], shape(), s["seed"])
    s["x"], s["gamma"], s["beta"] = example.x, example.gamma, example.beta
    _reset_dependents()


def seeded_dout_and_target(shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The seeded random dout and the loss's target for x of `shape`, each of that shape."""
    rng = np.random.default_rng(seed + 1)
    return rng.standard_normal(shape), rng.standard_normal(shape)


def reset_arrays() -> None:
    """The preset's numbers for this shape and seed, the seeded dout and target: every edit
    undone, while the chosen vector, the one-hot output and the revealed answers stay."""
    s = st.session_state
    example = make_example(s["preset"], shape(), s["seed"])
    s["x"], s["gamma"], s["beta"] = example.x, example.gamma, example.beta
    s["dout_random"], s["target"] = seeded_dout_and_target(s["x"].shape, s["seed"])
    s["dout_edited"] = s["dout_random"]
    bump_editors()


def _reset_dependents() -> None:
    """A new x needs a random dout and a target of its shape, and fresh editors."""
    s = st.session_state
    s["dout_random"], s["target"] = seeded_dout_and_target(s["x"].shape, s["seed"])
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


def replace_x(value: np.ndarray) -> str | None:
    """Replace x by a vector or table of rows (from a CSV); gamma and beta follow its D.

    Lines that fill x's current shape are that x again (x.csv writes a batch of tokens as
    B·L lines, one row as one line): it keeps its shape, and dout, target and the chosen
    vector stay, as after an edit of every cell. Any other x starts them afresh. Returns what
    the new x could not keep, for the student, or None. Raises ValueError (and leaves the
    state untouched) if the array is not usable.
    """
    s = st.session_state
    x = as_float_array("x", value, np.dtype(np.float64))
    if x.ndim not in (1, 2):
        raise ValueError(f"A CSV gives a vector or a table of rows, not shape {x.shape}.")
    before = s["x"].shape
    if x.size == s["x"].size and x.shape[-1] == before[-1]:
        s["x"] = x.reshape(before)
        bump_editors()
        return None
    # Everything of x's old shape is replaced; the student is told what, since some of it may
    # have been typed by hand.
    replaced = []
    if x.shape[-1] != s["gamma"].shape[0]:
        fresh = make_example("Random normal", x.shape, s["seed"])
        s["gamma"], s["beta"] = fresh.gamma, fresh.beta
        replaced.append("gamma and beta (one value per feature) are a Random normal example's")
    if s["upstream"] == "edited":
        s["upstream"] = "random"
        replaced.append("your hand-edited dout is the seeded random one")
    elif s["upstream"] == "loss":
        replaced.append("the loss's target is the seeded one")
    s["x"] = x
    show_shape(x.shape)
    _reset_dependents()
    if not replaced:
        return None
    return (
        f"x now has shape {' x '.join(map(str, x.shape))} instead of "
        f"{' x '.join(map(str, before))}, so what had the old shape could not be kept: "
        f"{'; '.join(replaced)} now."
    )


def load_csv(data: str | bytes) -> None:
    """Button callback: replace x by a parsed CSV, or keep the error for the page to show."""
    try:
        st.session_state["csv_notice"] = replace_x(parse_csv(data))
    except ValueError as err:
        st.session_state["csv_error"] = str(err)


def load_csv_fields() -> None:
    """The CSV form's callback: the pasted text or the uploaded file, whichever is given."""
    s = st.session_state
    uploaded = s.get("csv_file")
    pasted = (s.get("csv_text") or "").strip()
    if uploaded is None and not pasted:
        s["csv_error"] = "Paste CSV into the box or choose a file first."
        return
    # Which of the two the student meant is not known: neither wins without a word.
    if uploaded is not None and pasted:
        s["csv_error"] = (
            f"Both pasted CSV and the file {literal(uploaded.name)} are given, so neither was "
            "used: empty the box or remove the file (the × next to its name), then click again."
        )
        return
    load_csv(uploaded.getvalue() if uploaded is not None else s["csv_text"])


def plain_affine() -> None:
    """Button callback: gamma = 1 and beta = 0 for every feature (the output is normalized_x)."""
    s = st.session_state
    s["gamma"], s["beta"] = np.ones_like(s["gamma"]), np.zeros_like(s["beta"])
    bump_editors()


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
        return compute.loss_gradient(s["x"], s["gamma"], s["beta"], s["eps"], s["target"])
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
        eps=s["eps"],
        dtype=name,
    )


def member_of(key: str, widget_key: str, member: Hashable) -> dict:
    """Keyword arguments that make a fold (an expander) a view of whether `member` is in the
    set held at state key `key`: copied into the widget before it is drawn, and back when the
    student opens or closes it (the rule of `bound`, for one member of a set)."""
    s = st.session_state
    s[widget_key] = member in s[key]

    def copy_back() -> None:
        s[key] = s[key] | {member} if s[widget_key] else s[key] - {member}

    return {"key": widget_key, "on_change": copy_back}


def _stale(home: str) -> bool:
    """Whether a change of a widget drawn in fragment `home` ("" outside every fragment) came
    with a run of other fragments only: the browser sends every widget's value with every run,
    and a value it has not yet replaced by the one a fragment's run sent back is its old copy.
    A student's change of a widget always comes with a run of the widget's own fragment (or of
    the whole app). Measured: the instructor's 1 s publishing timer, on a busy machine, carried
    the Stepper's slider at the step before Next and sent the class back a step for seconds."""
    ctx = get_script_run_ctx()
    running = ctx.fragment_ids_this_run if ctx is not None else None
    return bool(running) and home not in running


def bound(
    key: str,
    on_change: Callable[[], None] | None = None,
    widget: str = "",
    parse: Callable[[Any], Any] | None = None,
    show: Callable[[Any], Any] | None = None,
) -> dict:
    """Keyword arguments that make a widget a view of the state key `key`.

    The one rule for sidebar controls and page widgets alike: the state key is the truth.
    It is copied into the widget (through `show`) before the widget is drawn, and back
    (through `parse`, then the key's schema check) when the user changes it. A value either
    refuses is not stored: a typed number's reason goes to field_problems, shown under its
    field; any other widget's value can only be wrong if the message was built by hand, and
    a toast says so. The widget shows the kept value on the next run. `widget` tells apart
    several widgets bound to the same key.
    """
    s = st.session_state
    widget_key = f"w_{key}_{widget}"
    s[widget_key] = show(s[key]) if show else s[key]
    home = ThreadState.get().fragment_id or ""

    def copy_back() -> None:
        if _stale(home):
            return
        typed = s[widget_key]
        problems = {k: v for k, v in s["field_problems"].items() if k != key}
        check = SCHEMA[key].valid
        try:
            # Text read by the key's own check is read once: its result is not checked again.
            value = parse(typed) if parse is check else check(parse(typed) if parse else typed)
        except ValueError as err:
            if parse is None:
                st.toast(
                    f"A control sent {literal(typed)} for {SCHEMA[key].meaning}, which "
                    f"{err}: not used, it stays {literal(s[key])}.",
                    icon=":material/block:",
                )
                return
            s["field_problems"] = {**problems, key: (literal(typed), str(err))}
            return
        s["field_problems"] = problems
        s[key] = value
        if on_change is not None:
            on_change()

    return {"key": widget_key, "on_change": copy_back}
