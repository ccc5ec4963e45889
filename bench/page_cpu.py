"""CPU time of one rerun of each page (default inputs, after a first visit), in AppTest.

    python -m bench.page_cpu --rounds 7                    # this checkout
    python -m bench.page_cpu --root /path/to/other/checkout  # e.g. an older commit

Process CPU time (every thread: the script and AppTest's reading of its output) of each page's
rerun, median over rounds; the pages are app.py's. Less sensitive to a busy machine than wall
time, so before/after comparisons can be made while other jobs run.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from bench.lab_pages import lab_pages

ROOT = Path(__file__).resolve().parents[1]


def page_cpu_ms(root: Path, rounds: int) -> dict[str, float]:
    logging.disable(logging.WARNING)  # AppTest's bare-mode warnings
    sys.path.insert(0, str(root))  # the pages import that checkout's ui and ln_core
    pages = lab_pages((root / "app.py").read_text())
    at = AppTest.from_file(str(root / "app.py"), default_timeout=300).run()
    for page in pages:  # first visits: imports and caches
        at.switch_page(page.script).run()
    samples: dict[str, list[float]] = {page.name: [] for page in pages}
    for _ in range(rounds):
        for page in pages:
            at.switch_page(page.script)
            start = time.process_time()
            at.run()
            samples[page.name].append((time.process_time() - start) * 1e3)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    result = page_cpu_ms(args.root.resolve(), args.rounds)
    for name, value in result.items():
        print(f"{name:10s} {value:6.1f} ms CPU")
    print(f"{'mean':10s} {statistics.mean(result.values()):6.1f} ms CPU")


if __name__ == "__main__":
    main()
