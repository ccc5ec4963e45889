"""The ten-node computation graph as Graphviz DOT, coloured by what each step has computed."""

from __future__ import annotations

from ln_core.forward import NODE_INPUTS, NODE_NAMES
from ui.steps import Step

# Colours chosen to stay distinct on a projector and for red-green colour blindness.
FILL = {"pending": "#f2f2f2", "forward": "#cfe3ff", "gradient": "#ffd8a8"}
CURRENT = "#ffe066"
EDGE, EDGE_ACTIVE = "#9a9a9a", "#c2255c"
INPUTS = ("x", "gamma", "beta", "eps")


def consumers(node: str) -> list[str]:
    """The nodes that read `node` (where its gradient comes from)."""
    return [name for name, inputs in NODE_INPUTS.items() if node in inputs]


def graph_dot(current: Step, shapes: dict[str, tuple[int, ...]]) -> str:
    """DOT source: inputs as ellipses, nodes as boxes labelled with number, name and shape.

    Forward steps highlight the edges into the current node; backward steps highlight the
    edges out of it, along which its gradient arrives.
    """
    lines = [
        "digraph layernorm {",
        '  graph [rankdir=LR, nodesep=0.15, ranksep=0.25, bgcolor="transparent"];',
        '  node [fontname="Helvetica", fontsize=12, style="filled,rounded", shape=box,'
        " penwidth=1, height=0.3];",
        f'  edge [color="{EDGE}", arrowsize=0.6];',
    ]
    for name in INPUTS:
        lines.append(
            f'  {name} [shape=ellipse, style=filled, fillcolor="#e9ecef", label="{name}"];'
        )
    for position, name in enumerate(NODE_NAMES, start=1):
        status = current.status(name)
        is_current = name == current.node
        fill = CURRENT if is_current else FILL[status]
        border = ', penwidth=3, color="#000000"' if is_current else ""
        shape = "x".join(str(n) for n in shapes.get(name, ()))
        lines.append(
            f'  {name} [label="{position}. {name}\\n({shape})", fillcolor="{fill}"{border}];'
        )
    for name, inputs in NODE_INPUTS.items():
        for source in inputs:
            active = (not current.backward and name == current.node) or (
                current.backward and source == current.node
            )
            style = f' [color="{EDGE_ACTIVE}", penwidth=2.5]' if active else ""
            lines.append(f"  {source} -> {name}{style};")
    if current.backward and current.index == 1:
        # The last step also finishes dx, which collects x's two outgoing edges.
        lines.append('  x [fillcolor="#ffd8a8", penwidth=3];')
        lines.extend(f'  x -> {n} [color="{EDGE_ACTIVE}", penwidth=2.5];' for n in consumers("x"))
    lines.append("}")
    return "\n".join(lines)
