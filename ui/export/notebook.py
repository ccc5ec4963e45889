"""The current view as a Jupyter notebook: the lesson in code, or the exercise with its checks.

Both are written with the nbformat library (version 4) and run in a clean kernel with NumPy and
matplotlib only. Cells are the fixed texts of ui.export.notebook_code (notebook source in
ui/export/cells, and ln_core's table of the ten nodes), chosen by the view's
options; the view only adds numbers (ui.export.python_literal) to code cells, and its words (the
preset's name, the link) to Markdown cells, quoted so they show as typed. Cell ids are the
cells' roles, so the same view always gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import nbformat
import numpy as np
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import ln_core
from ln_core.gradcheck import TENSORS, reference_cache
from ln_core.numerical import parameter_step
from teaching.inputs import AFFINE, PER, Inputs
from ui.entry.literal import literal
from ui.export import notebook_code as code
from ui.export.notebook_norm import Norm, Step
from ui.export.notebook_rms import RMS
from ui.export.python_literal import array_literal, assignment, float_literal

# The normalizations a view can show (the keys of the comparison page's Normalize choice).
NORMS = {"layer": code.LAYER, "batch": code.BATCH, "rms": RMS}
_COUNTS = {8: "eight", 10: "ten"}

# The Jacobian of a larger group is too large to draw (the Jacobian page's own cap on D).
JACOBIAN_MAX = 512
_KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}
_OPEN = (
    "Run it from the top (Run All in Jupyter, VS Code or Colab); it needs only NumPy and "
    "matplotlib."
)


@dataclass(frozen=True)
class View:
    """What a notebook is written from: the inputs with the view's options, and two texts.

    preset: the preset's name, shown in words only; link: the share link back to this view;
    norm: which normalization it shows, a key of NORMS (LayerNorm unless the comparison page
    shows another).
    """

    inputs: Inputs
    preset: str
    link: str
    norm: str = "layer"

    @property
    def code(self) -> Norm:
        """The normalization's cell texts."""
        return NORMS[self.norm]

    @property
    def axis(self) -> tuple[int, ...]:
        """The axes the normalization averages over."""
        return self.inputs.axis if self.code.axis is None else self.code.axis

    @property
    def skipped(self) -> tuple[str, ...]:
        """The affine parameters the layer leaves out, as ln_core names them."""
        applied = {"gamma": self.inputs.layer_gamma, "beta": self.inputs.layer_beta}
        return tuple(name for name, value in applied.items() if value is None)

    @property
    def options(self) -> str:
        """The layer's options in words: "affine parameters: gamma only, normalized per token"."""
        affine = f"affine parameters: {AFFINE[self.inputs.affine]}"
        if self.code.words:
            return f"{self.code.words}, {affine}"
        per = PER["sequence"] if len(self.inputs.axis) == 2 else PER["token"]
        return f"{affine}, normalized {per}"

    @property
    def tensors(self) -> tuple[str, ...]:
        """The gradients the layer has: dx, and dgamma and dbeta unless skipped."""
        return tuple(t for t in TENSORS if t[1:] not in self.skipped)


def _code(key: str, source: str) -> NotebookNode:
    """A code cell whose id is its role, so the same view gives the same file."""
    return new_code_cell(source, id=key)


def _text(key: str, source: str) -> NotebookNode:
    return new_markdown_cell(source, id=key)


def _link_markdown(link: str) -> str:
    """The share link as a Markdown link, saying where the lab must run for it to open, or a
    sentence when it is not a web address."""
    if not link.startswith(("http://", "https://")):
        return "Open LayerNorm Lab and choose the same view to see these numbers there."
    # Percent-encode anything that could end the link's target or start Markdown or HTML.
    target = quote(link, safe="/:?&=%#,;+@-._~")
    host = urlsplit(link).hostname
    if host in _THIS_COMPUTER:
        where = (
            f"It opens only where LayerNorm Lab runs on the same computer as this notebook (it "
            f"points at {host}): in Colab or on another computer, start the lab "
            "there with `./run.sh` and choose the same view."
        )
    else:
        where = "It needs LayerNorm Lab running at that address."
    return f"[Open this view in LayerNorm Lab]({target}). {where}"


# The names by which a link points at the computer it is opened on (a Colab notebook's is
# Google's, not the student's).
_THIS_COMPUTER = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


def _about(view: View) -> str:
    """The view in words: preset, shape, dtype, eps and the layer's options."""
    i = view.inputs
    return (
        f"Preset {literal(view.preset)}: x of shape {tuple(i.x.shape)} in {i.dtype}, "
        f"eps = {float_literal(i.eps)}, {view.options}."
    )


