"""User text quoted for Markdown: shown exactly as typed, whatever it holds.

Pure Python (no Streamlit), so the messages of the app and the Markdown cells of a downloaded
notebook quote a student's text the same way.
"""

from __future__ import annotations

import string

from ui.entry.limits import SHOWN_CHARS

# Streamlit's Markdown also links bare text that looks like an address ("https://", "www.",
# "name@host"), whatever its escapes. An invisible word joiner after each ':' and '@' and on
# both sides of each '.' breaks every such pattern ("www" must touch its '.', the host must
# start right after "://" or '@') and leaves the text looking exactly as typed.
_JOINER = "\u2060"
_ESCAPED = str.maketrans(
    {c: "\\" + c for c in string.punctuation}
    | {":": "\\:" + _JOINER, "@": "\\@" + _JOINER, ".": _JOINER + "\\." + _JOINER}
)


def literal(text: object, limit: int = SHOWN_CHARS) -> str:
    """`text` quoted for a Markdown message: shown as typed, never as a link (autolinks of
    addresses included), image or formula.

    Longer text is cut to `limit` characters; line breaks become spaces.
    """
    raw = " ".join(str(text).split("\n"))
    cut = raw if len(raw) <= limit else raw[:limit] + "…"
    return "“" + cut.translate(_ESCAPED) + "”"
