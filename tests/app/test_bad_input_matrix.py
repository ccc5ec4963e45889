"""Bad input through every entrance: link parameters, CSV, table cells, sidebar fields and
hand-built data-editor messages.

Each case checks what a student sees: the page renders (no exception, the sidebar is still
there), a message names the problem, no NaN or inf is shown as a result, user text is echoed
literally and briefly, and nothing changed that the student did not ask for. Table cells are
sent as text, exactly as the browser's text cells send them (the real browser typing is in
tests/browser/test_typed_cells.py).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from ln_core.audit import DOCUMENTS
from ui.lesson import guide
from ui.session.share import ARRAYS, SCALARS

LINK_WARNING = "Parts of this link were not usable"
CSV_BUTTON = "Use this CSV for x"
CONSTANT = "Constant vector"
# Markdown that would act (a link, an image, a formula, HTML) unless escaped by a backslash.
ACTIVE_MARKDOWN = re.compile(r"(?<!\\)(\]\(|!\[|\$|<[a-zA-Z/])")
# What Streamlit's Markdown (GFM) links even when escaped: an address, a www. host, an e-mail.
AUTOLINK = re.compile(r"(https?|ftp)://|www\.|[\w.+-]@[\w-]", re.IGNORECASE)
# Addresses a student (or a prank) may type anywhere text is echoed back.
ADDRESSES = ("https://ev.il/login", "www.ev.il/x", "user@ev.il", "[Sign in](https://ev.il)")
NON_FINITE_WORD = re.compile(r"(?<![A-Za-z])(nan|inf|-inf|infinity)(?![A-Za-z])", re.IGNORECASE)
# Blank by design: a formula that is already right has no corrected form.
MAY_BE_BLANK = {"corrected form's error"}


# -- what every case checks --------------------------------------------------------------------


def _shown_numbers_are_finite(lab) -> None:
    for label, value in lab.metrics().items():
        assert not NON_FINITE_WORD.search(value), f"metric {label!r} shows {value!r}"
    for heading in lab.subheaders():
        assert not NON_FINITE_WORD.search(heading), f"heading shows {heading!r}"
    for element in lab.at.main.dataframe:
        frame = element.value
        for column in frame.columns:
            values = frame[column]
            if values.dtype.kind == "f":
                shown = values.to_numpy()
                bad = np.isinf(shown) | (np.isnan(shown) & (column not in MAY_BE_BLANK))
                assert not bad.any(), f"table column {column!r} shows {shown[bad][:3]}"
            elif values.dtype.kind == "O":
                texts = values.astype(str)
                assert not texts.str.fullmatch(NON_FINITE_WORD).any(), f"column {column!r}"
    for chart in lab.charts():
        for trace in chart["data"]:
            # A line drawing may break its path with gaps (NaN); data traces may not.
            gaps_allowed = trace.get("type") == "scatter" and "lines" in trace.get("mode", "")
            for axis in ("x", "y", "z"):
                if axis in trace and trace[axis] is not None:
                    array = lab.spec_array(trace[axis])
                    if array.dtype.kind == "f":
                        bad = np.isinf(array) | (np.isnan(array) & (not gaps_allowed))
                        assert not bad.any(), f"a {trace.get('type')} chart's {axis} holds NaN/inf"


def _messages(lab) -> list[str]:
    """Every error and warning on the page, with Markdown's escaping backslashes and the
    invisible word joiners that keep an address from being linked removed."""
    shown = [e.value for e in lab.at.error] + [w.value for w in lab.at.warning]
    return [m.replace("\\", "").replace("\u2060", "") for m in shown]


def _assert_inert(lab) -> None:
    """No message, caption or Markdown body on the page holds text Markdown would link."""
    bodies = [
        e.value
        for kind in ("error", "warning", "info", "markdown", "caption")
        for e in getattr(lab.at, kind)
    ]
    for body in bodies:
        # GFM finds addresses in the text its backslash escapes leave.
        unescaped = re.sub(r"\\(.)", r"\1", body)
        assert not AUTOLINK.search(unescaped), f"would be auto-linked: {body!r}"


def _assert_safe(lab, *expected: str) -> None:
    """The page rendered, no NaN/inf, and (if given) a message holding each expected phrase."""
    lab.assert_no_exception()
    assert len(lab.at.main.children) > 0, "the page drew nothing"
    _assert_inert(lab)
    _shown_numbers_are_finite(lab)
    if expected:
        messages = _messages(lab)
        assert any(all(p in m for p in expected) for m in messages), (expected, messages)


def _same_value(written: str | None, given: str) -> bool:
    """A link value as the app wrote it equals the one given (numbers compared as numbers)."""
    if written is None:
        return False
    try:
        return [float(v) for v in written.split(",")] == [float(v) for v in given.split(",")]
    except ValueError:
        return written == given


def _sidebar_drawn(lab) -> None:
    assert lab.sidebar("preset").value, "the sidebar is gone"


# -- links: errors in the inputs stop every page cleanly ---------------------------------------

# Pages that compute nothing from the inputs: the sidebar's check gives the message.
NOT_COMPUTING = {"Overview", "Inputs"}
# The residual block normalizes z = x + F(x), which varies even where x does not.
NORMALIZES_Z = NOT_COMPUTING | {"Residual block"}
FAILING_LINKS = {
    "x too large for float32": (
        {"dtype": "float32", "shape": "vector", "d": "4", "x": "1e39,1,2,3"},
        "too large for float32",
        NOT_COMPUTING,
    ),
    "gamma too large for float32": (
        {"dtype": "float32", "shape": "vector", "d": "3", "gamma": "1,3e38,1e300"},
        "too large for float32",
        NOT_COMPUTING,
    ),
    "constant vector, eps 0, dout from the loss": (
        {"preset": CONSTANT, "eps": "0", "upstream": "loss"},
        "zero variance",
        NOT_COMPUTING,
    ),
    "equal entries typed into x, eps 0": (
        {"shape": "vector", "d": "4", "x": "2.5,2.5,2.5,2.5", "eps": "0"},
        "zero variance",
        NORMALIZES_Z,
    ),
    "x whose variance overflows": (
        {"shape": "vector", "d": "4", "x": "1e200,-1e200,1e150,3"},
        "not representable",
        NOT_COMPUTING,
    ),
}


def _visit(lab, page: str):
    """Switch to `page` in the same session; a failure names the page."""
    try:
        return lab.open(page)
    except AssertionError as err:
        raise AssertionError(f"{page}: {err}") from None


@pytest.mark.parametrize("case", list(FAILING_LINKS))
def test_a_link_with_failing_inputs_stops_every_page_with_the_message(open_link, case):
    params, phrase, unaffected = FAILING_LINKS[case]
    lab = open_link(params)
    for page in lab.titles:
        _visit(lab, page)
        _assert_safe(lab, phrase)
        _sidebar_drawn(lab)
        if page == "Stepper" and not lab.errors("main"):
            # An undefined output is said once, under eps in the sidebar: the stepper points
            # there (and shows the steps still defined).
            assert any("sidebar says why" in i.value for i in lab.at.main.info), page
        elif page not in unaffected:
            errors = set(lab.errors("main"))
            assert len(errors) == 1, f"{page}: one message, then the page stops: {errors}"
        # Nothing changed: the page's link still holds what the student's did.
        link = lab.link()
        for key, value in params.items():
            assert _same_value(link.get(key), value), (page, key, link.get(key), value)


# -- links: results that overflow are named, never shown as NaN --------------------------------

HUGE = "1e308"
OVERFLOWING_LINKS = {
    "beta near the float64 limit": {"beta": ",".join([HUGE] * 8)},
    "gamma near the float64 limit": {"gamma": ",".join([HUGE] * 8)},
    "dout near the float64 limit": {
        "upstream": "edited",
        "dout_edited": ",".join([HUGE] * 24),
    },
    "float32 inputs near its limit": {
        "dtype": "float32",
        "beta": ",".join(["3e38"] * 8),
    },
}
OVERFLOW_WORDS = ("overflow", "too large", "not representable")


@pytest.mark.parametrize("case", list(OVERFLOWING_LINKS))
def test_an_overflowing_result_is_named_never_shown_as_nan(open_link, case):
    lab = open_link(OVERFLOWING_LINKS[case])
    for page in lab.titles:
        _visit(lab, page)
        _assert_safe(lab)
        _sidebar_drawn(lab)
        for message in lab.errors("main"):
            assert any(word in message for word in OVERFLOW_WORDS), (page, message)


def test_the_residual_block_names_what_overflowed(open_link):
    lab = open_link(OVERFLOWING_LINKS["beta near the float64 limit"]).open("Residual block")
    _assert_safe(lab, "overflowed", "|beta| = 1e+308")
    assert lab.metrics() == {}, "metrics drawn from overflowed numbers"


# -- links: what a link says is echoed literally, briefly --------------------------------------

HOSTILE_TEXT = {
    "seed": "[Sign in again](https://evil.example/login)",
    "hide": "![t](http://host.example/x.png)",
    "preset": "$\\frac{1}{0}$ and $$x$$",
    "dtype": "<img src=x onerror=alert(1)>",
    "eps": "**1e-3**",
    "step": "`3`",
    "x": "1,2,[a](http://b.example)",
    "upstream": ":red[loss]",
}
# Every key a link may carry, each given one of the addresses in turn.
LINK_KEYS = (*SCALARS, *ARRAYS, "hide")
HOSTILE_LINKS = [
    *HOSTILE_TEXT.items(),
    *((key, ADDRESSES[i % len(ADDRESSES)]) for i, key in enumerate(LINK_KEYS)),
]
# A formula is text a student types: a link carries any short printable one as it is, and the
# page it is typed on says whether it reads as a formula (tests/app/test_derive_page.py).
TYPED_TEXT = {"formula": "Check your derivation"}


@pytest.mark.parametrize(("key", "text"), HOSTILE_LINKS)
def test_link_text_is_echoed_literally(open_link, key, text):
    lab = open_link({key: text})
    _assert_safe(lab)
    if key in TYPED_TEXT:
        lab.open(TYPED_TEXT[key])
        _assert_safe(lab)
        assert lab.link()[key] == text
        return
    (warning,) = [w.value for w in lab.at.warning]
    assert LINK_WARNING in warning
    body = warning.split("\n\n", 1)[1]
    assert not ACTIVE_MARKDOWN.search(body), body
    assert not re.search(r"(?<!\\)[*`:]", body.replace("- ", "", 1)), body
    # What stands in the message reads as the student typed it (escapes aside).
    shown = body.replace("\\", "").replace("\u2060", "")
    assert text.split(",")[-1][:40].replace("\\", "") in shown
    _sidebar_drawn(lab)


@pytest.mark.parametrize("key", ["seed", "hide"])
def test_link_control_characters_are_shown_as_escapes(open_link, key):
    lab = open_link({key: "1\x00\t2"})
    _assert_safe(lab)
    (warning,) = [w.value for w in lab.at.warning]
    assert "\x00" not in warning and "\t" not in warning, "a control character is shown raw"
    # Markdown shows each escaped backslash as one: the student reads 1\x00\t2.
    assert "1\\x00\\t2" in re.sub(r"\\(.)", r"\1", warning.replace("\u2060", "")), warning


@pytest.mark.parametrize("bidi", ["\u202e", "\u202a", "\u2067", "\u2069", "\u200f", "\u061c"])
def test_link_bidi_controls_are_shown_as_escapes_not_reordering_the_sentence(open_link, bidi):
    lab = open_link({"seed": f"1{bidi}2"})
    _assert_safe(lab)
    (warning,) = [w.value for w in lab.at.warning]
    assert bidi not in warning, f"U+{ord(bidi):04X} would reorder the app's own sentence"
    escape = bidi.encode("unicode_escape").decode("ascii")
    assert f"1{escape}2" in re.sub(r"\\(.)", r"\1", warning.replace("\u2060", "")), warning


@pytest.mark.parametrize(
    ("params", "problems"),
    [
        ({"hide": ",".join(f"page{i}" for i in range(5000))}, 5000),
        ({key: "x" * 10_000 for key in ("d", "n", "seed", "eps", "step", "vb", "vt")}, 7),
        ({"preset": "p" * 100_000}, 1),
    ],
    ids=["5000 hidden names", "seven long values", "one 100k value"],
)
def test_a_long_link_gives_a_short_warning(open_link, params, problems):
    lab = open_link(params)
    _assert_safe(lab, LINK_WARNING)
    (warning,) = [w.value for w in lab.at.warning]
    assert len(warning) < 1500, len(warning)
    items = [line for line in warning.splitlines() if line.startswith("- ")]
    assert len(items) <= 7, items
    if problems > 6:
        # the rest counted, each key they are about named once
        assert items[-1].startswith(f"- and {problems - 6} more: "), items[-1]
        assert len(items[-1]) < 200, items[-1]


@pytest.mark.parametrize(
    ("key", "value", "state_key", "kept"),
    [
        ("d", "2.5", "d", 8),
        ("d", "1,5", "d", 8),
        ("n", "1e3", "n", 3),
        ("n", "0", "n", 3),
        ("seed", "-1", "seed", 0),
        ("seed", "1e10", "seed", 0),
        ("eps", "-1e-3", "eps", 1e-5),
        ("eps", "inf", "eps", 1e-5),
        ("eps", "1e400", "eps", 1e-5),
        ("eps", "1e-400", "eps", 1e-5),
        ("eps", "\uff11e-400", "eps", 1e-5),  # a full-width 1
        ("vb", "99", "view_b", 0),
        ("onehot", "5000", "one_hot_index", 0),
        ("presenter", "yes", "presenter", False),
        ("norm", "group", "norm_kind", "layer"),
    ],
)
def test_a_link_value_out_of_range_is_refused_and_the_default_kept(
    open_link, key, value, state_key, kept
):
    lab = open_link({key: value})
    _assert_safe(lab, LINK_WARNING, f"{key}=")
    assert lab.state[state_key] == kept
    assert lab.link().get(key) != value


@pytest.mark.parametrize(
    ("params", "state_key", "meant"),
    [
        ({"d": "1e1"}, "d", 10),
        ({"seed": "+7"}, "seed", 7),
        ({"eps": "2.5E-3"}, "eps", 2.5e-3),
        ({"shape": "vector", "d": "3", "x": "1e-3,-2e-3,2.5E3"}, "x", [1e-3, -2e-3, 2500.0]),
    ],
)
def test_a_link_number_in_any_notation_means_what_it_says(open_link, params, state_key, meant):
    lab = open_link(params)
    _assert_safe(lab)
    assert not lab.at.warning, _messages(lab)
    np.testing.assert_array_equal(lab.state[state_key], meant)


# -- links: nothing the link asks for is changed without a word --------------------------------

SILENT_CHANGES = {
    "a one-hot output past D": ({"d": "8", "upstream": "one_hot", "onehot": "100"}, "onehot=100"),
    "a row past N": ({"shape": "rows", "n": "3", "vb": "10"}, "vb=10"),
    "a token past L": ({"shape": "tokens", "l": "3", "vt": "10"}, "vt=10"),
    "a batch element past B": ({"shape": "tokens", "b": "2", "vb": "5"}, "vb=5"),
    "a fixed preset's own shape": (
        {"preset": "Classroom (D = 4, integers)", "d": "1024", "n": "32"},
        "d=1024, n=32 not used",
    ),
    "a key given twice": ({"seed": ["1", "2"]}, "seed is given 2 times"),
    "a number that underflows": ({"shape": "vector", "d": "3", "x": "1,1e-400,2"}, "too small"),
    "a full-width number that underflows": (
        {"shape": "vector", "d": "3", "x": "1,\uff11e-400,2"},
        "too small",
    ),
}


@pytest.mark.parametrize("case", list(SILENT_CHANGES))
def test_a_link_that_cannot_be_followed_as_written_says_what_was_changed(open_link, case):
    params, phrase = SILENT_CHANGES[case]
    lab = open_link(params)
    _assert_safe(lab, LINK_WARNING, phrase)
    link = lab.link()
    assert any(link.get(key) != value for key, value in params.items()), link


def test_an_index_that_fits_is_taken_without_a_word(open_link):
    lab = open_link({"shape": "tokens", "b": "2", "l": "3", "vb": "1", "vt": "2", "onehot": "7"})
    _assert_safe(lab)
    assert not lab.at.warning, _messages(lab)
    assert (lab.state["view_b"], lab.state["view_t"], lab.state["one_hot_index"]) == (1, 2, 7)


def test_the_audit_never_measures_against_terms_of_infinite_size(open_link):
    # With eps = 0 the variance of these entries is ~1e-300: its powers overflow.
    for entries in ("1e-150,-1e-150,0", ",".join(["1e-150,-1e-150,0"] * 8)):
        d = str(entries.count(",") + 1)
        lab = open_link({"shape": "vector", "d": d, "eps": "0", "x": entries}).open(
            "Derivation audit"
        )
        _assert_safe(lab)
        summary = lab.at.main.dataframe[0].value
        texts = [str(value) for column in summary.columns for value in summary[column]]
        # Every formula's entry, opened, document by document.
        by_name = {document.name: key for key, document in DOCUMENTS.items()}
        lab.state["audit_opened"] = frozenset(
            zip(summary["document"].map(by_name), summary["formula"], strict=True)
        )
        for key in DOCUMENTS:
            lab.widget("selectbox", "Read one document's formulas").set_value(key)
            lab.run()
            _assert_safe(lab)
            entries = [
                e
                for e in lab.at.main.expander
                if not e.label.startswith("Notation") and e.label not in (guide.TRY, guide.PREDICT)
            ]
            assert entries and all(e.children for e in entries), key
            texts += [e.label for e in entries] + [
                e.value for kind in ("markdown", "caption", "info") for e in getattr(lab.at, kind)
            ]
            texts += [str(v) for table in lab.at.main.table for v in table.value.to_numpy().ravel()]
        assert not [t for t in texts if NON_FINITE_WORD.search(t)], "an infinite size is shown"


# -- CSV: paste and upload ---------------------------------------------------------------------


def _give_csv(lab, source: str, text: str) -> None:
    lab.open("Inputs")
    if source == "paste":
        lab.at.text_area(key="csv_text").input(text)
    else:
        lab.at.file_uploader(key="csv_file").upload("x.csv", text.encode(), "text/csv")
    lab.click(CSV_BUTTON)


def _rows(n: int, d: int) -> str:
    return "\n".join(",".join(str(i * d + j) for j in range(d)) for i in range(n))


BAD_CSV = {
    "more rows than N may have": (_rows(40, 3), "at most 32"),
    "more values than D may have": (_rows(1, 1025), "at most 1024"),
    "semicolons": ("1;2;3", "not a number"),
    "a decimal comma inside quotes": ('"1,5",2', "not a number"),
    "a header line": ("a,b\n1,2", "not a number"),
    "nan": ("nan,1", "not a number"),
    "a value past float64": ("1e400,2", "too large"),
    "a link in a cell": ("[x](http://y.example),1", "not a number"),
    "ragged lines": ("1,2\n3", "same number of values"),
    "an empty value": ("1,,3", "empty"),
    "a number that underflows to 0": ("1e-400,2", "too small"),
    "an Arabic-Indic number that underflows to 0": ("1,\u0661e-400,3", "too small"),
    "a number float64 keeps only in part": ("2,-3e-320", "too small"),
    **{f"an address: {a}": (f"1,{a}", "not a number") for a in ADDRESSES},
}


@pytest.mark.parametrize("source", ["paste", "upload"])
@pytest.mark.parametrize("case", list(BAD_CSV))
def test_a_bad_csv_is_refused_with_a_message_and_nothing_changes(lab, source, case):
    text, phrase = BAD_CSV[case]
    before = {k: lab.state[k] for k in ("n", "d", "shape_kind", "seed")}
    x = lab.state["x"].copy()
    _give_csv(lab, source, text)
    _assert_safe(lab, phrase)
    (error,) = lab.errors("main")
    assert not ACTIVE_MARKDOWN.search(error), error
    np.testing.assert_array_equal(lab.state["x"], x)
    assert {k: lab.state[k] for k in before} == before
    assert lab.sidebar("n").value == before["n"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1e-3,2.5E3,-2e-3", [1e-3, 2500.0, -2e-3]),
        (" 3 , +4 ,\u22125", [3.0, 4.0, -5.0]),
        ("0.1,0.2,0.30000000000000004", [0.1, 0.2, 0.30000000000000004]),
    ],
)
def test_a_csv_number_in_any_notation_is_stored_exactly(lab, text, expected):
    _give_csv(lab, "paste", text)
    _assert_safe(lab)
    np.testing.assert_array_equal(lab.state["x"], expected)
    assert lab.sidebar("d").value == 3


def test_a_csv_of_as_many_rows_as_the_sidebar_allows_is_taken_whole(lab):
    _give_csv(lab, "upload", _rows(32, 2))
    _assert_safe(lab)
    assert lab.state["x"].shape == (32, 2)
    assert (lab.sidebar("n").value, lab.sidebar("d").value) == (32, 2)
    assert (lab.link()["n"], lab.link()["d"]) == ("32", "2")
    lab.open("Stepper")
    lab.assert_clean()


# -- table cells, sent as the browser's text cells send them -----------------------------------

GOOD_CELLS = {
    "1e-3": 1e-3,
    "2.5E3": 2500.0,
    "-2e-3": -2e-3,
    " 3 ": 3.0,
    "+4": 4.0,
    "\u22125": -5.0,
    ".5": 0.5,
    "0.30000000000000004": 0.30000000000000004,
}


@pytest.mark.parametrize("editor", ["x", "params", "dout"])
@pytest.mark.parametrize("typed", list(GOOD_CELLS))
def test_a_typed_cell_is_stored_as_exactly_that_number(lab, editor, typed):
    key = {"x": "x", "params": "gamma", "dout": "dout_edited"}[editor]
    lab.open("Inputs")
    before = lab.state[key].copy()
    lab.edit(editor, {0: {"1": typed}})
    _assert_safe(lab)
    lab.assert_clean()
    after = lab.state[key]
    expected = before.copy()
    expected.reshape(-1, before.shape[-1])[0, 1] = GOOD_CELLS[typed]
    np.testing.assert_array_equal(after, expected)


BAD_CELLS = {
    "1,5": "use a point for decimals",
    "1.2.3": "not a number",
    "": "empty",
    "nan": "not a number",
    "inf": "not a number",
    "1e400": "too large",
    "0x1A": "not a number",
    "2 3": "not a number",
    "[a](http://b.example)": "not a number",
    "$x$": "not a number",
    "1e-400": "too small",
    "\uff11e-400": "too small",
    "-1e-310": "too small",
    **{address: "not a number" for address in ADDRESSES},
}


@pytest.mark.parametrize("typed", list(BAD_CELLS))
def test_a_typed_cell_that_is_not_a_number_is_refused_and_nothing_changes(lab, typed):
    lab.open("Inputs")
    kept = {k: lab.state[k].copy() for k in ("x", "gamma", "beta", "dout_edited")}
    lab.edit("x", {1: {"2": typed}})
    _assert_safe(lab, BAD_CELLS[typed])
    (error,) = lab.errors("main")
    assert "row 1, column 2" in error
    assert not ACTIVE_MARKDOWN.search(error), error
    for key, value in kept.items():
        np.testing.assert_array_equal(lab.state[key], value, err_msg=key)
    lab.open("Stepper")
    lab.assert_clean()


def test_many_bad_cells_are_listed_briefly(lab):
    lab.open("Inputs")
    lab.edit("x", {r: {str(c): "?" * 500 for c in range(8)} for r in range(3)})
    _assert_safe(lab, "and 18 more")
    (error,) = lab.errors("main")
    assert len(error) < 1500, len(error)


# -- sidebar fields: typed text, and the extremes of every field -------------------------------

GOOD_FIELDS = [
    ("d", "1e1", 10),
    ("d", " 12 ", 12),
    ("d", "+16", 16),
    ("d", "4.0", 4),
    ("n", "2E1", 20),
    ("seed", "1e9", 10**9),
    ("eps", "1e-3", 1e-3),
    ("eps", "2.5E-4", 2.5e-4),
    ("eps", "0", 0.0),
]


@pytest.mark.parametrize(("key", "typed", "meant"), GOOD_FIELDS)
def test_a_sidebar_number_in_any_notation_means_what_it_says(lab, key, typed, meant):
    lab.set_sidebar(key, typed)
    _assert_safe(lab)
    assert lab.state[key] == meant and type(lab.state[key]) is type(meant)
    assert lab.sidebar(key).value == meant
    assert not lab.errors("sidebar")


BAD_FIELDS = [
    ("d", "1e4", "from 1 to 1024"),
    ("d", "2.5", "not a whole number"),
    ("d", "abc", "not a number"),
    ("d", "", "empty"),
    ("d", "-1", "from 1 to 1024"),
    ("n", "1e3", "from 1 to 32"),
    ("n", "1,5", "use a point for decimals"),
    ("seed", "1e10", "from 0 to"),
    ("seed", "[x](http://y.example)", "not a number"),
    ("eps", "1,5", "use a point for decimals"),
    ("eps", "nan", "not a number"),
    ("eps", "11", "from 0 to 10"),
    ("eps", "-1e-9", "from 0 to 10"),
    ("eps", "1e-400", "too small"),
    ("eps", "5e-324", "too small"),
    ("eps", "\uff11e-400", "too small"),
    *(
        (key, address, "not a number")
        for key, address in zip(("seed", "eps", "d", "n"), ADDRESSES, strict=True)
    ),
]


@pytest.mark.parametrize(("key", "typed", "phrase"), BAD_FIELDS)
def test_a_refused_sidebar_number_keeps_the_old_value_and_says_so(lab, key, typed, phrase):
    kept = {k: lab.state[k] for k in ("n", "d", "seed", "eps")}
    x = lab.state["x"].copy()
    lab.set_sidebar(key, typed)
    _assert_safe(lab, phrase, "It stays")
    (error,) = lab.errors("sidebar")
    assert not ACTIVE_MARKDOWN.search(error), error
    assert {k: lab.state[k] for k in kept} == kept
    np.testing.assert_array_equal(lab.state["x"], x)
    assert lab.sidebar(key).value == kept[key], "the field does not show the value in use"
    # Said once: the next run shows the field with the kept value and no message.
    lab.run()
    assert not lab.errors("sidebar")


EXTREME_REASONS = ("This page takes", "needs a batch", "zero variance")
EXTREMES = {
    "one entry": {"shape": "vector", "d": "1"},
    "one row of 1024": {"shape": "rows", "n": "1", "d": "1024"},
    "32 rows of 1024": {"shape": "rows", "n": "32", "d": "1024"},
    "largest seed, eps 10": {"seed": str(2**31 - 1), "eps": "10"},
    "a single token": {"shape": "tokens", "b": "1", "l": "1", "d": "2"},
}


@pytest.mark.parametrize("case", list(EXTREMES))
def test_every_page_renders_at_the_sidebar_extremes(open_link, case):
    lab = open_link(EXTREMES[case])
    assert not lab.at.warning, _messages(lab)
    for page in lab.titles:
        _visit(lab, page)
        _assert_safe(lab)
        _sidebar_drawn(lab)
        # A page may refuse the size (its cap) or the shape, or explain a zero variance (D = 1).
        for message in lab.errors("main"):
            assert any(p in message for p in EXTREME_REASONS), (page, message)


# -- hand-built data-editor messages ----------------------------------------------------------

MALFORMED = {
    "a row that does not exist": {"edited_rows": {99: {"0": "1"}}},
    "a column that does not exist": {"edited_rows": {0: {"99": "1"}}},
    "a column that is not a number": {"edited_rows": {0: {"abc": "1"}}},
    "a row that is not a number": {"edited_rows": {"abc": {"0": "1"}}},
    "a negative row": {"edited_rows": {"-1": {"0": "1"}}},
    "a deleted row": {"deleted_rows": [0]},
    "a deleted row past the end": {"deleted_rows": [99]},
    "an added row": {"added_rows": [{"0": "1"}]},
    "rows as a list": {"edited_rows": [1, 2]},
    "cells that are not a mapping": {"edited_rows": {0: "1"}},
    "an unknown field": {"edited_rows": {}, "moved_rows": [1]},
    "a message that is a list": [1, 2, 3],
    "a message that is text": "edited_rows",
    "a row that is an address": {"edited_rows": {"https://ev.il": {"0": "1"}}},
    "a row keyed 1.5": {"edited_rows": {"1.5": {"0": "1"}}},
    "a message that is null": None,
    "a message that is an empty list": [],
    "a message that is a number": 42,
    "a column that is an address": {"edited_rows": {0: {"user@ev.il": "1"}}},
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_table_message_changes_nothing_and_says_so(lab, case):
    lab.open("Inputs")
    kept = lab.state["x"].copy()
    lab.state[lab.editor_key("x")] = MALFORMED[case]
    lab.run()
    _assert_safe(lab, "nothing was changed")
    np.testing.assert_array_equal(lab.state["x"], kept)
    assert len(lab.editor("x")) == len(kept), "the table lost or gained rows"
    # The table works again for the next real edit.
    lab.edit("x", {0: {"0": "2.5"}})
    lab.assert_clean()
    assert lab.state["x"][0, 0] == 2.5


@pytest.mark.parametrize(
    ("typed", "phrase"),
    [([1, 2], "not a number"), ({"a": 1}, "not a number"), (True, "empty"), (None, "empty")],
    ids=["a list", "a mapping", "a boolean", "null"],
)
def test_a_cell_value_of_the_wrong_type_is_refused(lab, typed, phrase):
    lab.open("Inputs")
    kept = lab.state["x"].copy()
    lab.edit("x", {0: {"0": typed}})
    _assert_safe(lab, phrase)
    np.testing.assert_array_equal(lab.state["x"], kept)


def test_a_malformed_message_is_answered_once_not_on_every_rerun(lab):
    lab.open("Inputs")
    lab.state[lab.editor_key("x")] = json.loads('{"deleted_rows": [0, 1, 2]}')
    lab.run()
    assert lab.errors("main")
    lab.run()
    lab.assert_clean()


# -- page number fields: the chosen row, token and one-hot output ------------------------------


@pytest.mark.parametrize(
    ("page", "label", "key", "typed", "meant"),
    [
        ("Jacobian", "Row", "view_b", "2e0", 2),
        ("Jacobian", "Row", "view_b", "1e1", None),
        ("Gradient check", "Row", "view_b", "1,5", None),
        ("Jacobian", "Row", "view_b", "-0", 0),
        ("Inputs", "Output that gets the 1", "one_hot_index", "7.0", 7),
        ("Inputs", "Output that gets the 1", "one_hot_index", "8", None),
    ],
)
def test_a_page_number_field_stores_what_is_typed_or_refuses_it(
    lab, page, label, key, typed, meant
):
    if label.startswith("Output"):
        lab.state["upstream"] = "one_hot"
        lab.run()
    lab.open(page)
    kept = lab.state[key]
    lab.widget("number_input", label).set_value(typed)
    lab.run()
    if meant is None:
        _assert_safe(lab, "It stays")
        assert lab.state[key] == kept
    else:
        _assert_safe(lab)
        lab.assert_clean()
        assert lab.state[key] == meant


# -- hand-built widget messages: any value of any type, for every widget bound to the state ------

# widget key -> (page it is drawn on, link that shows it)
BOUND_WIDGETS = {
    "w_preset_": ("Overview", {}),
    "w_shape_kind_": ("Overview", {}),
    "w_dtype_": ("Overview", {}),
    "w_presenter_": ("Overview", {}),
    "w_d_": ("Overview", {}),
    "w_eps_": ("Overview", {}),
    "w_upstream_": ("Inputs", {}),
    "w_step_browser": ("Stepper", {}),
    "w_quiz_": ("Stepper", {}),
    "w_affine_": ("Stepper", {}),
    "w_per_": ("Stepper", {"shape": "tokens"}),
    "w_view_b_": ("Stepper", {"shape": "tokens"}),
    "w_jacobian_paths_": ("Jacobian", {}),
    "w_bug_": ("Gradient check", {}),
    "w_norm_kind_": ("LayerNorm vs BatchNorm", {}),
    "w_audit_document_": ("Derivation audit", {}),
    "w_presenter_popover": ("Overview", {"presenter": "1"}),
    "w_presenter_sidebar_": ("Overview", {"presenter": "1"}),
}
# A value of every type a widget message can carry, right type or not.
HOSTILE_VALUES = [
    ("string_value", "Nope"),
    ("string_value", ""),
    ("string_value", "{"),
    ("int_value", 42),
    ("int_value", -1),
    ("double_value", 1.5),
    ("double_value", 1e300),
    ("bool_value", True),
    ("json_value", "null"),
    ("json_value", "[]"),
]


def _send(lab, widget_key: str, field: str, value) -> None:
    """Run with one widget's state replaced by `field`=`value`, as a hand-built message would."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    (node,) = [w for w in lab.at._tree if getattr(w, "key", None) == widget_key]
    states = lab.at._tree.get_widget_states()
    kept = [w for w in states.widgets if w.id != node.id]
    del states.widgets[:]
    states.widgets.extend(kept)
    hostile = WidgetState(id=node.id)
    if field == "double_array_value":
        hostile.double_array_value.data.extend(value)
    else:
        setattr(hostile, field, value)
    states.widgets.append(hostile)
    lab.at._run(states)