def _inputs_cell(view: View) -> str:
    """The inputs as literal arrays, the way the layer applies them."""
    i = view.inputs
    lines = [
        "import numpy as np",
        "",
        "# The inputs of this view, every digit as the lab holds them.",
    ]
    lines.append(assignment("x", i.x))
    for name, value in (("gamma", i.layer_gamma), ("beta", i.layer_beta)):
        if value is None:
            lines.append(f"{name} = None  # this layer has no {name}")
        else:
            lines.append(assignment(name, np.asarray(value)))
    lines.append(assignment("dout", i.dout) + "  # the upstream gradient dL/dout")
    lines.append(f"eps = {float_literal(i.eps)}")
    lines.append(f"axis = {view.axis!r}  # {view.code.groups[view.axis]}")
    return "\n".join(lines)


def _own_settings(view: View) -> str:
    """Steps and bounds the notebook works out itself, where the lab has no check."""
    steps = ", ".join(
        f'"{t[1:]}": {"step_x" if t == "dx" else "step_params"}' for t in view.tensors
    )
    return f"{view.code.own_steps}\nsteps = {{{steps}}}\n\n\n{code.OWN_BOUND}"


def _gradient_names(view: View) -> tuple[str, ...]:
    """dout and every gradient the lesson's staged backward computes, in its order."""
    steps = code.backward_steps(view.skipped, view.code)
    return ("dout", *(name for step in steps for name, _ in step.gradients))


def _check_settings(view: View) -> str:
    """The lab's steps and bounds for this example (numbers only)."""
    if view.code.own_steps:
        return _own_settings(view)
    i = view.inputs
    check = ln_core.gradient_check(i.x, i.layer_gamma, i.layer_beta, i.dout, i.eps, axis=view.axis)
    cache = ln_core.forward(i.x, i.layer_gamma, i.layer_beta, i.eps, view.axis)
    # The lab's differences run in float64 whatever the dtype: so do the notebook's.
    params = float_literal(parameter_step(reference_cache(cache), check.h))
    steps = {"x": float_literal(check.h), "gamma": params, "beta": params}
    step_text = ", ".join(f'"{t[1:]}": {steps[t[1:]]}' for t in view.tensors)
    bounds = ", ".join(f'"{t}": {float_literal(check.resolution[t])}' for t in view.tensors)
    return "\n".join(
        [
            "# The lab's settings for this example (ln_core/gradcheck.py): the step for x,",
            "# sigma * cbrt(machine eps * max(1, max|x| / sigma)) with float64's machine eps",
            "# (the differences run in float64), and for gamma and beta.",
            f"steps = {{{step_text}}}",
            "# How far round-off and the step can put a right gradient from the differences",
            "# (the largest of the lab's bounds per entry).",
            f"bound = {{{bounds}}}",
        ]
    )


def _header(view: View, title: str, what: str) -> str:
    return f"# {title}\n\n{_about(view)}\n\n{what} {_OPEN}\n\n{_link_markdown(view.link)}"


def _forward(view: View) -> list[NotebookNode]:
    """What both notebooks share below their opening: the inputs, the forward pass."""
    norm = view.code
    count = _COUNTS[len(norm.lines)]
    return [
        _code("inputs", _inputs_cell(view)),
        _text(
            "forward",
            f"## Forward: {count} small lines\n\nEach cell computes one node and shows it.",
        ),
        *(
            _code(f"forward-{node}", code.forward_cell(node, view.skipped, norm))
            for node in norm.nodes
        ),
        _code("sizes", norm.sizes),
    ]


def _finish(cells: list[NotebookNode]) -> bytes:
    notebook = new_notebook(
        cells=cells, metadata={"kernelspec": _KERNEL, "language_info": {"name": "python"}}
    )
    nbformat.validate(notebook)
    return nbformat.writes(notebook).encode()


def _jacobian(view: View) -> list[NotebookNode]:
    """The Jacobian of the first group and its figure, or why a large one is left out."""
    group = int(np.prod([view.inputs.x.shape[a] for a in view.axis]))
    if group > JACOBIAN_MAX:
        return [
            _text(
                "jacobian",
                f"## The Jacobian\n\nLeft out: one group has {group} entries, so its Jacobian "
                f"would have {group * group:,}; the lab draws it for groups of up to "
                f"{JACOBIAN_MAX}.",
            )
        ]
    return [
        _text("jacobian", "## The Jacobian of one group\n\nHow each output moves with each input."),
        _code("jacobian-code", view.code.jacobian),
        _code("jacobian-figure", code.FIGURE),
    ]


