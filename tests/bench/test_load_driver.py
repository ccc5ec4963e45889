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
    TARGET_COLD_MS,
    TARGET_P95_MS,
    Phase,
    Setup,
    markdown,
    next_action,
    parse_options,
    percentile,
    row,
    start_offsets,
)
from bench.lab_pages import lab_pages  # noqa: E402


def test_options_default_to_the_issue_table():
    options = parse_options([], cores=2)
    assert options.phases == (Setup(0, 30), Setup(0, 60), Setup(0, 100))
    assert (options.scenario, options.interval) == ("pages", 2.0)


def test_options_read_counts_and_replicas():
    options = parse_options(["--sessions", "100, 160", "--replicas", "2"], cores=2)
    assert options.phases == (Setup(2, 100), Setup(2, 160))


def test_replicas_auto_is_one_per_core():
    assert parse_options(["--replicas", "auto", "--sessions", "100"], cores=4).phases == (
        Setup(4, 100),
    )


def test_phases_pair_replicas_with_sessions_in_one_run():
    options = parse_options(["--phases", "2:100, 0:60,auto:80"], cores=3)
    assert options.phases == (Setup(2, 100), Setup(0, 60), Setup(3, 80))


@pytest.mark.parametrize(
    "argv",
    [
        ["--sessions", "ten"],
        ["--sessions", "0"],
        ["--sessions", ""],
        ["--seconds", "0"],
        ["--interval", "0"],
        ["--sessions", "-5"],
        ["--sessions", "\u00b2"],  # a superscript 2: a digit to str.isdigit, not to int()
        ["--sessions", "501"],
        ["--replicas", "-1"],
        ["--replicas", "abc"],
        ["--replicas", "5"],  # more than 2 per core
        ["--scenario", "clicks"],
        ["--phases", "2"],
        ["--phases", "2:"],
        ["--phases", "2:x"],
        ["--phases", "x:100"],
        ["--phases", "2:0"],
        ["--phases", "2:100,,0:60"],
    ],
)
def test_options_refuse_nonsense(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        parse_options(argv, cores=2)
    assert stop.value.code == 2
    assert "error:" in capsys.readouterr().err  # a message, not a traceback


def _phase(**changes) -> Phase:
    figures = dict(
        sessions=100, replicas=2, scenario="pages", cold_slowest_ms=2500.0, p50_ms=80.0,
        p95_ms=400.0, runs=1600, errors=0, error_kinds={}, first_errors=[],
        cpu_ms_per_run=30.0, sessions_per_core=66.7, driver_cpu_per_s=0.08, load_average=1.5,
    )  # fmt: skip
    return Phase(**{**figures, **changes})


def test_targets_are_met_only_within_all_three():
    assert _phase().met
    assert not _phase(p95_ms=TARGET_P95_MS).met
    assert not _phase(cold_slowest_ms=TARGET_COLD_MS).met
    assert not _phase(errors=1, error_kinds={"timeout": 1}).met


def test_the_table_names_the_setup_and_the_driver_cpu():
    lines = markdown(["a", "b"], [["1", "2"]]).splitlines()
    assert lines == ["| a | b |", "| --- | --- |", "| 1 | 2 |"]
    balanced, plain = row(_phase()), row(_phase(replicas=0, errors=2, error_kinds={"timeout": 2}))
    assert balanced[0] == "2 + HAProxy" and plain[0] == "1 (no balancer)"
    assert "0.08" in balanced and balanced[-1] == "yes"
    assert "2 (timeout 2)" in plain and plain[-1] == "**no**"


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