@pytest.mark.parametrize("widget_key", list(BOUND_WIDGETS))
def test_a_hand_built_widget_message_never_breaks_the_session(open_link, widget_key):
    from ui.session.state import SCHEMA

    page, link = BOUND_WIDGETS[widget_key]
    key = widget_key[2:].rsplit("_", 1)[0]
    lab = open_link(link).open(page)
    lab.assert_clean()
    for field, value in [*HOSTILE_VALUES, ("double_array_value", [3.0, 99.0])]:
        _send(lab, widget_key, field, value)
        case = f"{widget_key} given {field}={value!r}"
        lab.assert_no_exception()
        assert SCHEMA[key].valid(lab.state[key]) == lab.state[key], case
        lab.run()  # the next run is clean: nothing is left broken
        lab.assert_no_exception()
        _sidebar_drawn(lab)


# Folds that draw their content only when open: page -> the start of the fold's label.
FOLDS = {"Derivation audit": "∂C/∂γ as a product", "Stepper": "Take this view to Jupyter"}


def _fold(lab, label: str):
    (fold,) = [e for e in lab.at.main.get("expander") if e.label.startswith(label)]
    return fold


@pytest.mark.parametrize("page", list(FOLDS))
def test_a_hand_built_message_to_a_fold_never_breaks_the_session(lab, page):
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    lab.open(page)
    opened = False
    for field, value in [*HOSTILE_VALUES, ("bool_value", False), *HOSTILE_VALUES]:
        fold = _fold(lab, FOLDS[page])
        states = lab.at._tree.get_widget_states()
        states.widgets.append(WidgetState(id=fold.proto.id, **{field: value}))
        lab.at._run(states)
        case = f"{page}'s fold given {field}={value!r}"
        lab.assert_no_exception()
        # Only a true or false moves the fold; any other value leaves it as it was, and only
        # an open fold draws its content.
        opened = value if field == "bool_value" else opened
        assert bool(_fold(lab, FOLDS[page]).children) == opened, case
        lab.run()
        lab.assert_no_exception()
        _sidebar_drawn(lab)


