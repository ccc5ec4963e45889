"""The stepper's two drawings of the graph: the whole graph and the focused view, as DOT.

Label sizes are read from the DOT and from the stylesheet that puts them back on screen (the
browser test measures what is drawn); the focused view must hold the current node, every input
and consumer of it, and nothing else.
"""

from __future__ import annotations

import re

import pytest

from ln_core.forward import NODE_INPUTS, NODE_NAMES
from teaching.steps import N_STEPS, step
from ui.draw import graph

STEPS = range(1, N_STEPS + 1)
SHAPES = {name: (3, 1) for name in NODE_NAMES}
# Graphviz points render at 4/3 px; 14 px is the body text of the default theme, 18.4 px that
# of presenter mode.
LEGIBLE_PT = 14


def _statements(dot: str) -> dict[str, str]:
    """Node name -> its statement, for every node statement (not edges, not rank groups)."""
    found = {}
    for line in dot.splitlines():
        match = re.match(r"\s*(\w+) \[", line)
        if match and match.group(1) not in ("graph", "node", "edge"):
            found[match.group(1)] = line.strip()
    return found


def _edges(dot: str) -> list[tuple[str, str, str]]:
    """(source, target, attributes) as the data flows: a dir=back edge is turned round."""
    edges = []
    for source, target, attributes in re.findall(r"(\w+) -> (\w+)(?: \[(.*)\])?;", dot):
        if "dir=back" in attributes:
            source, target = target, source
        edges.append((source, target, attributes))
    return edges


def _font_sizes(dot: str) -> list[float]:
    return [float(size) for size in re.findall(r"fontsize=([\d.]+)", dot)]


@pytest.mark.parametrize("number", STEPS)
def test_whole_graph_labels_are_body_size_or_larger(number):
    dot = graph.graph_dot(step(number), SHAPES)
    sizes = _font_sizes(dot)
    assert sizes, "the DOT sets no font size: Graphviz would fall back to 14 pt"
    assert min(sizes) >= LEGIBLE_PT, sizes
    assert min(sizes) == graph.WHOLE_PT


@pytest.mark.parametrize("number", STEPS)
def test_whole_graph_has_every_node_and_edge_once(number):
    dot = graph.graph_dot(step(number), SHAPES)
    assert set(_statements(dot)) == set(NODE_NAMES) | set(graph.INPUTS)
    flows = sorted((s, t) for s, t, _ in _edges(dot))
    assert flows == sorted((s, n) for n, inputs in NODE_INPUTS.items() for s in inputs)


def test_whole_graph_folds_into_two_rows_of_five_nodes():
    dot = graph.graph_dot(step(1), SHAPES)
    rows = [row.split("; ") for row in re.findall(r"\{ rank=same; (.*); \}", dot)]
    node_rows = [row for row in rows if set(row) <= set(NODE_NAMES)]
    assert [len(row) for row in node_rows] == [5, 5]
    assert sorted(node_rows[0] + node_rows[1]) == sorted(NODE_NAMES)


@pytest.mark.parametrize("number", STEPS)
def test_focused_view_holds_the_current_node_and_its_neighbours(number):
    current = step(number)
    dot = graph.focus_dot(current, SHAPES)
    node = current.node
    expected = {node, *NODE_INPUTS[node], *graph.consumers(node)}
    statements = _statements(dot)
    assert set(statements) == expected
    assert "#ffe066" in statements[node] and "penwidth=3" in statements[node]
    assert min(_font_sizes(dot)) >= graph.FOCUS_PT > graph.WHOLE_PT
    active = {(s, t) for s, t, attributes in _edges(dot) if graph.EDGE_ACTIVE in attributes}
    if current.backward:
        assert {(node, c) for c in graph.consumers(node)} <= active
        assert all(s in (node, "x") for s, _ in active), active
    else:
        assert active == {(s, node) for s in NODE_INPUTS[node]}


@pytest.mark.parametrize("number", [1, 8, 11, 20])
def test_current_node_is_marked_by_more_than_its_fill(number):
    current = step(number)
    line = _statements(graph.graph_dot(current, SHAPES))[current.node]
    assert "penwidth=3" in line and graph.EDGE_ACTIVE in line and "Bold" in line


def test_stylesheet_draws_labels_at_the_size_the_layout_used():
    css = graph._VIEWS_CSS
    assert f".st-key-graph_whole svg text {{ font-size: {graph.WHOLE_PT}px" in css
    assert f".st-key-graph_focus svg text {{ font-size: {graph.FOCUS_PT}px" in css


@pytest.mark.parametrize("number", [3, 14])
def test_stepper_draws_the_whole_graph_then_the_focused_view(lab, number):
    lab.open("Stepper").step_to(number)
    lab.assert_clean()
    whole, focus = lab.graphs()
    current = step(number)
    assert whole == graph.graph_dot(current, _shapes(lab))
    assert set(_statements(focus)) == {
        current.node,
        *NODE_INPUTS[current.node],
        *graph.consumers(current.node),
    }


def _shapes(lab) -> dict[str, tuple[int, ...]]:
    rows, d = lab.state["n"], lab.state["d"]
    return {
        name: (rows, 1)
        if name in ("sample_mean", "sample_var", "sve", "sqrt_sve", "inv_sqrt_sve")
        else (rows, d)
        for name in NODE_NAMES
    }


@pytest.mark.parametrize("number", [5, 15])
def test_every_status_has_its_own_outline_not_only_its_colour(number):
    current = step(number)
    lines = _statements(graph.graph_dot(current, SHAPES))
    statuses = {current.status(name) for name in NODE_NAMES if name != current.node}
    for name in NODE_NAMES:
        if name != current.node:
            assert graph.OUTLINE[current.status(name)] in lines[name], lines[name]
    assert len({graph.OUTLINE[s] for s in statuses}) == len(statuses)  # one outline per status
    assert "▶" in lines[current.node]
