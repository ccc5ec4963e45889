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


def test_the_reveal_says_how_answers_moved_and_marks_the_answer():
    asked = Asked("t", "p", ("a", "b", "c"), 1, "e")
    assert moved({1: (2, 1, 0), 2: (0, 3, 0)}, 1) == "round 1: 1 of 3 right; round 2: 3 of 3 right"
    assert moved({1: (0, 0, 0)}, 1) == "round 1: no votes"
    figure = chart(asked, {1: (2, 1, 0), 2: (0, 3, 0)})
    assert [list(bar.y) for bar in figure.data] == [[2, 1, 0], [0, 3, 0]]
    assert list(figure.data[0].x) == ["a", "b ✓", "c"]


def test_every_option_is_a_category_with_whole_number_ticks_and_shares():
    # Step 5's "0 / eps / 1": read as numbers, the axis drew "0" and "1" and lost "eps ✓".
    asked = Asked("Step 5", "p", ("0", "eps", "1"), 1, "e")
    figure = chart(asked, {1: (1, 3, 0), 2: (0, 4, 0)})
    layout = figure.layout
    assert layout.xaxis.type == "category"
    assert list(layout.xaxis.categoryarray) == ["0", "eps ✓", "1"]
    assert layout.yaxis.tick0 == 0 and layout.yaxis.dtick == 1 and layout.yaxis.tickformat == "d"
    assert [list(bar.text) for bar in figure.data] == [
        ["1 · 25 %", "3 · 75 %", "0 · 0 %"],
        ["0 · 0 %", "4 · 100 %", "0 · 0 %"],
    ]
    many = chart(asked, {1: (40, 55, 5)})
    assert many.layout.yaxis.dtick == 11 and many.layout.yaxis.dtick % 1 == 0
    assert list(chart(asked, {1: (0, 0, 0)}).data[0].text) == ["0 · no votes"] * 3