@pytest.mark.parametrize(
    ("widget_key", "page", "value"),
    [
        ("w_preset_", "Overview", "Nope"),
        ("w_affine_", "Stepper", "all"),
        ("w_bug_", "Gradient check", "https://ev.il"),
        ("w_audit_document_", "Derivation audit", "999"),
    ],
)
def test_a_choice_a_select_box_does_not_offer_is_named_and_not_used(lab, widget_key, page, value):
    key = widget_key[2:].rsplit("_", 1)[0]
    lab.open(page)
    kept = lab.state[key]
    _send(lab, widget_key, "string_value", value)
    lab.assert_no_exception()
    assert lab.state[key] == kept
    (toast,) = [t.value for t in lab.at.toast]
    assert "not used" in toast and value.split("/")[-1] in toast.replace("\\", "").replace(
        "\u2060", ""
    ), toast
    assert not AUTOLINK.search(re.sub(r"\\(.)", r"\1", toast)), toast
    lab.run()
    lab.assert_clean()


@pytest.mark.parametrize(
    "text",
    [
        *["{", "null", "[]", "42", '{"edited_rows": {"a": 1}}', '"x"'],
        '{"edited_rows": {"0": {"0": ' + "[" * 900 + "]" * 900 + "}}}",
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["{", "null", "[]", "42", "rows-a", "text", "nested-900-deep", "nested-100000-deep"],
)
def test_a_hand_built_table_message_never_breaks_the_session(lab, text):
    lab.open("Inputs")
    kept = lab.state["x"].copy()
    _send(lab, lab.editor_key("x"), "json_value", text)
    lab.assert_no_exception()
    np.testing.assert_array_equal(lab.state["x"], kept)
    lab.run()
    lab.assert_clean()
    _sidebar_drawn(lab)


def test_a_message_for_a_widget_without_an_id_is_ignored(lab):
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    lab.open("Stepper")
    states = lab.at._tree.get_widget_states()
    states.widgets.append(WidgetState(id="", string_value="Nope"))
    states.widgets.append(WidgetState(id="$$ID-0-None", int_value=3))
    lab.at._run(states)
    lab.assert_clean()


# Selections of the audit summary's rows that no click on it sends (a click sends one row, a
# whole number counted from 0), as JSON text, the kind the table's messages carry.
HOSTILE_SELECTIONS = [
    '{"selection": {"rows": [-1], "columns": [], "cells": []}}',
    '{"selection": {"rows": ["a"]}}',
    '{"selection": {"rows": [1e30]}}',
    '{"selection": {"rows": [1.5]}}',
    '{"selection": {"rows": [true]}}',
    '{"selection": {"rows": [2, 3]}}',
    '{"selection": {"rows": "0"}}',
    '{"selection": {"rows": {"0": 1}}}',
    '{"selection": {"rows": ["[Sign in](https://ev.il)"]}}',
]


def _audit_choice(lab) -> tuple:
    """The document shown, the formulas open and the formula last picked (None before any)."""
    picked = lab.state["audit_picked"] if "audit_picked" in lab.state else None
    return lab.state["audit_document"], lab.state["audit_opened"], picked


@pytest.mark.parametrize("kind", ["wide", "phone"])
@pytest.mark.parametrize("text", HOSTILE_SELECTIONS)
def test_a_selection_no_click_sends_is_named_and_opens_nothing(lab, kind, text):
    lab.open("Derivation audit")
    kept = _audit_choice(lab)
    _send(lab, lab.audit_picker(kind), "string_value", text)
    lab.assert_no_exception()
    assert _audit_choice(lab) == kept
    (toast,) = [t.value for t in lab.at.toast]
    assert toast.startswith("A control sent") and "not one row of the table: not used" in toast
    assert not AUTOLINK.search(re.sub(r"\\(.)", r"\1", toast)), toast  # shown as typed
    lab.run()  # said once: the table starts again unselected
    lab.assert_clean()
    assert not lab.at.toast


@pytest.mark.parametrize("kind", ["wide", "phone"])
def test_a_selected_row_opens_its_formula_and_one_past_the_table_opens_nothing(lab, kind):
    """The control for the test above: the same message with a row of the table opens it; a
    row past the table is not used, silently."""
    lab.open("Derivation audit")
    _send(lab, lab.audit_picker(kind), "string_value", '{"selection": {"rows": [40]}}')
    lab.assert_clean()
    document, opened, picked = _audit_choice(lab)
    assert picked is not None and opened == {picked} and document == picked[0]
    lab.state["audit_opened"] = frozenset()
    _send(lab, lab.audit_picker(kind), "string_value", '{"selection": {"rows": [999]}}')
    lab.assert_clean()
    assert _audit_choice(lab) == (document, frozenset(), None)


def test_a_link_with_many_bad_keys_names_every_one(open_link):
    # Twelve bad keys used to read as six, then "and 6 more": the student could not tell which.
    keys = ["preset", "shape", "eps", "dtype", "upstream", "step", "vb", "vt", "norm",
            "quiz", "paths", "bug", "per", "quantity"]  # fmt: skip
    lab = open_link({key: "~bad~" for key in keys})
    lab.assert_no_exception()
    (warning,) = [w.value for w in lab.at.warning if "not usable" in w.value]
    named = re.sub(r"\\(.)", r"\1", warning.replace("\u2060", ""))
    assert "more:" in named
    for key in keys:
        assert re.search(rf"(^|[\s:,]){key}([=\s,]|$)", named), (key, named)
