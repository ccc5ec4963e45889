"""What a notebook's cells are built from: one backward step, and one normalization's texts.

LayerNorm's and BatchNorm's texts are in ui.export.notebook_code (BatchNorm is LayerNorm over
the batch axis), RMSNorm's in ui.export.notebook_rms; ui.export.notebook puts them together
with a view's numbers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ln_core.staged import Line


@dataclass(frozen=True)
class Step:
    """Forward line `number` undone: the gradients it gives, as (name, NumPy expression) pairs.

    checked: the gradients complete after this step (the exercise checks them numerically);
    rule: the derivative it uses, in words (the exercise's hint).
    """

    number: int
    gradients: tuple[tuple[str, str], ...]
    checked: tuple[str, ...]
    rule: str


@dataclass(frozen=True)
class Norm:
    """One normalization as notebook text (every field fixed text, never from a view).

    title: its name ("LayerNorm"); words: how it groups, for the view's options ("" for
    LayerNorm, whose per token / per sequence says it); lines: ln_core's table of its forward
    lines (node names and headings); forward: each node's NumPy line; meanings: each node in
    words; middle: the backward steps below the affine lines gx and out; reused: what the
    affine parameters are shared by, in the hints; axis: the axes it normalizes over, or None
    for the inputs' own (per token or per sequence); groups: the comment on each axis it can
    have. The other fields are whole cells: sizes (n and shared), closed_form, layer (the
    forward pass as one function, for the gradient check), jacobian, exercise_lines (the
    exercise's table of forward lines and node sizes). own_steps: "" where the lab's gradient
    check gives the steps and bounds, else the code working them out in the notebook.
    """

    title: str
    words: str
    lines: tuple[Line, ...]
    forward: Mapping[str, str]
    meanings: Mapping[str, str]
    middle: tuple[Step, ...]
    reused: str
    axis: tuple[int, ...] | None
    groups: Mapping[tuple[int, ...], str]
    sizes: str
    closed_form: str
    layer: str
    jacobian: str
    exercise_lines: str
    own_steps: str = ""

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(line.name for line in self.lines)


_CELLS = Path(__file__).parent / "cells"
_PLACEHOLDER = re.compile(r"__[A-Z_]+__")


# One entry per template file in ui/export/cells (three today; a missing one raises, uncached).
@functools.lru_cache(maxsize=8)
def cells(name: str) -> Mapping[str, str]:
    """The cells of ui/export/cells/<name>.py by name, in jupytext's percent format: a cell runs
    from its "# %% name" line to the next (the lines above the first are the file's header)."""
    found: dict[str, list[str]] = {}
    for line in (_CELLS / f"{name}.py").read_text().splitlines():
        if line.startswith("# %% "):
            found[line.removeprefix("# %% ").strip()] = lines = []
        elif found:
            lines.append(line)
    return {key: "\n".join(lines).strip("\n") for key, lines in found.items()}


def fill(text: str, **values: str) -> str:
    """A cell's text with each __KEY__ replaced by values["key"] (each must be there to fill)."""
    for key, value in values.items():
        placeholder = f"__{key.upper()}__"
        if placeholder not in text:
            raise ValueError(f"The cell has no {placeholder} to fill.")
        text = text.replace(placeholder, value)
    left = _PLACEHOLDER.search(text)
    if left:
        raise ValueError(f"The cell's {left.group()} was not filled.")
    return text