def lesson_notebook(view: View) -> bytes:
    """The lesson: inputs, the ten nodes, the staged backward, the closed form, the gradient
    check with its verdict, the Jacobian with a figure, and the numbers as JSON."""
    norm = view.code
    title = f"{norm.title}, forward and backward, in plain NumPy"
    what = (
        "Every node and gradient below is the one LayerNorm Lab shows for this view, to the last "
        "digit."
    )
    return _finish(
        [
            _text("title", _header(view, title, what)),
            *_forward(view),
            _text(
                "backward",
                f"## Backward: the same lines undone, {len(norm.lines)} to 1\n\nThe loss is "
                "L = sum(dout * out); each cell undoes one forward line with one local "
                "derivative.",
            ),
            *(
                _code(f"backward-{step.number}", code.backward_cell(step, view.skipped, norm))
                for step in code.backward_steps(view.skipped, norm)
            ),
            _text("closed-form", "## The closed form\n\nThe same dx from one compact formula."),
            _code("rel-error", code.REL_ERROR),
            _code("closed-form-code", norm.closed_form),
            _text(
                "gradient-check",
                "## Gradient check by central differences\n\nEach entry is moved by a small "
                "step both ways; the change of the loss over the step is its numerical "
                "gradient. Here the entries move one at a time (the lab moves many at once), "
                "so the differences' last digits, and the relative errors printed from them, "
                "can differ from the lab's by round-off; each verdict allows for that.",
            ),
            _code("check-functions", f"{norm.layer}\n\n\n{code.GRADIENT_CHECK}"),
            _code("check-settings", _check_settings(view)),
            _code("check-verdicts", code.verdicts_cell(view.tensors, _gradient_names(view))),
            *_jacobian(view),
            _text("results", "## The gradients as the lab shows them"),
            _code("results-code", code.results_cell(view.tensors)),
            _text("back", _link_markdown(view.link)),
        ]
    )


def _true_gradients(view: View, names: set[str]) -> str:
    """TRUE: the lab's gradients at `names`, as literals (ln_core's staged backward of the
    view's normalization), so each check runs one line on right inputs."""
    i = view.inputs
    if view.norm == "rms":
        cache = ln_core.rms_forward(i.x, i.layer_gamma, i.layer_beta, i.eps, view.axis)
        grads: ln_core.Grads = ln_core.rms_backward(i.dout, cache)
    else:
        grads = ln_core.backward(
            i.dout, ln_core.forward(i.x, i.layer_gamma, i.layer_beta, i.eps, view.axis)
        )
    lines = [
        "# The lab's gradients at the nodes your lines read (ln_core's staged backward), so",
        "# each check judges one line: a wrong line above does not make a right one look wrong.",
        "TRUE = {}",
    ]
    for name in sorted(names):
        prefix = f'TRUE["{name}"] = '
        lines.append(prefix + array_literal(getattr(grads, name), column=len(prefix)))
    return "\n".join(lines)


def _checks_cell(view: View, steps: tuple[Step, ...], read: dict[str, tuple[str, ...]]) -> str:
    """Everything the checks need, in one folded cell under the task and the inputs; read:
    the gradients each step's function reads, by its name."""
    upstream = {name for names in read.values() for name in names}
    true = {name for name in upstream if name != "dout" and "_via_" not in name}
    return "\n\n\n".join(
        [
            f"{_FOLDED_TITLE}\nimport numpy as np",
            code.REL_ERROR,
            code.hints_cell(steps),
            view.code.exercise_lines,
            code.EXERCISE_HELPERS,
            code.wiring_cell(steps, read),
            _true_gradients(view, true),
        ]
    )


# Colab shows a cell whose metadata says cellView "form" as this title, its code folded;
# Jupyter and VS Code fold the source of a cell marked source_hidden.
_FOLDED_TITLE = "#@title The checks: run this cell once (unfold it to read how they judge)"
_FOLDED = {"jupyter": {"source_hidden": True}, "cellView": "form"}


def exercise_notebook(view: View) -> bytes:
    """The exercise: the task first, the same inputs, the checks in one folded cell, the forward
    pass, every backward line a function with blanks to fill, each followed by a check of that
    line alone against central differences, and a final check of all the lines together."""
    norm = view.code
    title = f"Backprop by hand: {norm.title}"
    what = (
        "**Your task.** The forward pass below runs as written. Undo its lines from the last to "
        "the first: in each `undo_line_…`, replace `None  # TODO` with the gradient's formula in "
        "plain NumPy, then run the check under it. A check runs your line on the lab's own "
        "gradients, so it judges that line alone, and says pass or not yet with a hint. The "
        "last cell runs all your lines together, from dout to dx."
    )
    steps = code.backward_steps(view.skipped, norm)
    gradients = {"dout", *(name for step in steps for name, _ in step.gradients)}
    read = {code.undo_name(step): code.reads(step, gradients) for step in steps}
    return _finish(
        [
            _text("title", _header(view, title, what)),
            _code("inputs", _inputs_cell(view)),
            new_code_cell(_checks_cell(view, steps, read), id="checks", metadata=_FOLDED),
            *_forward(view)[1:],
            _text(
                "backward",
                f"## Backward: undo the lines, {len(norm.lines)} to 1\n\nEach gradient has its "
                "node's shape; `n` and `shared` are defined after the forward pass.",
            ),
            *(
                cell
                for step in steps
                for cell in (
                    _code(
                        f"blank-{step.number}",
                        code.blank_cell(step, view.skipped, norm, read[code.undo_name(step)]),
                    ),
                    _code(f"check-{step.number}", code.check_cell(step)),
                )
            ),
            _text("final", "## The whole backward pass"),
            _code("final-check", code.final_check(view.tensors)),
            _text("back", _link_markdown(view.link)),
        ]
    )
