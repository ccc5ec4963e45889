"""CPU per full rerun of each page and per click inside its fragment, as ratios to Streamlit's
own floor measured in the same run.

    python -m bench.page_cpu --rounds 30                      # this checkout
    python -m bench.page_cpu --root /path/to/other/checkout   # e.g. an older commit
    python -m bench.page_cpu --meter calls --rounds 2         # function calls, not CPU

What is measured: the process CPU time (every thread: the script runner and AppTest's reading
of its output) of one AppTest run, at the default inputs, after a first untimed round (imports
and caches warm, as on a server that has served the page once). AppTest compiles the scripts
anew on every run; a server compiles each script once and keeps its bytecode, so here every
run (the floor's too) shares one script cache, as a server's runs do.
- The floor: a full rerun of bench/floor_app.py, a bare app with the lab's navigation (as many
  pages), its eight sidebar widgets and one line of markdown, in the same process.
- Each page: a full rerun of app.py on that page (app.py's sidebar and link, the page, the
  guide's footer), as after a sidebar change.
- Each interaction of bench/interactions.py: the rerun of the page's fragment alone, as a
  browser asks for it (bench/fragment_rerun.py).
Each round runs the floor, then every page followed by its interactions, so a shared machine's
slow drifts hit all alike; each figure is the median over rounds, and each ratio is the median
over rounds of the figure divided by the floor of the same round (the floor itself swings by a
third between runs on a busy machine; a ratio within one round does not).
Goals (issue 25): mean over pages at most 3x the floor, every page at most 5x, every
interaction at most 2x.

`--meter calls` counts the function calls (Python and C) of each run, in every thread, instead
of its CPU time. CPU time is what costs, but on a shared machine it swings by a third between
runs; the count changes by about 1% (AppTest's waiting loops), so a change of a few percent to
the work of a rerun shows in it, and two checkouts compare in one run each.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest

from bench.fragment_rerun import fragment_rerun, page_fragment
from bench.interactions import INTERACTIONS
from bench.lab_pages import lab_pages

ROOT = Path(__file__).resolve().parents[1]
FLOOR_APP = Path(__file__).resolve().parent / "floor_app.py"
FLOOR = "floor"
GOALS = {"mean": 3.0, "page": 5.0, "interaction": 2.0}
# The name AppTest makes a fresh script cache by on each run (see the top).
_SCRIPT_CACHE = "streamlit.testing.v1.app_test.ScriptCache"


def cpu_ms(run: Callable[[], AppTest]) -> float:
    """CPU milliseconds of one run; a run that raised is not a measurement of the page."""
    start = time.process_time()
    at = run()
    spent = (time.process_time() - start) * 1e3
    if at.exception:
        raise RuntimeError(f"the run raised: {at.exception[0].value}")
    return spent


def thousand_calls(run: Callable[[], AppTest]) -> float:
    """Thousands of function calls (Python and C) made in one run, in every thread."""
    count = 0

    def counted(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    threading.setprofile(counted)  # AppTest runs the script in a thread of its own
    sys.setprofile(counted)
    try:
        at = run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    if at.exception:
        raise RuntimeError(f"the run raised: {at.exception[0].value}")
    return count / 1e3


METERS = {"cpu": (cpu_ms, "CPU ms"), "calls": (thousand_calls, "thousand calls")}


def measure(
    root: Path, rounds: int, meter: Callable[[Callable[[], AppTest]], float] = cpu_ms
) -> dict[str, list[float]]:
    """The `meter` (CPU ms by default) of the floor ("floor"), of each page (its name) and of
    each interaction ("page · label"), one value per round, over `rounds` rounds after one
    unmeasured round."""
    logging.disable(logging.WARNING)  # AppTest's bare-mode warnings
    sys.path.insert(0, str(root))  # the pages import that checkout's ui and ln_core
    shared = ScriptCache()
    with mock.patch(_SCRIPT_CACHE, lambda: shared):
        return _measure(root, rounds, meter)


def _measure(
    root: Path, rounds: int, meter: Callable[[Callable[[], AppTest]], float]
) -> dict[str, list[float]]:
    pages = lab_pages((root / "app.py").read_text())
    floor = AppTest.from_file(str(FLOOR_APP), default_timeout=300)
    floor.session_state["floor_pages"] = len(pages)
    lab = AppTest.from_file(str(root / "app.py"), default_timeout=300).run()
    samples: dict[str, list[float]] = defaultdict(list)
    for round_number in range(rounds + 1):
        taken: dict[str, float] = {FLOOR: meter(floor.run)}
        for page in pages:
            lab.switch_page(page.script)
            taken[page.name] = meter(lab.run)
            for interaction in (i for i in INTERACTIONS if i.page == page.name):
                fragment = page_fragment(lab, interaction.nested)
                interaction.act(lab)
                name = f"{page.name} · {interaction.label}"
                taken[name] = meter(lambda fragment=fragment: fragment_rerun(lab, fragment))
        if round_number > 0:  # the first round warms imports and caches
            for name, value in taken.items():
                samples[name].append(value)
    return dict(samples)


def report(samples: dict[str, list[float]], unit: str = "CPU ms") -> str:
    """A Markdown table of every figure (median, in `unit`) and its ratio to the floor (median
    over rounds of the ratio within a round), then the goals."""
    floors = samples[FLOOR]
    ms = {name: statistics.median(values) for name, values in samples.items()}
    ratio = {
        name: statistics.median(v / f for v, f in zip(values, floors, strict=True))
        for name, values in samples.items()
    }
    pages = [name for name in samples if name != FLOOR and " · " not in name]
    clicks = [name for name in samples if " · " in name]
    lines = [f"| rerun | {unit} | x floor |", "| --- | ---: | ---: |"]
    lines.append(f"| floor (bare app, full rerun) | {ms[FLOOR]:.1f} | 1.0 |")
    lines += [f"| {k} (full rerun) | {ms[k]:.1f} | {ratio[k]:.1f} |" for k in pages]
    mean_ms, mean_ratio = (statistics.mean(d[k] for k in pages) for d in (ms, ratio))
    lines.append(f"| mean over pages | {mean_ms:.1f} | {mean_ratio:.1f} |")
    lines += [f"| {k} (fragment) | {ms[k]:.1f} | {ratio[k]:.1f} |" for k in clicks]
    worst_page, worst_click = max(ratio[k] for k in pages), max(ratio[k] for k in clicks)
    lines += [
        "",
        f"mean over pages {mean_ratio:.1f}x (goal <= {GOALS['mean']:g}x); "
        f"slowest page {worst_page:.1f}x (goal <= {GOALS['page']:g}x); "
        f"slowest interaction {worst_click:.1f}x (goal <= {GOALS['interaction']:g}x); "
        f"{len(floors)} rounds",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--meter", choices=list(METERS), default="cpu")
    args = parser.parse_args()
    meter, unit = METERS[args.meter]
    print(report(measure(args.root.resolve(), args.rounds, meter), unit))


if __name__ == "__main__":
    main()
