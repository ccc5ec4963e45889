"""The NumPy source of the notebooks' code cells: fixed text a student reads, chosen by the view.

The fixed cells are notebook source in ui/export/cells (jupytext's percent format); the lines
of the forward pass and their undoing come from the lesson's table (ln_core/nodes.py). No cell
holds anything from a view except through ui.export.python_literal (the inputs, the check's
steps and bounds): the view's options only choose between texts.
The lines mirror ln_core/forward.py and ln_core/backward.py operation for operation, in the same
order, so a notebook computes the lab's numbers to the last bit in float64 and in float32.
LAYER and BATCH are the same lines: BatchNorm only averages over the batch axis instead.

`skipped` is ln_core's name for the affine parameters a layer leaves out: (), ("beta",) or
("gamma", "beta"). A line that would use a skipped parameter passes its other input on.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import replace

from ln_core.forward import LINES
from ln_core.node_check import NODE_UNITS
from ln_core.nodes import NODE_NAMES, NODES, Node
from teaching.glossary import meaning
from ui.export.notebook_norm import Norm, Step, cells, fill

# The fixed texts of the cells, kept as notebook source (ui/export/cells, percent format).
CELLS = cells("notebook")
LAYER_CELLS = cells("layernorm")

# Each node's forward line as NumPy, from the lesson's table (mean() keeps the axes as size 1).
FORWARD = {node.name: f"{node.name} = {node.numpy}" for node in NODES}
# The two lines as they run when their parameter is left out.
PASSED_ON = {"gx": "gx = normalized_x", "out": "out = gx"}


def sizes(statistic: str, averaged: str, shared: str, why: str) -> str:
    """The two sizes the backward pass needs, from the forward pass's own shapes: n, the
    entries `statistic` (a node) averages over (`averaged`, in words), and the axes gamma and
    beta are shared along (`shared`, an expression; `why`, in words)."""
    return fill(CELLS["sizes"], statistic=statistic, averaged=averaged, shared=shared, why=why)


def complete(gradients: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The gradients whole after a step: all it gives but the parts of a sum ("_via_")."""
    return tuple(name for name, _ in gradients if "_via_" not in name)


def _undone(node: Node, reused: str) -> Step:
    """A forward line of the table undone, as ln_core/backward.py undoes it."""
    number = NODE_NAMES.index(node.name) + 1
    return Step(number, node.undo, complete(node.undo), node.rule.format(reused=reused))


def _last_two(skipped: tuple[str, ...], count: int, reused: str) -> tuple[Step, Step]:
    """The last two lines (out and gx, of `count`), which depend on the affine parameters the
    layer applies; `reused`: what the parameters are shared by, in words. Every normalization
    here ends with LayerNorm's two affine lines."""
    out, gx = (replace(_undone(NODES[i], reused), number=count + i + 1) for i in (-1, -2))
    if "beta" in skipped:
        passed = out.gradients[:1]
        out = Step(
            count,
            passed,
            complete(passed),
            "out = gx passes gx on, so its gradient is dout unchanged.",
        )
    if "gamma" in skipped:
        passed = (("dnormalized_x", "dgx"),)
        gx = Step(
            count - 1,
            passed,
            complete(passed),
            "gx = normalized_x passes normalized_x on, so its gradient is dgx unchanged.",
        )
    return out, gx


# Lines 8 to 1 undone, from the lesson's table.
_MIDDLE = tuple(_undone(node, "") for node in reversed(NODES[:-2]))


def backward_steps(skipped: tuple[str, ...], norm: Norm) -> tuple[Step, ...]:
    """The forward lines undone, from the last to line 1 (as ln_core/backward.py)."""
    return (*_last_two(skipped, len(norm.lines), norm.reused), *norm.middle)


def forward_line(node: str, skipped: tuple[str, ...], norm: Norm) -> str:
    """The node's NumPy line as this layer runs it."""
    missing = set(skipped) & {"gx": {"gamma"}, "out": {"beta"}}.get(node, set())
    return PASSED_ON[node] if missing else norm.forward[node]


def line_heading(number: int, skipped: tuple[str, ...], norm: Norm) -> str:
    """`Line 9: gx = gamma * normalized_x`, in ln_core's words (saying what it skipped)."""
    return f"Line {number}: {norm.lines[number - 1].text(skipped)}"


def forward_cell(node: str, skipped: tuple[str, ...], norm: Norm) -> str:
    """One forward node: its line in words, the NumPy line, and the value shown."""
    heading = line_heading(norm.nodes.index(node) + 1, skipped, norm)
    return (
        f"# {heading}\n# {node}: {norm.meanings[node]}\n{forward_line(node, skipped, norm)}\n{node}"
    )


