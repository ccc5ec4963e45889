"""The ten-node graph as boxes and arrows placed once, for the browser to light step by step.

Two drawings of the same graph: the whole graph folded into two rows (a snake: the first row left
to right, the second right to left under it; x and eps above the nodes they feed, gamma and beta
below theirs), and for each node a focused view of it with its inputs above and its consumers
below, for a projector's column and a phone, where the whole graph would shrink until its labels
are unreadable. Positions are in the drawing's own units: the browser shows the focused view
1:1 where it has room, and scales the whole graph to its column (at a 1440 px desk its names
show at about 14 px, readable from the back row: tests/browser/test_stepper.py measures it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ln_core.forward import NODE_INPUTS, NODE_NAMES
from teaching.steps import Step

INPUTS = ("x", "gamma", "beta", "eps")
# Label sizes in the drawings' units. The whole graph is scaled to fit its column: how large
# its names show depends only on how many names fit across, so each box holds just its name
# (the node's number goes on the second line, with its shape). The focused view's labels are
# a projector's (presenter mode's body text is 21 px).
WHOLE_PX = 24
FOCUS_PX = 21

# (name, column) by row: the first five nodes left to right, the last five right to left
# under them, the inputs above and below the nodes they feed.
_SNAKE = (
    (("x", 0), ("eps", 4)),
    tuple(zip(NODE_NAMES[:5], range(5), strict=True)),
    tuple(zip(NODE_NAMES[:4:-1], range(5), strict=True)),
    (("beta", 0), ("gamma", 1)),
)


@dataclass(frozen=True)
class Box:
    """One node's box (or an input's ellipse): its centre and size, its first line of text and
    what the second line (the node's shape) starts with."""

    name: str
    x: float
    y: float
    width: float
    height: float
    text: str
    tag: str = ""

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "x": self.x,
            "y": self.y,
            "w": self.width,
            "h": self.height,
            "text": self.text,
            "tag": self.tag,
        }


@dataclass(frozen=True)
class Drawing:
    """Boxes and the arrows between them (source, target, the arrow's two ends)."""

    width: float
    height: float
    font: int
    boxes: tuple[Box, ...]
    edges: tuple[tuple[str, str, tuple[float, float, float, float]], ...]

    def to_json(self) -> dict:
        return {
            "width": self.width,
            "height": self.height,
            "font": self.font,
            "boxes": [box.to_json() for box in self.boxes],
            "edges": [
                {"id": f"{source}>{target}", "ends": list(ends)}
                for source, target, ends in self.edges
            ],
        }


def label(name: str) -> str:
    """A node's first line: its position in the forward pass and its name."""
    return name if name in INPUTS else f"{NODE_NAMES.index(name) + 1}. {name}"


def consumers(node: str) -> list[str]:
    """The nodes that read `node` (where its gradient comes from)."""
    return [name for name, inputs in NODE_INPUTS.items() if node in inputs]


def _edges() -> list[tuple[str, str]]:
    return [(source, name) for name, inputs in NODE_INPUTS.items() for source in inputs]


def _border(box: Box, towards: Box) -> tuple[float, float]:
    """Where the line from `box`'s centre to `towards`'s centre leaves `box`."""
    dx, dy = towards.x - box.x, towards.y - box.y
    # The line leaves through the side it reaches first.
    scale = min(
        (box.width / 2) / abs(dx) if dx else float("inf"),
        (box.height / 2) / abs(dy) if dy else float("inf"),
    )
    return box.x + dx * scale, box.y + dy * scale


def _drawing(boxes: list[Box], font: int) -> Drawing:
    by_name = {box.name: box for box in boxes}
    edges = []
    for source, target in _edges():
        if source in by_name and target in by_name:
            start = _border(by_name[source], by_name[target])
            end = _border(by_name[target], by_name[source])
            edges.append((source, target, (*start, *end)))
    width = max(box.x + box.width / 2 for box in boxes) + 4
    height = max(box.y + box.height / 2 for box in boxes) + 4
    return Drawing(round(width), round(height), font, tuple(boxes), tuple(edges))


def _width(text: str, font: int, room: float = 1.4) -> float:
    # Helvetica's average glyph is about 0.56 em: the box fits its longest line with `room`.
    return round(len(text) * font * 0.56 + font * room)


def whole() -> Drawing:
    """The whole graph, five columns wide; each box holds its name, then its number and shape."""
    gap = WHOLE_PX // 2
    column = max(_width(name, WHOLE_PX, 0.9) for name in NODE_NAMES) + gap
    box_height, input_height = 2.5 * WHOLE_PX, 1.6 * WHOLE_PX
    boxes, y = [], 2.0
    for row in _SNAKE:
        tall = input_height if row[0][0] in INPUTS else box_height
        for name, col in row:
            center = col * column + column / 2
            if name in INPUTS:
                boxes.append(Box(name, center, y + tall / 2, _width(name, WHOLE_PX), tall, name))
            else:
                number = f"{NODE_NAMES.index(name) + 1} · "
                boxes.append(Box(name, center, y + tall / 2, column - gap, tall, name, number))
        y += tall + WHOLE_PX
    return _drawing(boxes, WHOLE_PX)


def focus(node: str) -> Drawing:
    """`node` between its inputs (above) and its consumers (below), each row centred."""
    rows = [list(NODE_INPUTS[node]), [node], consumers(node)]
    gap, box_height, input_height = 18, 2.7 * FOCUS_PX, 1.7 * FOCUS_PX
    widths = [[_width(label(name), FOCUS_PX) for name in row] for row in rows]
    span = max(sum(row) + gap * (len(row) - 1) for row in widths)
    boxes, y = [], 2.0
    for row, row_widths in zip(rows, widths, strict=True):
        if not row:
            continue
        tall = max(input_height if name in INPUTS else box_height for name in row)
        x = (span - sum(row_widths) - gap * (len(row) - 1)) / 2
        for name, width in zip(row, row_widths, strict=True):
            boxes.append(Box(name, x + width / 2, y + tall / 2, width, tall, label(name)))
            x += width + gap
        y += tall + 34
    return _drawing(boxes, FOCUS_PX)


def status(current: Step, name: str) -> str:
    """How a box looks at `current`: the current node; an input (dx finished at the last
    step); or its node's status (pending, forward: value known, gradient: gradient known)."""
    if name == current.node:
        return "current"
    if name in INPUTS:
        finished_dx = name == "x" and current.backward and current.index == 1
        return "finished" if finished_dx else "input"
    return current.status(name)


def active(current: Step, source: str, target: str) -> bool:
    """Forward steps light the edges into the current node, backward steps the edges out of it
    (along which its gradient arrives); the last step also finishes dx, along x's edges."""
    if not current.backward:
        return target == current.node
    return source == current.node or (current.index == 1 and source == "x")


def lit(current: Step) -> dict:
    """What the browser lights at `current`: every box's status and the active edges."""
    return {
        "status": {name: status(current, name) for name in (*NODE_NAMES, *INPUTS)},
        "active": [f"{s}>{t}" for s, t in _edges() if active(current, s, t)],
    }
