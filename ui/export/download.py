"""A download button whose file is written only when it is clicked."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.delta_generator import DeltaGenerator


def download(
    where: DeltaGenerator,
    label: str,
    write: Callable[[], bytes | str],
    file_name: str,
    mime: str,
    icon: str | None = None,
) -> None:
    """Offer `write()`'s file as `file_name` in `where` (a column, the page, the sidebar).

    The click only fetches the file. Rerunning the page on it would cost a full run, and
    Streamlit empties what it has not yet sent to the browser when a run starts: a file written
    just before that is never delivered, and the button spins until it gives up (seen in CI).
    """
    where.download_button(
        label,
        write,
        file_name=file_name,
        mime=mime,
        icon=None if icon is None else f":material/{icon}:",
        on_click="ignore",
    )
