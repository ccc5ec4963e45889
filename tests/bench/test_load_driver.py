"""The load driver's own logic: its options, percentiles, schedule and choice of action, and the
page list it reads from app.py. (Its timings are benchmarks, never asserted here.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_load import (  # noqa: E402
    CYCLE,
    next_action,
    parse_options,
    percentile,
    start_offsets,
)
from bench.lab_pages import lab_pages  # noqa: E402


def test_options_default_to_the_issue_table():
    options = parse_options([])
    assert options.sessions == (30, 60, 100)
    assert (options.scenario, options.interval, options.replicas) == ("pages", 2.0, 0)


def test_options_read_counts_and_replicas():
    options = parse_options(["--sessions", "100, 160", "--replicas", "2"])
    assert options.sessions == (100, 160) and options.replicas == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["--sessions", "ten"],
        ["--sessions", "0"],
        ["--sessions", ""],
        ["--seconds", "0"],
        ["--interval", "0"],
        ["--replicas", "-1"],
        ["--scenario", "clicks"],
    ],
)
def test_options_refuse_nonsense(argv):
    with pytest.raises(SystemExit):
        parse_options(argv)


def test_percentile_is_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile(values, 100) == 100.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0


def test_sessions_are_spread_evenly_over_one_interval():
    offsets = start_offsets(4, 2.0)
    assert offsets == [0.0, 0.5, 1.0, 1.5]
    assert max(start_offsets(100, 2.0)) < 2.0


def test_pages_scenario_only_switches_pages():
    assert {next_action("pages", t, True, True) for t in range(12)} == {"page"}


def test_interactions_cycle_through_next_seed_and_page():
    actions = [next_action("interactions", t, True, True) for t in range(len(CYCLE))]
    assert actions == list(CYCLE)
    assert {"next", "seed", "page"} <= set(actions)


def test_next_needs_the_stepper_with_next_enabled():
    turn = CYCLE.index("next")
    assert next_action("interactions", turn, on_stepper=False, next_enabled=True) == "stepper"
    assert next_action("interactions", turn, on_stepper=True, next_enabled=False) == "page"


def test_pages_are_read_from_app_py():
    pages = lab_pages()
    assert pages[0].url_path == ""  # the Overview is the default page
    assert {"stepper", "jacobian", "batchnorm"} <= {p.url_path for p in pages}
    assert all((ROOT / p.script).is_file() for p in pages)


def test_page_reader_follows_url_path_and_default():
    source = (
        'P = [st.Page("pages/lab/a.py", title="A", default=True),\n'
        '     st.Page("pages/lab/b.py", title="B"),\n'
        '     st.Page("pages/lab/c.py", title="C", url_path="see")]\n'
    )
    assert [(p.name, p.title, p.url_path) for p in lab_pages(source)] == [
        ("a", "A", ""),
        ("b", "B", "b"),
        ("c", "C", "see"),
    ]
