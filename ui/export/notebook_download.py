"""The two notebook downloads of the current view, offered by the Export page, the Stepper and
the comparison page (LayerNorm vs BatchNorm vs RMSNorm)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from ui.export.download import download
from ui.export.notebook import View, exercise_notebook, lesson_notebook

_MIME = "application/x-ipynb+json"


def notebook_downloads(view: View) -> None:
    """The lesson's and the exercise's download buttons for a view (its inputs carry the
    layer's options); each file is written only when its button is clicked."""
    st.caption(
        f"Jupyter notebooks of this view ({view.options}): the lesson runs every step in "
        "plain NumPy and reproduces the lab's numbers; the exercise leaves each gradient for "
        "you to write and checks it. "
        "Open them in Jupyter, VS Code, or upload them to Colab."
    )
    name = view.code.title.lower()
    downloads = [
        ("Download as notebook", lesson_notebook, f"{name}_lesson.ipynb", "menu_book"),
        (
            "Download the exercise notebook",
            exercise_notebook,
            f"{name}_exercise.ipynb",
            "edit_note",
        ),
    ]
    for column, (label, write, file_name, icon) in zip(st.columns(2), downloads, strict=True):
        download(column, label, partial(write, view), file_name, _MIME, icon)


def notebook_expander(key: str, view: Callable[[], View]) -> None:
    """The downloads of `view()`, folded under "Take this view to Jupyter" and drawn only
    while it is open: the pages that fold them are fragments a click reruns (the Stepper's
    Next), and each run would otherwise register both files and build the view's link again.
    `key` names the fold in the state (jupyter_<page>)."""
    folded = st.expander(
        "Take this view to Jupyter", icon=":material/download:", key=key, on_change="rerun"
    )
    if folded.open:
        with folded:
            notebook_downloads(view())
