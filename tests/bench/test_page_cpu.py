"""bench/page_cpu.py measures what it says: each interaction is a real click inside its page's
fragment, rerun alone, and the report divides by the floor."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.fragment_rerun import fragment_rerun, page_fragment  # noqa: E402
from bench.interactions import INTERACTIONS  # noqa: E402
from bench.lab_pages import lab_pages  # noqa: E402
from bench.page_cpu import FLOOR, FLOOR_APP, report, thousand_calls  # noqa: E402

PAGES = {page.name: page for page in lab_pages()}


def _shown(at: AppTest) -> list[str]:
    """What the main area shows, element by element (values, labels and texts)."""
    return [repr(getattr(e, "value", getattr(e, "label", e))) for e in at.main]


@pytest.mark.parametrize("page", sorted({i.page for i in INTERACTIONS}))
def test_each_click_reruns_only_its_pages_fragment_and_changes_what_it_shows(page):
    logging.disable(logging.WARNING)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page(PAGES[page].script).run()
    assert not at.exception
    for interaction in (i for i in INTERACTIONS if i.page == page):
        fragment = page_fragment(at, interaction.nested)
        before = _shown(at)
        interaction.act(at)
        fragment_rerun(at, fragment)
        assert not at.exception, interaction.label
        assert len(at.sidebar) == 0, "the sidebar was redrawn: a full rerun, not the fragment's"
        assert _shown(at) != before, f"{interaction.label} changed nothing"


def _widget_keys(at: AppTest) -> set[str]:
    return {e.key for e in at.main if getattr(e, "key", None)}


@pytest.mark.parametrize(
    "interaction", [i for i in INTERACTIONS if i.nested], ids=lambda i: i.label
)
def test_a_click_in_a_nested_fragment_reruns_that_fragment_alone(interaction):
    logging.disable(logging.WARNING)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page(PAGES[interaction.page].script).run()
    fragment_rerun(at, page_fragment(at))
    outer = _widget_keys(at)
    interaction.act(at)
    fragment_rerun(at, page_fragment(at, nested=True))
    assert not at.exception
    inner = _widget_keys(at)
    # The clicked widget's fragment, without the widgets the outer one draws around it.
    assert inner and inner < outer, (inner, outer)


def test_the_floor_app_has_the_labs_navigation_and_sidebar():
    floor = AppTest.from_file(str(FLOOR_APP), default_timeout=60)
    floor.session_state["floor_pages"] = len(PAGES)
    floor.run()
    assert not floor.exception
    assert [e.label for e in floor.sidebar if hasattr(e, "label")] == [
        "Preset", "Shape", "Vectors (rows)", "D (features)", "Random seed", "eps", "dtype",
        "Presenter mode",
    ]  # fmt: skip
    assert [m.value for m in floor.main.markdown] == ["One line of markdown."]


def test_the_report_divides_each_round_by_that_rounds_floor():
    samples = {
        FLOOR: [2.0, 4.0, 2.0],
        "home": [6.0, 12.0, 6.0],  # 3x the floor in every round
        "audit": [12.0, 12.0, 12.0],  # 6x, 3x, 6x
        "audit · a click": [5.0, 10.0, 5.0],  # 2.5x in every round
    }
    text = report(samples)
    assert "| floor (bare app, full rerun) | 2.0 | 1.0 |" in text
    assert "| home (full rerun) | 6.0 | 3.0 |" in text
    assert "| audit (full rerun) | 12.0 | 6.0 |" in text
    assert "| mean over pages | 9.0 | 4.5 |" in text
    assert "| audit · a click (fragment) | 5.0 | 2.5 |" in text
    assert "slowest page 6.0x" in text and "slowest interaction 2.5x" in text


def test_the_call_count_sees_the_script_threads_work_and_repeats():
    logging.disable(logging.WARNING)
    floor = AppTest.from_file(str(FLOOR_APP), default_timeout=60)
    floor.session_state["floor_pages"] = len(PAGES)
    floor.run()
    lab = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    counts = [thousand_calls(floor.run) for _ in range(2)]
    page = thousand_calls(lab.run)
    assert abs(counts[0] - counts[1]) <= 0.05 * counts[0], counts
    # The lab's Overview draws far more than one line of markdown: counted in the script's
    # own thread, not only AppTest's.
    assert page > 2 * counts[0], (page, counts)


def test_the_report_names_its_unit():
    text = report({FLOOR: [10.0], "home": [40.0], "home · a click": [20.0]}, "thousand calls")
    assert "| rerun | thousand calls | x floor |" in text
    assert "| home (full rerun) | 40.0 | 4.0 |" in text
