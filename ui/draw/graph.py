"""The ten-node computation graph as Graphviz DOT, coloured by what each step has computed.

Two drawings of the same step: the whole graph folded into two rows, so that at the width of a
1024-px projector its labels render at the size of the page's body text, and a focused view of
the current node with its inputs above and its consumers below, for screens too narrow for the
whole graph to stay readable.
"""

from __future__ import annotations

import streamlit as st

from ln_core.forward import NODE_INPUTS, NODE_NAMES
from teaching.steps import Step

# Colours chosen to stay distinct on a projector and for red-green colour blindness.
FILL = {"pending": "#f2f2f2", "forward": "#cfe3ff", "gradient": "#ffd8a8"}
CURRENT = "#ffe066"
# Colour never says it alone: each status has its own outline too.
OUTLINE = {"pending": 'style="filled,rounded,dotted"', "forward": "", "gradient": "peripheries=2"}
EDGE, EDGE_ACTIVE = "#8a8a8a", "#c2255c"
INPUT_FILL = "#e9ecef"
INPUTS = ("x", "gamma", "beta", "eps")

# Type size in points; Graphviz points render at 4/3 px when the drawing is not shrunk, so 15 pt
# is 20 px, above the presenter's body text (18.4 px), and 16 pt is 21 px.
WHOLE_PT = 15
FOCUS_PT = 16

# The whole graph reads as a snake: the first row of nodes left to right, the second right to
# left under it; x and eps sit above the nodes they feed, gamma and beta below theirs.
ROWS = (
    ("x", "eps"),
    ("sample_mean", "x_sm", "sq_xsm", "sample_var", "sve"),
    ("out", "gx", "normalized_x", "inv_sqrt_sve", "sqrt_sve"),
    ("gamma", "beta"),
)


def consumers(node: str) -> list[str]:
    """The nodes that read `node` (where its gradient comes from)."""
    return [name for name, inputs in NODE_INPUTS.items() if node in inputs]


def _edges() -> list[tuple[str, str]]:
    return [(source, name) for name, inputs in NODE_INPUTS.items() for source in inputs]


def _active(current: Step, source: str, target: str) -> bool:
    """Forward steps light the edges into the current node, backward steps the edges out of it
    (along which its gradient arrives); the last step also finishes dx, along x's edges."""
    if not current.backward:
        return target == current.node
    return source == current.node or (current.index == 1 and source == "x")


def _node(name: str, current: Step, shapes: dict[str, tuple[int, ...]]) -> str:
    """One node statement: inputs as grey ellipses, nodes as boxes with number, name and shape."""
    if name in INPUTS:
        finished_dx = name == "x" and current.backward and current.index == 1
        fill = FILL["gradient"] if finished_dx else INPUT_FILL
        thick = ", penwidth=3" if finished_dx else ""
        return f'  {name} [shape=ellipse, height=0.3, fillcolor="{fill}", label="{name}"{thick}];'
    position = NODE_NAMES.index(name) + 1
    shape = "x".join(str(n) for n in shapes.get(name, ()))
    label = f"{position}. {name}\\n({shape})"
    if name == current.node:
        return (
            f'  {name} [label="▶ {label}", fillcolor="{CURRENT}", penwidth=3, '
            f'color="{EDGE_ACTIVE}", fontname="Helvetica-Bold", margin="0.18,0.05"];'
        )
    status = current.status(name)
    outline = f", {OUTLINE[status]}" if OUTLINE[status] else ""
    return f'  {name} [label="{label}", fillcolor="{FILL[status]}"{outline}];'


def _edge(current: Step, source: str, target: str, backwards: bool = False) -> str:
    """One edge; `backwards` draws it from target to source with the arrow turned round, which
    makes Graphviz place the target above the source, or to its left within a row."""
    style = [f'color="{EDGE_ACTIVE}", penwidth=4'] if _active(current, source, target) else []
    if backwards:
        source, target = target, source
        style.append("dir=back")
    attributes = f" [{', '.join(style)}]" if style else ""
    return f"  {source} -> {target}{attributes};"


