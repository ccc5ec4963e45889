"""The current view as a Jupyter notebook: the lesson in code, or the exercise with its checks.

Both are written with the nbformat library (version 4) and run in a clean kernel with NumPy and
matplotlib only. Cells are the fixed texts of ui.export.notebook_code, chosen by the view's
options; the view only adds numbers (ui.export.python_literal) to code cells, and its words (the
preset's name, the link) to Markdown cells, quoted so they show as typed. Cell ids are the
cells' roles, so the same view always gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

import nbformat
import numpy as np
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import ln_core
from ln_core.gradcheck import TENSORS
from ln_core.numerical import parameter_step
from ui.entry.inputs import AFFINE, PER, Inputs
from ui.entry.literal import literal
from ui.export import notebook_code as code
from ui.export.notebook_norm import Norm
from ui.export.notebook_rms import RMS
from ui.export.python_literal import assignment, float_literal

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
    """The share link as a Markdown link, or a sentence when it is not a web address."""
    if not link.startswith(("http://", "https://")):
        return "Open LayerNorm Lab and choose the same view to see these numbers there."
    # Percent-encode anything that could end the link's target or start Markdown or HTML.
    target = quote(link, safe="/:?&=%#,;+@-._~")
    return f"[Open this view in LayerNorm Lab]({target})"


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
    params = float_literal(parameter_step(cache, check.h))
    steps = {"x": float_literal(check.h), "gamma": params, "beta": params}
    step_text = ", ".join(f'"{t[1:]}": {steps[t[1:]]}' for t in view.tensors)
    bounds = ", ".join(f'"{t}": {float_literal(check.resolution[t])}' for t in view.tensors)
    return "\n".join(
        [
            "# The lab's settings for this example (ln_core/gradcheck.py): the step for x,",
            "# sigma * cbrt(machine eps * max(1, max|x| / sigma)), and for gamma and beta.",
            f"steps = {{{step_text}}}",
            "# How far round-off and the step can put a right gradient from the differences",
            "# (the largest of the lab's bounds per entry).",
            f"bound = {{{bounds}}}",
        ]
    )


def _header(view: View, title: str, what: str) -> str:
    return f"# {title}\n\n{_about(view)}\n\n{what} {_OPEN}\n\n{_link_markdown(view.link)}"


def _opening(view: View, title: str, what: str) -> list[NotebookNode]:
    """What both notebooks start with: the view in words, the inputs, the forward pass."""
    norm = view.code
    count = _COUNTS[len(norm.lines)]
    return [
        _text("title", _header(view, title, what)),
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
            *_opening(view, title, what),
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


def exercise_notebook(view: View) -> bytes:
    """The exercise: the same inputs and forward pass, every gradient a blank to fill, each
    step followed by a check against central differences, and a final check of dx, dgamma,
    dbeta."""
    norm = view.code
    title = f"Backprop by hand: {norm.title}"
    what = (
        "Write each gradient where it says `None  # TODO`, then run the check below it: it "
        "compares your formula with a numerical gradient and says pass or not yet, with a hint."
    )
    steps = code.backward_steps(view.skipped, norm)
    return _finish(
        [
            *_opening(view, title, what),
            _text(
                "checks",
                "## The checks\n\nRun these cells once: they define `check`, which moves each "
                "entry of a node by a small step both ways and compares the change of the loss "
                "L = sum(dout * out) with your gradient.",
            ),
            _code("rel-error", code.REL_ERROR),
            _code("hints", code.hints_cell(steps)),
            _code("check-functions", f"{norm.exercise_lines}\n\n\n{code.EXERCISE_HELPERS}"),
            _text(
                "backward",
                f"## Backward: undo the lines, {len(norm.lines)} to 1\n\nEach gradient has its "
                "node's shape; "
                "`n` and `shared` are defined after the forward pass.",
            ),
            *(
                cell
                for step in steps
                for cell in (
                    _code(f"blank-{step.number}", code.blank_cell(step, view.skipped, norm)),
                    _code(f"check-{step.number}", code.check_cell(step)),
                )
            ),
            _text("final", "## The whole backward pass"),
            _code("final-check", code.final_check(view.tensors)),
            _text("back", _link_markdown(view.link)),
        ]
    )
