"""User text quoted for Markdown: shown exactly as typed, whatever it holds.

Pure Python (no Streamlit), so the messages of the app and the Markdown cells of a downloaded
notebook quote a student's text the same way.
"""

from __future__ import annotations

import re
import string
import unicodedata

from ui.entry.limits import SHOWN_CHARS

# Streamlit's Markdown also links bare text that looks like an address ("https://", "www.",
# "name@host"), whatever its escapes. An invisible word joiner after each ':' and '@' and on
# both sides of each '.' breaks every such pattern ("www" must touch its '.', the host must
# start right after "://" or '@') and leaves the text looking exactly as typed.
_JOINER = "\u2060"
# The bidirectional controls: embeddings and overrides (U+202A-U+202E), isolates
# (U+2066-U+2069) and the marks (LRM, RLM, ALM). One in quoted text would reverse or reorder
# the app's own sentence around the quote, so each is shown as its escape.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_ESCAPED = str.maketrans(
    {c: "\\" + c for c in string.punctuation}
    | {":": "\\:" + _JOINER, "@": "\\@" + _JOINER, ".": _JOINER + "\\." + _JOINER}
)


def literal(text: object, limit: int = SHOWN_CHARS) -> str:
    """`text` quoted for a Markdown message: shown as typed, never as a link (autolinks of
    addresses included), image or formula.

    Longer text is cut to `limit` characters; line breaks become spaces, and other control
    characters and the bidirectional controls their Python escapes (a NUL as \\x00, a tab as
    \\t, a right-to-left override as \\u202e).
    """
    raw = " ".join(re.split("\r\n|\r|\n", str(text)))
    cut = raw if len(raw) <= limit else raw[:limit] + "…"
    return "“" + as_typed(cut) + "”"


def as_typed(text: str) -> str:
    """`text` for Markdown, shown exactly as typed (as in `literal`, without quotes or a cut):
    for text that is the message itself, such as an instructor's own question."""
    return "".join(map(_visible, text)).translate(_ESCAPED)


def _visible(c: str) -> str:
    """A control character as its escape: on screen a tab looks like spaces and a NUL like
    nothing at all, so the quote would not show what was typed."""
    shown = unicodedata.category(c) == "Cc" or c in _BIDI
    return c.encode("unicode_escape").decode("ascii") if shown else c
