"""Interleaved timing: every case runs once per round, so slow drifts of a shared machine hit
all cases alike, and the median over rounds ignores the odd stall."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping


def interleaved(
    cases: Mapping[str, Callable[[], object]], rounds: int, warmup: int = 1
) -> dict[str, list[float]]:
    """Seconds per call of each case, `rounds` calls each, after `warmup` untimed rounds.

    The order rotates every round so that no case always follows the same one (whose cache
    footprint or leftover threads it would otherwise inherit).
    """
    names = list(cases)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(warmup + rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            start = time.perf_counter()
            cases[name]()
            elapsed = time.perf_counter() - start
            if round_index >= warmup:
                times[name].append(elapsed)
    return times


def median_ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1e3
