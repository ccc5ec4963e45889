"""The twenty steps for one set of inputs, computed once and written out for the browser.

The browser steps through what this module returns without asking the server again, so each
step carries everything its screen shows: the heading, what the graph lights, the node's
value or gradient for the chosen vector, the verdict of its numerical check and what is one
click away (every vector, the check's numbers, why). Every number is ln_core's, formatted
here; the browser only picks the step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import ln_core
from ln_core.forward import NODE_NAMES
from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS
from pages.stepper import graph
from pages.stepper.formulas import MERGES
from teaching.glossary import meaning
from teaching.steps import N_STEPS, Step, step
from teaching.verdicts import numerical_agreement

# Numbers on screen at 4 significant digits (as the lab's tables show them), every digit on
# hover; a block shows at most this many entries of its vector, the rest one click away.
SHOWN = "{:.4g}"
SHOWN_ENTRIES = 8
MARKS = {PASS: "✓", FAIL: "✗", CANNOT_RESOLVE: "?"}


@dataclass(frozen=True)
class Numbers:
    """One run's numbers: the pass (`cache`, `grads`) of the inputs, the numerical check of
    every node (and x) for the vector on screen (`index` into the pass), the dtype's name and
    the hint that says which inputs would resolve what these cannot."""

    cache: ln_core.Cache
    grads: ln_core.StagedGrads
    checks: dict[str, ln_core.NodeCheck]
    index: tuple[int, ...]
    dtype: str
    hint: str


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _entries(vector: np.ndarray) -> dict:
    """A vector's entries as shown (4 digits) and in full (on hover)."""
    flat = np.asarray(vector).reshape(-1)
    return {
        "shown": [SHOWN.format(v) for v in flat.tolist()],
        "full": [str(v) for v in flat],
    }


def _block(title: str, vector: np.ndarray) -> dict:
    return {"title": title, **_entries(vector)}


def _rows(array: np.ndarray) -> dict:
    """An array as one row per vector, every entry at 4 digits (built only when opened)."""
    array = np.asarray(array)
    rows = array.reshape(-1, array.shape[-1]) if array.ndim > 1 else array.reshape(1, -1)
    leading = array.shape[:-1]
    if not leading:
        labels = ["vector"]
    elif len(leading) == 1:
        labels = [f"row {i}" for i in range(leading[0])]
    else:
        labels = [f"b{b} t{t}" for b in range(leading[0]) for t in range(leading[1])]
    return {
        "full": [[str(v) for v in row] for row in rows],
        "columns": [str(j) for j in range(rows.shape[1])],
        "rows": [
            [label, *[SHOWN.format(v) for v in row]]
            for label, row in zip(labels, rows.tolist(), strict=True)
        ],
    }


def vector_name(index: tuple[int, ...]) -> str:
    if not index:
        return "the vector"
    if len(index) == 1:
        return f"row {index[0]}"
    return f"b{index[0]} t{index[1]}"


def _verdict(numbers: Numbers, node: str) -> dict:
    """The check of d`node` in one line, the reasoning one click away."""
    result = numbers.checks[node]
    verdict = numerical_agreement(
        f"d{node} from the backward pass against its central-difference estimate",
        result.judgement,
        numbers.dtype,
        numbers.hint,
    )
    return {
        "name": f"d{node}",
        "status": verdict.status,
        "line": f"{MARKS[verdict.status]} d{node}: {verdict.headline}",
        "why": f"Why we can say so: {verdict.reason} {verdict.help} Relative error "
        f"{result.rel_error:.2e}; largest |analytic − numerical| {result.max_abs_diff:.2e}.",
        "table": {
            "columns": [str(j) for j in range(result.numerical.size)],
            "rows": [
                [f"analytic d{node}", *_entries(result.analytic)["shown"]],
                [f"numerical d{node}", *_entries(result.numerical)["shown"]],
            ],
        },
    }


def _forward(node: str, value: np.ndarray, index: tuple[int, ...]) -> dict:
    """A forward step's numbers: the node's `value`, at `index` and for every vector."""
    title = f"{node} for {vector_name(index)} · shape {shape_text(value.shape)}"
    return {
        "blocks": [_block(title, value[index])],
        "checks": [],
        "rows": {"title": node, "table": _rows(value)},
    }


