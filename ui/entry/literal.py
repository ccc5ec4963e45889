"""User text quoted for Markdown: shown exactly as typed, whatever it holds.

Pure Python (no Streamlit), so the messages of the app and the Markdown cells of a downloaded
notebook quote a student's text the same way.
"""

from __future__ import annotations

import string

from ui.entry.limits import SHOWN_CHARS

_ESCAPED = str.maketrans({c: "\\" + c for c in string.punctuation})


def literal(text: object, limit: int = SHOWN_CHARS) -> str:
    """`text` quoted for a Markdown message: shown as typed, never as a link, image or formula.

    Longer text is cut to `limit` characters; line breaks become spaces.
    """
    raw = " ".join(str(text).split("\n"))
    cut = raw if len(raw) <= limit else raw[:limit] + "…"
    return "“" + cut.translate(_ESCAPED) + "”"
