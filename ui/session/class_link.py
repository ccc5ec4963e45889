"""A link for a class, built by the instructor: the page it opens, the pages and controls it
hides, presenter mode; shown as text to copy and as a QR code to project."""

from __future__ import annotations

import base64
import functools
import html
import io
from collections.abc import Mapping
from urllib.parse import urlencode

import segno
import streamlit as st

from ui.session import address, share

PAGE_TITLES = {"": "Overview", **share.LESSON_PAGES}


def class_params(
    view: Mapping[str, str], hide_pages: list[str], hide_controls: bool, presenter: bool
) -> dict[str, str]:
    """The link's query: this view's parameters with the lesson's hide list and presenter mode."""
    params = {key: value for key, value in view.items() if key != "hide"}
    hidden = sorted(hide_pages) + (["controls"] if hide_controls else [])
    if hidden:
        params["hide"] = ",".join(hidden)
    params["presenter"] = "1" if presenter else "0"
    return params


# Encoding a QR code (choosing its mask) was half the Export page's CPU on every rerun, for a
# link that changes only when the numbers or the builder's choices do.
@functools.lru_cache(maxsize=64)
def qr_image(link: str, alt: str) -> str:
    """The link as a QR code large enough to scan from the back of a room: an <img> of a PNG
    data URL, named by `alt` for a screen reader. An image, because st.html sanitises its
    HTML with DOMPurify's HTML profile, which drops inline SVG (the code was an empty box)."""
    png = io.BytesIO()
    segno.make(link, error="m").save(png, kind="png", scale=7, border=2, dark="#000", light="#fff")
    data = base64.b64encode(png.getvalue()).decode("ascii")
    return (
        f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" '
        'style="width:100%;max-width:260px;image-rendering:pixelated">'
    )


def draw(view_page: str) -> None:
    """The builder: the choices, then the link and its QR code (on `view_page` by default)."""
    st.header(
        "A link for your class",
        help="It carries your numbers and step. Project the QR code or paste the link in the chat.",
    )
    where = address.current()  # its warning, if any, stands above the page's own link
    left, right = st.columns([3, 2], gap="large")
    with left:
        pages = list(PAGE_TITLES)
        start = st.selectbox(
            "Opens on",
            pages,
            index=pages.index(view_page) if view_page in pages else 0,
            format_func=PAGE_TITLES.get,
            key="builder_page",
        )
        hide = st.multiselect(
            "Pages to hide",
            [p for p in share.LESSON_PAGES if p != start],
            format_func=share.LESSON_PAGES.get,
            key="builder_hide",
            help="Hidden pages leave the menu; a link to one says it is not part of this lesson.",
        )
        controls = st.toggle(
            "Hide the sidebar controls",
            key="builder_controls",
            help="Students see the numbers you chose and cannot change preset, shape or eps.",
        )
        presenter = st.toggle("Presenter mode on", key="builder_presenter")
    params = class_params(share.encode(st.session_state), hide, controls, presenter)
    link = f"{where.base}/{start}?{urlencode(params)}"
    with left:
        st.code(link, language=None, wrap_lines=True)
    with right:
        st.html(qr_image(link, "QR code of the class link"))
        st.caption("Scan to open the lesson.")
