"""A question's votes: the bar chart the instructor reveals, and the results file."""

from __future__ import annotations

import csv
import html
import io
import math

import plotly.graph_objects as go

from ui.live.rules import CONFIDENCE, NOT_SAID
from ui.live.store import Asked, Sureness

ROUND_COLOURS = ("#adb5bd", "#1c7ed6")  # round 1 grey, the revote blue (typed formulas)
# How sure, darkest at the bottom of each bar: one hue stepping in lightness reads the same
# with every colour blindness, and "not said" is grey hatching, told apart without its colour
# (pale, it read as an empty bar on a projector).
READABLE = dict(size=14, color="#31333f")  # read from the back row: the app's text colour
ORDINALS = {1: "1st", 2: "2nd"}  # a revote's bars (rules.ROUNDS)
# (level, colour, hatch), "sure" at the bottom: CONFIDENCE runs from "a guess" to "sure".
SURENESS = (
    *zip(reversed(CONFIDENCE), ("#1864ab", "#4dabf7", "#d0ebff"), ("", "", ""), strict=True),
    (NOT_SAID, "#868e96", "/"),
)


def chart(asked: Asked, split: Sureness, height: int = 300) -> go.Figure:
    """Votes per option and round, each bar split by how sure its voters said they were: each
    option a category (an option reading "0" or "1" is a name, not a place on a number line),
    whole-number ticks, each bar's count and share of its round above it, the right answer
    ticked."""
    # Plotly reads tags in text (<b>, <a href>): an option is escaped to show as typed.
    labels = [
        html.escape(f"{option} ✓" if i == asked.answer else option)
        for i, option in enumerate(asked.options)
    ]
    numbers = sorted(split)
    bars = [(i, number) for i, _ in enumerate(labels) for number in numbers]
    # One round: a bar per option; a revote: the rounds side by side under each option, named
    # short ("round 1" under six bars stood on end at 390 px and squashed the bars).
    x = (
        [[labels[i] for i, _ in bars], [ORDINALS[number] for _, number in bars]]
        if len(numbers) > 1
        else labels
    )
    totals = [sum(split[number][i]) for i, number in bars]
    voted = {number: sum(map(sum, split[number])) for number in numbers}
    # The count over its share: on one line, six bars' labels ran into each other at 390 px.
    above = [
        f"{v}<br>{share(v, voted[number])}" for v, (_, number) in zip(totals, bars, strict=True)
    ]
    levels = (*CONFIDENCE, NOT_SAID)  # the store's order of a bar's split
    fig = go.Figure(
        [
            go.Bar(
                name=level,
                x=x,
                y=[split[number][i][levels.index(level)] for i, number in bars],
                marker=dict(
                    color=colour,
                    line=dict(color="#495057", width=1),
                    pattern=dict(shape=hatch, bgcolor="#e9ecef"),
                ),
                hovertemplate="%{y} " + level + "<extra></extra>",
            )
            for level, colour, hatch in SURENESS
        ]
        + [
            go.Scatter(
                x=x,
                y=totals,
                text=above,
                mode="text",
                textfont=READABLE,
                textposition="top center",
                showlegend=False,
                hoverinfo="skip",
            )
        ]
    )
    # Streamlit's theme draws ticks and legend in 12 px grey unless told otherwise.
    fig.update_xaxes(tickfont=READABLE)
    fig.update_yaxes(tickfont=READABLE)
    if len(numbers) > 1:
        fig.update_xaxes(type="multicategory")
    else:
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    # Ticks at whole votes only, and room above the tallest bar for its two lines.
    top = max(totals, default=0)
    fig.update_yaxes(title="votes", tick0=0, dtick=max(1, math.ceil(top / 5)), tickformat="d",
                     range=[0, max(top, 1) * 1.45])  # fmt: skip
    fig.update_layout(
        barmode="stack",
        height=height,
        # The legend above the bars: below, it covered the options' names (seen at 390 px).
        margin=dict(l=40, r=10, t=30, b=40),
        legend=dict(
            orientation="h", yanchor="bottom", y=1.0, x=0, traceorder="normal", font=READABLE
        ),
    )
    return fig


def share(votes: int, total: int) -> str:
    """A count's share of its round, in whole percent ("no votes" for an empty round)."""
    return f"{round(100 * votes / total)} %" if total else "no votes"


def moved(counts: dict[int, tuple[int, ...]], answer: int | None) -> str:
    """How the class's answers moved from the first round to the last, in words."""
    shares = []
    for number, votes in sorted(counts.items()):
        total = sum(votes)
        if not total:
            share = "no votes"
        elif answer is None:
            share = f"{total} votes"
        else:
            share = f"{votes[answer]} of {total} right"
        shares.append(f"round {number}: {share}")
    return "; ".join(shares)


def sure(split: tuple[tuple[int, ...], ...], names: list[str]) -> str:
    """How sure the round's voters for each option said they were, in words (an option no one
    chose is left out; a level no one said is not named)."""
    levels = (*CONFIDENCE, NOT_SAID)
    parts = []
    for name, per in zip(names, split, strict=True):
        said = ", ".join(f"{n} {level}" for n, level in zip(per, levels, strict=True) if n)
        if said:
            parts.append(f"{name}: {said}")
    return "; ".join(parts)


def results_csv(rows: list[dict[str, object]]) -> str:
    """The class's results: one line per question and option, votes per round."""
    rounds = sorted({k for row in rows for k in row if k.startswith("round ")})
    columns = ["question", "title", "prompt", "option", "correct", *rounds]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, restval=0)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: cell(v) for k, v in row.items()})
    return out.getvalue()


def cell(value: object) -> object:
    """A results file's cell as a spreadsheet shows it, never runs it."""
    # A spreadsheet runs a cell that starts with = + - @ as a formula; numbers stay numbers.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value
