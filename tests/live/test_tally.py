"""The results file and the reveal's words (ui/live/tally.py)."""

from __future__ import annotations

import csv
import io

from ui.live.store import Asked
from ui.live.tally import chart, moved, results_csv


def test_results_csv_has_one_line_per_option_and_round_columns():
    rows = [
        {"question": 1, "title": "Step 1", "prompt": "=HYPERLINK(1)", "option": "-2",
         "correct": False, "round 1": 3},
        {"question": 1, "title": "Step 1", "prompt": "=HYPERLINK(1)", "option": "yes",
         "correct": True, "round 1": 2, "round 2": 5},
    ]  # fmt: skip
    read = list(csv.DictReader(io.StringIO(results_csv(rows))))
    assert list(read[0]) == ["question", "title", "prompt", "option", "correct", "round 1",
                             "round 2"]  # fmt: skip
    # A spreadsheet must not run a cell as a formula; a missing round is 0 votes.
    assert read[0]["prompt"] == "'=HYPERLINK(1)" and read[0]["option"] == "'-2"
    assert (read[0]["round 2"], read[1]["round 2"]) == ("0", "5")


def split(*rounds: tuple[int, ...]) -> dict[int, tuple[tuple[int, ...], ...]]:
    """Rounds of votes per option, all of them "not said" (rules.CONFIDENCE then not said)."""
    return {n: tuple((0, 0, 0, v) for v in votes) for n, votes in enumerate(rounds, 1)}


def stacks(figure) -> dict[str, list[int]]:
    """The chart's bars: votes per level of sureness, one entry per bar."""
    return {bar.name: list(bar.y) for bar in figure.data if bar.type == "bar"}


def totals(figure) -> list[str]:
    (above,) = [trace for trace in figure.data if trace.type == "scatter"]
    return list(above.text)


def test_the_reveal_says_how_answers_moved_and_marks_the_answer():
    asked = Asked("t", "p", ("a", "b", "c"), 1, "e")
    assert moved({1: (2, 1, 0), 2: (0, 3, 0)}, 1) == "round 1: 1 of 3 right; round 2: 3 of 3 right"
    assert moved({1: (0, 0, 0)}, 1) == "round 1: no votes"
    figure = chart(asked, split((2, 1, 0), (0, 3, 0)))
    # A revote: under each option its two rounds side by side.
    assert stacks(figure)["not said"] == [2, 0, 1, 3, 0, 0]
    assert [list(level) for level in figure.data[0].x] == [
        ["a", "a", "b ✓", "b ✓", "c", "c"],
        ["1st", "2nd"] * 3,
    ]
    assert figure.layout.xaxis.type == "multicategory"
    assert list(chart(asked, split((2, 1, 0))).data[0].x) == ["a", "b ✓", "c"]


def test_each_bar_is_split_by_how_sure_its_voters_were():
    asked = Asked("t", "p", ("a", "b"), 0, "e")
    # a: 1 a guess, 2 sure, 1 not said; b: 1 fairly sure.
    figure = chart(asked, {1: ((1, 0, 2, 1), (0, 1, 0, 0))})
    assert figure.layout.barmode == "stack"
    # Surest at the bottom, in the legend's reading order; the whole bar's share above it.
    assert stacks(figure) == {"sure": [2, 0], "fairly sure": [0, 1], "a guess": [1, 0],
                              "not said": [1, 0]}  # fmt: skip
    assert totals(figure) == ["4<br>80 %", "1<br>20 %"]
    assert figure.layout.legend.orientation == "h" and figure.layout.legend.y >= 1
    colours = [bar.marker.color for bar in figure.data if bar.type == "bar"]
    assert len(set(colours)) == 4
    # "not said" is told apart without its colour.
    assert [bar.marker.pattern.shape for bar in figure.data if bar.type == "bar"][-1] == "/"


def test_every_option_is_a_category_with_whole_number_ticks_and_shares():
    # Step 5's "0 / eps / 1": read as numbers, the axis drew "0" and "1" and lost "eps ✓".
    asked = Asked("Step 5", "p", ("0", "eps", "1"), 1, "e")
    figure = chart(asked, split((1, 3, 0)))
    layout = figure.layout
    assert layout.xaxis.type == "category"
    assert list(layout.xaxis.categoryarray) == ["0", "eps ✓", "1"]
    assert layout.yaxis.tick0 == 0 and layout.yaxis.dtick == 1 and layout.yaxis.tickformat == "d"
    assert totals(figure) == ["1<br>25 %", "3<br>75 %", "0<br>0 %"]
    assert totals(chart(asked, split((1, 3, 0), (0, 4, 0))))[1::2] == ["0<br>0 %", "4<br>100 %",
                                                                       "0<br>0 %"]  # fmt: skip
    many = chart(asked, split((40, 55, 5)))
    assert many.layout.yaxis.dtick == 11 and many.layout.yaxis.dtick % 1 == 0
    assert totals(chart(asked, split((0, 0, 0)))) == ["0<br>no votes"] * 3