def backward_cell(step: Step, skipped: tuple[str, ...], norm: Norm) -> str:
    """One forward line undone, in plain NumPy, headed by the line and its rule."""
    lines = "\n".join(f"{name} = {expression}" for name, expression in step.gradients)
    heading = line_heading(step.number, skipped, norm)
    return f"# Undo {heading}\n{_comment(step.rule)}\n{lines}"


def reads(step: Step, gradients: Collection[str]) -> tuple[str, ...]:
    """The gradients (of `gradients`) a step's lines read that it does not give itself."""
    own = {name for name, _ in step.gradients}
    found: list[str] = []
    for _, expression in step.gradients:
        for name in _NAME.findall(expression):
            if name in gradients and name not in own and name not in found:
                found.append(name)
    return tuple(found)


def undo_name(step: Step) -> str:
    """The exercise's function for a step: undo_line_7."""
    return f"undo_line_{step.number}"


def blank_cell(step: Step, skipped: tuple[str, ...], norm: Norm, read: tuple[str, ...]) -> str:
    """The same step for the exercise: a function of the gradients it reads, every gradient it
    gives left as a marked blank."""
    gives = [name for name, _ in step.gradients]
    blanks = [
        f"    {name} = None  # TODO: your formula{'' if name in step.checked else _LATER}"
        for name in gives
    ]
    return "\n".join(
        [
            f"# Undo {line_heading(step.number, skipped, norm)}",
            f"def {undo_name(step)}({', '.join(read)}):",
            *blanks,
            f"    return {', '.join(gives)}",
        ]
    )


_LATER = " (one part of a sum; it is checked with that sum)"
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def _comment(text: str, width: int = 96) -> str:
    """Text as comment lines of at most `width` characters."""
    lines, current = [], "#"
    for word in text.split():
        if len(current) + 1 + len(word) > width:
            lines.append(current)
            current = "#"
        current += " " + word
    return "\n".join([*lines, current])


def numpy_lines(skipped: tuple[str, ...] = ()) -> str:
    """The whole forward and backward pass as plain lines, for the one-cell NumPy snippet."""
    forward = [forward_line(node, skipped, LAYER) for node in NODE_NAMES]
    backward = [
        f"{name} = {expression}"
        for step in backward_steps(skipped, LAYER)
        for name, expression in step.gradients
    ]
    return "\n".join(
        [
            "# Forward: the ten nodes.",
            *forward,
            "",
            LAYER.sizes,
            "",
            "# Backward: the lines undone, 10 to 1, for the loss sum(dout * out).",
            *backward,
        ]
    )


REL_ERROR = CELLS["rel-error"]
# Central differences of the loss sum(dout * out); the lab's verdict rule (ln_core/gradcheck.py).
GRADIENT_CHECK = CELLS["gradient-check"]
# Where the lab has no check, the notebook bounds its own differences (after `steps`), by the
# reasoning of ln_core/gradcheck.py worked out from its own numbers.
OWN_BOUND = CELLS["own-bound"]


def verdicts_cell(tensors: tuple[str, ...], gradients: tuple[str, ...]) -> str:
    """Both methods' gradients against the numerical ones, each with the lab's verdict;
    gradients: the names the staged backward above computed (its underflow is looked for
    there, as ln_core.verdict's rule does)."""
    staged = ", ".join(f'"{t}": {t}' for t in tensors)
    closed = ", ".join(f'"{t}": {"dx_closed" if t == "dx" else t}' for t in tensors)
    return fill(
        CELLS["check-verdicts"],
        gradients=", ".join(gradients),
        staged=f"{{{staged}}}",
        closed=f"{{{closed}}}",
    )


def jacobian(factor: str, formula: str, projection: str) -> str:
    """The layer's Jacobian for one group, from the closed form, and the check that dout @ J
    is dx. factor: the node holding s; formula: J in words; projection: the matrix s scales."""
    return fill(CELLS["jacobian"], factor=factor, formula=formula, projection=projection)


FIGURE = CELLS["jacobian-figure"]


def results_cell(tensors: tuple[str, ...]) -> str:
    """Prints the view's gradients as JSON, at full precision (what the lab shows)."""
    entries = ", ".join(f'"{t}": {t}.tolist()' for t in tensors)
    return f"import json\n\nprint(json.dumps({{{entries}}}))"


# The exercise's numerical gradient of any node: move it, re-run only the lines after it, and
# bound what round-off and the step can do to it (ln_core/node_check.py's reasoning, worked out
# from the notebook's own numbers, so it holds for any normalization here).
EXERCISE_HELPERS = CELLS["exercise-helpers"]