def _header(name: str, points: int, rankdir: str) -> list[str]:
    return [
        f"digraph {name} {{",
        f'  graph [rankdir={rankdir}, nodesep=0.25, ranksep=0.3, bgcolor="transparent"];',
        f'  node [fontname="Helvetica", fontsize={points}, style="filled,rounded", shape=box,'
        ' penwidth=1, margin="0.1,0.05"];',
        f'  edge [color="{EDGE}", penwidth=1.5, arrowsize=0.8];',
    ]


def graph_dot(current: Step, shapes: dict[str, tuple[int, ...]]) -> str:
    """DOT source of the whole graph at `current`; `shapes` maps node names to array shapes."""
    lines = _header("layernorm", WHOLE_PT, "TB")
    lines.extend(_node(name, current, shapes) for name in (*NODE_NAMES, *INPUTS))
    lines.extend(f"  {{ rank=same; {'; '.join(row)}; }}" for row in ROWS)
    # Reading order: row by row, each row in its own direction.
    place = {name: (r, row.index(name)) for r, row in enumerate(ROWS) for name in row}
    lines.extend(
        _edge(current, source, target, place[source] > place[target]) for source, target in _edges()
    )
    lines.append("}")
    return "\n".join(lines)


def focus_dot(current: Step, shapes: dict[str, tuple[int, ...]]) -> str:
    """DOT source of the current node between its inputs (above) and its consumers (below),
    with every edge among them."""
    node = current.node
    inputs, readers = NODE_INPUTS[node], consumers(node)
    shown = {*inputs, node, *readers}
    lines = _header("focus", FOCUS_PT, "TB")
    lines.extend(_node(name, current, shapes) for name in (*inputs, node, *readers))
    lines.extend(f"  {{ rank=same; {'; '.join(row)}; }}" for row in (inputs, readers) if row)
    lines.extend(
        _edge(current, source, target)
        for source, target in _edges()
        if source in shown and target in shown
    )
    lines.append("}")
    return "\n".join(lines)


# Below 640 px the whole graph would shrink until its labels are unreadable: the focused view
# takes its place. Streamlit sets every label of a chart to 0.6rem, whatever the DOT says: the
# labels are put back at the size the layout was computed for (SVG px are the drawing's units).
_VIEWS_CSS = f"""<style>
.st-key-graph_whole svg text {{ font-size: {WHOLE_PT}px !important; }}
.st-key-graph_focus svg text {{ font-size: {FOCUS_PT}px !important; }}
.st-key-graph_focused svg text {{ font-size: {FOCUS_PT}px !important; }}
.st-key-graph_focus {{ display: none; }}
@media (max-width: 640px) {{
  .st-key-graph_whole {{ display: none; }}
  .st-key-graph_focus {{ display: flex; }}
}}
</style>"""


def draw(current: Step, shapes: dict[str, tuple[int, ...]], focused: bool = False) -> None:
    """Both drawings of the step, each shown at the screen widths where it stays readable;
    `focused`: the focused drawing alone, at every width."""
    st.html(_VIEWS_CSS)
    if focused:
        st.container(key="graph_focused").graphviz_chart(focus_dot(current, shapes))
    else:
        st.container(key="graph_whole").graphviz_chart(graph_dot(current, shapes))
        st.container(key="graph_focus").graphviz_chart(focus_dot(current, shapes))
    legend = (
        "Ellipses: the inputs x, gamma, beta, eps, given. Dotted grey boxes: not computed yet. "
        "Solid blue boxes: value known. Double-outlined orange boxes: gradient known. "
        "▶ with a thick outline and bold name, yellow: this step. "
        + (
            "Thick edges: the inputs of this node."
            if not current.backward
            else "Thick edges: where this node's gradient comes from."
        )
    )
    if focused:  # beside the step on a projector, the key folds away
        with st.expander("How to read the graph"):
            st.caption(legend)
    else:
        st.caption(legend)