def _backward(current: Step, numbers: Numbers) -> dict:
    node, index, grads = current.node, numbers.index, numbers.grads
    gradient = grads.of(node)
    title = f"d{node} for {vector_name(index)} · shape {shape_text(gradient.shape)}"
    blocks = [_block(title, gradient[index])]
    if node in MERGES:  # a merge: the gradient both paths add up to, then each path's part
        parts = MERGES[node]
        shown = [part for part in (parts[-1], *parts[:-1]) if part[1] != f"d{node}"]
        blocks += [
            _block(f"{label} ({vector_name(index)})", getattr(grads, field)[index])
            for label, field in shown
        ]
    more = (
        "Where it comes from: both paths' parts" if node in MERGES else "The parameters' gradient"
    )
    if node == "normalized_x" and grads.dgamma is not None:
        blocks.append(_block("dgamma: summed over every vector", grads.dgamma))
    if node == "gx" and grads.dbeta is not None:
        blocks.append(_block("dbeta: summed over every vector", grads.dbeta))
    return {
        "blocks": blocks,
        "more": more,
        "checks": [_verdict(numbers, checked) for checked in current.checked],
        "rows": {"title": f"d{node}", "table": _rows(gradient)},
    }


def _heading(current: Step) -> str:
    direction = "backward" if current.backward else "forward"
    name = f"{'d' if current.backward else ''}{current.node}"
    finished = " and dx" if current.backward and current.index == 1 else ""
    place = f"Step {current.number} of {N_STEPS} · {direction} · node {current.index}"
    return f"{place}: {name}{finished}"


def _frame(current: Step) -> dict:
    """What every step has, whatever the inputs: its heading, name and graph."""
    return {
        "number": current.number,
        "heading": _heading(current),
        "label": current.label,
        "node": current.node,
        "backward": current.backward,
        "meaning": f"{current.node}: {meaning(current.node)}.",
        **graph.lit(current),
    }


def steps(numbers: Numbers | None, locked: dict[int, str]) -> list[dict]:
    """The twenty steps; `locked`: the steps shown without their numbers, with what to do
    first (a question to answer, or inputs with no defined output). `numbers` is None where
    nothing past the locked steps is defined."""
    walked = []
    for number in range(1, N_STEPS + 1):
        current = step(number)
        frame = _frame(current)
        if number in locked or numbers is None:
            frame["locked"] = locked.get(number, "")
        elif current.backward:
            frame.update(_backward(current, numbers))
        else:
            node = current.node
            frame.update(_forward(node, getattr(numbers.cache, node), numbers.index))
        if numbers is not None and numbers.cache.skipped_in(current.node):
            skipped = " and ".join(numbers.cache.skipped_in(current.node))
            frame["skipped"] = f"This layer has no {skipped}: {numbers.cache.line(current.node)}"
        walked.append(frame)
    return walked


def _first(vector: np.ndarray) -> str:
    shown = _entries(vector)["shown"]
    more = f" … ({len(shown)} entries)" if len(shown) > SHOWN_ENTRIES else ""
    return " ".join(shown[:SHOWN_ENTRIES]) + more


def hover(numbers: Numbers) -> dict:
    """What hovering a node shows: its shape, and its value and gradient for the vector on
    screen (the browser shows each only where the step has it)."""
    found = {}
    for node in NODE_NAMES:
        value = getattr(numbers.cache, node)
        found[node] = {
            "shape": shape_text(value.shape),
            "value": _first(value[numbers.index]),
            "gradient": _first(numbers.grads.of(node)[numbers.index]),
        }
    return found


def before_the_root(nodes: dict[str, np.ndarray], index: tuple[int, ...], error: str) -> list[dict]:
    """The walk where the output is not defined: nodes 1 to 5 (`nodes`) shown, every later
    step locked with the reason (`error`)."""
    walked = []
    for number in range(1, N_STEPS + 1):
        current = step(number)
        frame = _frame(current)
        if not current.backward and current.node in nodes:
            frame.update(_forward(current.node, nodes[current.node], index))
        else:
            frame["locked"] = error
        walked.append(frame)
    return walked


def drawings() -> dict:
    """The whole graph and every node's focused view, with each box's label."""
    return {
        "whole": graph.whole().to_json(),
        "focus": {node: graph.focus(node).to_json() for node in NODE_NAMES},
        "labels": {name: graph.label(name) for name in (*NODE_NAMES, *graph.INPUTS)},
    }
