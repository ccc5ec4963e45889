"""The Stepper's two drawings of the graph (pages/stepper/graph.py): the whole graph and the
focused view of each node, placed once in Python, lit step by step in the browser.

Label sizes are the drawing's own (the browser shows it 1:1 where it has room; the browser
tests measure what is drawn); the focused view must hold the current node, every input and
consumer of it, and nothing else.
"""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import pytest

from ln_core.forward import NODE_INPUTS, NODE_NAMES
from pages.stepper import graph
from teaching.steps import N_STEPS, step

STEPS = range(1, N_STEPS + 1)
# 14 px is the body text of the default theme, 21 px that of presenter mode.
LEGIBLE_PX, PRESENTER_PX = 14, 21
FLOWS = sorted((s, n) for n, inputs in NODE_INPUTS.items() for s in inputs)
CSS = (Path(graph.__file__).parent / "walk.css").read_text()


def _names(drawing: graph.Drawing) -> list[str]:
    return [box.name for box in drawing.boxes]


def _overlap(a: graph.Box, b: graph.Box) -> bool:
    return abs(a.x - b.x) < (a.width + b.width) / 2 and abs(a.y - b.y) < (a.height + b.height) / 2


def test_whole_graph_has_every_node_and_edge_once():
    whole = graph.whole()
    assert sorted(_names(whole)) == sorted((*NODE_NAMES, *graph.INPUTS))
    assert sorted((s, t) for s, t, _ in whole.edges) == FLOWS


def test_whole_graph_folds_into_two_rows_of_five_nodes():
    rows: dict[float, list[str]] = {}
    for box in graph.whole().boxes:
        if box.name in NODE_NAMES:
            rows.setdefault(box.y, []).append(box.name)
    assert sorted(len(row) for row in rows.values()) == [5, 5]


@pytest.mark.parametrize("drawing", [graph.whole(), *map(graph.focus, NODE_NAMES)])
def test_no_two_boxes_overlap_and_every_label_fits_its_box(drawing):
    assert not [(a.name, b.name) for a, b in combinations(drawing.boxes, 2) if _overlap(a, b)]
    for box in drawing.boxes:
        assert box.width >= len(box.text) * drawing.font * 0.56, box
        assert 0 <= box.x - box.width / 2 and box.x + box.width / 2 <= drawing.width, box


def test_labels_are_body_size_or_larger():
    assert graph.whole().font >= LEGIBLE_PX
    assert all(graph.focus(node).font >= PRESENTER_PX for node in NODE_NAMES)


@pytest.mark.parametrize("number", STEPS)
def test_focused_view_holds_the_current_node_and_its_neighbours(number):
    current = step(number)
    node = current.node
    focus = graph.focus(node)
    assert set(_names(focus)) == {node, *NODE_INPUTS[node], *graph.consumers(node)}
    assert len(_names(focus)) == len(set(_names(focus)))
    assert sorted((s, t) for s, t, _ in focus.edges) == [
        (s, t) for s, t in FLOWS if {s, t} <= set(_names(focus))
    ]
    # Inputs above the node, consumers below it.
    y = {box.name: box.y for box in focus.boxes}
    assert all(y[i] < y[node] for i in NODE_INPUTS[node])
    assert all(y[c] > y[node] for c in graph.consumers(node))


@pytest.mark.parametrize("number", STEPS)
def test_each_step_lights_its_node_and_the_edges_it_uses(number):
    current = step(number)
    node = current.node
    lit = graph.lit(current)
    assert [n for n, status in lit["status"].items() if status == "current"] == [node]
    active = {tuple(edge.split(">")) for edge in lit["active"]}
    if current.backward:
        assert {(node, c) for c in graph.consumers(node)} <= active
        assert all(s in (node, "x") for s, _ in active), active
    else:
        assert active == {(s, node) for s in NODE_INPUTS[node]}
    assert (lit["status"]["x"] == "finished") == (number == N_STEPS)


def _rule(selector: str) -> str:
    match = re.search(re.escape(selector) + r"[^{]*\{([^}]*)\}", CSS)
    assert match, f"no rule for {selector} in walk.css"
    return match.group(1)


def test_every_status_has_its_own_outline_not_only_its_colour():
    outlines = {
        status: _rule(f".lnlab-{status} rect") for status in ("pending", "gradient", "current")
    }
    assert "stroke-dasharray" in outlines["pending"]
    assert "stroke-width" in outlines["gradient"] and "stroke-width" in outlines["current"]
    assert "font-weight: 700" in _rule(".lnlab-current .lnlab-name")
    assert len(set(outlines.values())) == len(outlines)
