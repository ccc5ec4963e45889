"""ui.entry.numbers: what a typed number means, exactly, and what is refused with a reason."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ui.entry.numbers import (
    SHOWN_DIGITS,
    format_number,
    parse_number,
    parse_whole,
    short_number,
    shown_digits,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1e-3", 1e-3),
        ("2.5E3", 2500.0),
        ("-2e-3", -2e-3),
        (" 3 ", 3.0),
        ("+4", 4.0),
        ("\u22125", -5.0),  # a true minus sign, as word processors type it
        (".5", 0.5),
        ("5.", 5.0),
        ("0.1", 0.1),
        ("1e308", 1e308),
        # Digits of other scripts: a full-width keyboard's, Arabic-Indic.
        ("\uff11.\uff15", 1.5),
        ("\u0661\u0662e-3", 0.012),
        (7, 7.0),
        (-3.25, -3.25),
    ],
)
def test_a_number_is_read_as_written(text, expected):
    assert parse_number(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1,5", "1,5 not"),
        ("1.2.3", "not a number"),
        ("", "empty"),
        ("   ", "empty"),
        (None, "empty"),
        ("nan", "not a number"),
        ("inf", "not a number"),
        ("-Infinity", "not a number"),
        (float("nan"), "not a number"),
        (float("inf"), "too large"),
        ("1e400", "too large"),
        ("0x10", "not a number"),
        ("1_000", "not a number"),
        ("2 3", "not a number"),
        ("1e", "not a number"),
        ("e3", "not a number"),
        ("--1", "not a number"),
        ("[a](http://x)", "not a number"),
        (True, "empty"),
    ],
)
def test_anything_else_is_refused_with_a_reason(text, reason):
    with pytest.raises(ValueError) as caught:
        parse_number(text)
    message = str(caught.value).replace("\\", "")
    assert reason in message or reason.split()[0] in message, message


def test_a_refused_number_is_quoted_as_typed_in_its_own_digits():
    with pytest.raises(ValueError) as caught:
        parse_number("\uff11,\uff15")
    assert "\uff11,\uff15" in str(caught.value).replace("\\", ""), caught.value


def test_a_comma_is_explained():
    with pytest.raises(ValueError, match="use a point for decimals"):
        parse_number("1,5")


@pytest.mark.parametrize(
    ("text", "expected"), [("12", 12), ("1e3", 1000), ("+4", 4), ("8.0", 8), (" 2 ", 2)]
)
def test_a_whole_number_is_read_as_written(text, expected):
    assert parse_whole(text, 0, 2000) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [("2.5", "not a whole number"), ("1e3", "from 1 to 32"), ("0", "from 1 to 32"), ("x", "not")],
)
def test_a_whole_number_out_of_range_or_fractional_is_refused(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_whole(text, 1, 32)


# Subnormal floats are refused (test below): they hold fewer digits than the text typed.
NORMAL = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False)


@given(NORMAL)
def test_every_finite_float_round_trips_exactly(value):
    assert parse_number(repr(value)) == value
    assert parse_number(format_number(value)) == value
    assert math.copysign(1, parse_number(format_number(value))) == math.copysign(1, value)


@given(NORMAL)
def test_scientific_notation_in_either_case_reads_exactly(value):
    text = f"{value:.17e}"
    assert parse_number(text) == float(text)
    assert parse_number(text.upper()) == float(text)


@given(
    st.floats(min_value=5e-324, max_value=2.2e-308)
    | st.floats(min_value=-2.2e-308, max_value=-5e-324)
)
def test_a_number_float64_would_keep_only_in_part_is_refused(value):
    for given_as in (value, repr(value), f"{value:.17e}"):
        with pytest.raises(ValueError, match="too small"):
            parse_number(given_as)


@pytest.mark.parametrize(
    "text", ["1e-400", "-1e-324", "0.1e-330", "7E-1000", "\uff11e-400", "-\u0661e-400"]
)
def test_a_number_that_would_underflow_to_zero_is_refused(text):
    with pytest.raises(ValueError, match="too small"):
        parse_number(text)


@pytest.mark.parametrize("text", ["0", "-0", "0.000", "0e-400", "0E5", "\uff10e-400"])
def test_zero_in_any_notation_is_zero(text):
    assert parse_number(text) == 0.0


# -- the wide tables' rounded display ------------------------------------------------------------


@given(st.lists(NORMAL, min_size=1, max_size=24))
def test_a_table_shows_every_number_to_its_digits_and_exactly_where_those_say_it(values):
    digits = shown_digits(values)
    assert SHOWN_DIGITS <= digits <= 17
    for value in values:
        text = short_number(value, digits)
        assert parse_number(text) == pytest.approx(value, rel=10.0 ** (1 - digits), abs=0)
        if float(f"{value:.{digits}g}") == value:
            assert text == format_number(value)


def test_numbers_sharing_a_large_common_part_keep_their_differences():
    offset = [2000.1257302210933, 1999.8678951367087, 2001.3040]
    assert shown_digits(offset) == 8
    assert [short_number(v, 8) for v in offset] == ["2000.1257", "1999.8679", "2001.304"]
    assert shown_digits([1e6 + 0.5, 1e6 - 0.25]) == 12
    # Equal, zero or not finite: no common part to see past.
    assert shown_digits([3.0, 3.0]) == shown_digits([0.0]) == SHOWN_DIGITS
    assert shown_digits([1e308, -1e308]) == SHOWN_DIGITS
    assert short_number(0.1257302210933933, SHOWN_DIGITS) == "0.12573"
    assert short_number(2500.0, SHOWN_DIGITS) == "2500"