def hints_cell(steps: tuple[Step, ...]) -> str:
    """HINTS: each checked gradient's rule (lab-written text, as Python string literals)."""
    entries = "\n".join(f"    {name!r}: {step.rule!r}," for step in steps for name in step.checked)
    return f"HINTS = {{\n{entries}\n}}"


def wiring_cell(steps: tuple[Step, ...], read: Mapping[str, tuple[str, ...]]) -> str:
    """Which gradients each of the exercise's functions gives and reads, in backward order."""
    gives = "\n".join(
        f"    {undo_name(step)!r}: {tuple(name for name, _ in step.gradients)!r}," for step in steps
    )
    reading = "\n".join(f"    {undo_name(step)!r}: {read[undo_name(step)]!r}," for step in steps)
    return f"GIVES = {{\n{gives}\n}}\nREADS = {{\n{reading}\n}}"


def check_cell(step: Step) -> str:
    """The exercise's check of one step's function."""
    return f"check({undo_name(step)})"


def final_check(tensors: tuple[str, ...]) -> str:
    """The exercise's last cell: all your lines together, and the dx, dgamma and dbeta they
    give."""
    return fill(CELLS["final-check"], tensors=", ".join(f'"{t}"' for t in tensors))


def _wrapped(entries: list[str], indent: int, width: int = 96) -> str:
    """Entries joined by commas, a new line (indented) before one that would pass `width`."""
    lines, current = [], ""
    for entry in entries:
        if current and indent + len(current) + len(entry) + 2 > width:
            lines.append(current + ",")
            current = ""
        current = f"{current}, {entry}" if current else entry
    return f"\n{' ' * indent}".join([*lines, current])


def _as_function(node: Node) -> str:
    """The node's NumPy line as a function of the values before it: lambda v: v["x"] - ..."""
    body = node.numpy
    for name in node.inputs:
        if name != "eps":  # eps is the notebook's own setting, not a node's value
            body = re.sub(rf"\b{name}\b", f'v["{name}"]', body)
    return f'    "{node.name}": lambda v: {body},'


# The exercise's table of LayerNorm's forward lines, from the lesson's table (the affine lines
# gx and out, the last two of every normalization here, are in EXERCISE_HELPERS).
LAYERNORM_LINES = fill(
    LAYER_CELLS["exercise-lines"],
    unit=_wrapped([f'"{node}": "{unit}"' for node, unit in NODE_UNITS.items()], 8),
    line="\n".join(_as_function(node) for node in NODES[:-2]),
    values=_wrapped([f'"{name}": {name}' for name in ("x", "gamma", "beta", *NODE_NAMES)], 12),
)

LAYER = Norm(
    title="LayerNorm",
    words="",
    lines=LINES,
    forward=FORWARD,
    meanings={node: meaning(node) for node in NODE_NAMES},
    middle=_MIDDLE,
    reused="every group",
    axis=None,
    groups={
        (-1,): "per token: a vector's D features share one mean",
        (-2, -1): "per sequence: a sequence's L x D numbers share one mean",
    },
    sizes=sizes(
        "sample_mean",
        "D per token, L x D per sequence",
        "tuple(range(x.ndim - len(axis)))",
        "gamma and beta are shared by every group",
    ),
    closed_form=LAYER_CELLS["closed-form"],
    # The layer in one function: the table's lines up to normalized_x, then the affine two.
    layer=fill(
        LAYER_CELLS["layer"],
        forward="\n    ".join(f"{node.name} = {node.numpy}" for node in NODES[:-2]),
    ),
    jacobian=jacobian(
        "inv_sqrt_sve",
        "J = gamma_i * s * (1 if i == j else 0) - gamma_i * s * (1 + normalized_x_i * "
        "normalized_x_j) / P",
        "np.eye(P) - 1 / P - np.outer(xhat, xhat) / P",
    ),
    exercise_lines=LAYERNORM_LINES,
)

# BatchNorm is LayerNorm's lines over the batch axis: each feature is a group of N values.
BATCH = replace(
    LAYER,
    title="BatchNorm",
    words="BatchNorm: each feature normalized over the N vectors",
    meanings={
        **LAYER.meanings,
        "sample_mean": "the mean of the feature's N entries, one per vector of the batch",
        "sample_var": "sample variance: the mean of the squared deviations (divided by N)",
    },
    reused="every vector of the batch",
    axis=(0,),
    groups={(0,): "BatchNorm: a feature's N values, one per vector, share one mean"},
    sizes=sizes(
        "sample_mean",
        "the N vectors of the batch",
        "axis",
        "gamma and beta have one entry per feature, used by every vector of the batch",
    ),
)
