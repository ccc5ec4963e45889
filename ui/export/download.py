"""A download button that fetches its file without rerunning the page."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.delta_generator import DeltaGenerator


def download(
    where: DeltaGenerator,
    label: str,
    data: bytes | str | Callable[[], bytes | str],
    file_name: str,
    mime: str,
    icon: str | None = None,
) -> None:
    """Offer `data` as `file_name` in `where` (a column, the page, the sidebar).

    `data` is the file, or a function that writes it when the button is clicked (for files too
    costly to write on every run). The click only fetches the file: rerunning the page on it
    would cost a full run, and Streamlit empties what it has not yet sent to the browser when a
    run starts, so a file written just before that is never delivered (seen in CI).

    A file written on click is held by no run, and Streamlit deletes such files once two runs of
    any session have ended; on a server busy with a class that can come before the browser
    fetches it. Pages that rerun on a timer while a class is on give the bytes.
    """
    where.download_button(
        label,
        data,
        file_name=file_name,
        mime=mime,
        icon=None if icon is None else f":material/{icon}:",
        on_click="ignore",
    )
