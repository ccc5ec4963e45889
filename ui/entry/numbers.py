"""Numbers as students type them: read exactly as written, or refused with the reason.

A cell, a sidebar field, a CSV value and a link's number all go through parse_number, so
`1e-3`, `2.5E3`, `-2e-3`, ` 3 `, `+4` and `１.５` (digits of any script) mean what they say
everywhere, and `1,5`, `1.2.3`, an empty cell, `nan`, `inf` or a number float64 would change
are refused instead of becoming some other number.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Sequence

from ln_core.validation import SMALLEST, too_small
from ui.entry.limits import EPS_MAX
from ui.entry.literal import literal

_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
# Word processors and some keyboards type a true minus sign or a non-breaking space.
_LOOKALIKES = str.maketrans({"\u2212": "-", "\u00a0": " ", "\u202f": " "})
TOO_LARGE = "is too large: numbers must stay below about 1.8e308"
TOO_SMALL = (
    f"is too small: float64 cannot hold a non-zero number below {SMALLEST:.1e} in size without "
    "changing it (it would be stored as another number, or as 0); type 0 or a larger number"
)


def parse_number(value: object) -> float:
    """The float a student meant by `value` (text, or a number a widget already holds).

    Text is read with Python's float() only after it is checked to be a plain decimal, so
    the result is exactly the number written (repr(x) reads back as x). Raises ValueError
    with a phrase that completes "<where> ..." (for example "is empty, not a number").
    """
    if isinstance(value, bool) or value is None:
        raise ValueError("is empty, not a number")
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            raise ValueError("is NaN, not a number; type a finite number")
        return _representable(repr(number), number)
    typed = str(value).translate(_LOOKALIKES).strip()
    if not typed:
        raise ValueError("is empty, not a number")
    text = _ascii_digits(typed)
    if _DECIMAL.fullmatch(text) is None:
        raise ValueError(f"holds {literal(typed)}, which is not a number{_hint(typed)}")
    return _representable(text, float(text))


def _ascii_digits(text: str) -> str:
    """`text` with every decimal digit as 0-9: float() reads the digits of every script (a
    full-width １, an Arabic-Indic ١), and the checks after it must see the same number."""
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


def _representable(text: str, number: float) -> float:
    """`number`, read from `text`, if float64 holds it at full precision; else ValueError
    saying why not."""
    if math.isinf(number):
        raise ValueError(TOO_LARGE)
    if too_small(text, number):
        raise ValueError(TOO_SMALL)
    return number


def parse_eps(value: object) -> float:
    """eps as typed: a number from 0 to EPS_MAX. Raises ValueError completing "<where> ..."."""
    number = parse_number(value)
    if not 0 <= number <= EPS_MAX:
        raise ValueError(f"is {number!r}; it must be from 0 to {EPS_MAX:g}")
    return number


def parse_whole(value: object, low: int, high: int) -> int:
    """A whole number from `low` to `high` written as text (`12`, `1e3`, `+4`, `8.0`).

    Raises ValueError with a phrase that completes "<where> ...".
    """
    number = parse_number(value)
    if not number.is_integer():
        raise ValueError(f"is {number!r}, not a whole number")
    whole = int(number)
    if not low <= whole <= high:
        raise ValueError(f"is {whole}; it must be from {low} to {high}")
    return whole


def format_number(number: float) -> str:
    """The shortest text that reads back as exactly `number` (`3` rather than `3.0`)."""
    text = repr(float(number))
    return text[:-2] if text.endswith(".0") else text


# A desk table's eight columns hold about nine characters each on a 1024 px projector.
SHOWN_DIGITS = 5


def shown_digits(values: Sequence[float]) -> int:
    """How many significant digits a table of `values` shows: SHOWN_DIGITS, and as many more
    as the numbers' common part takes, so their differences keep SHOWN_DIGITS (the Large
    common offset preset's 2000.1257 and 1999.8679 part in the first decimal: eight digits)."""
    finite = [abs(v) for v in values if math.isfinite(v)]
    spread = max(values, default=0.0) - min(values, default=0.0)
    if not finite or not math.isfinite(spread) or spread == 0:
        return SHOWN_DIGITS
    extra = max(0, math.floor(math.log10(max(finite))) - math.floor(math.log10(spread)))
    return min(SHOWN_DIGITS + extra, 17)


def short_number(number: float, digits: int) -> str:
    """`number` to `digits` significant digits, or its exact text when those say it exactly
    (or round it past the largest float, to a number that cannot be typed back)."""
    text = f"{number:.{digits}g}"
    shown = float(text)
    return format_number(number) if shown == number or math.isinf(shown) else text


def _hint(text: str) -> str:
    if "," in text:
        return " (use a point for decimals: 1.5, not 1,5)"
    if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return " a computation can use; type a finite number"
    return "; type a decimal such as 1.5, -2e-3 or 2.5E3"
