"""(5) Peak resident memory of ln_core on (32, 128, 768) float32, one fresh process per case.

Each figure is the case's peak RSS minus that of a baseline process that only imports NumPy
and ln_core (torch and its own baseline for the reference row), median of three processes.
"""

from __future__ import annotations

import statistics

from bench.child import run_child
from bench.inputs import LARGE_SHAPE
from bench.results import table, write_result

REPEATS = 3
LN_CORE_CASES = (
    "inputs only",
    "forward + backward (staged)",
    "forward + closed_form_backward",
    "fused layernorm_forward_backward",
)


def peak_mb(case: str) -> float:
    return statistics.median(run_child("bench.memory_child", case) for _ in range(REPEATS))


def main() -> None:
    peaks = {case: peak_mb(case) for case in ("baseline", *LN_CORE_CASES)}
    peaks["torch baseline"] = peak_mb("torch baseline")
    peaks["torch layer_norm forward + backward"] = peak_mb("torch layer_norm forward + backward")
    array_mb = 4 * 32 * 128 * 768 / 1e6
    rows = [
        [
            case,
            f"{peaks[case] - peaks['baseline']:.0f}",
            f"{(peaks[case] - peaks['baseline']) / array_mb:.1f}",
        ]
        for case in LN_CORE_CASES
    ]
    torch_extra = peaks["torch layer_norm forward + backward"] - peaks["torch baseline"]
    rows.append(
        [
            "torch layer_norm forward + backward",
            f"{torch_extra:.0f}",
            f"{torch_extra / array_mb:.1f}",
        ]
    )
    for row in rows:
        print(row)
    text = (
        f"Peak RSS (ru_maxrss) of a fresh process that makes the float32 inputs x and dout of "
        f"shape {LARGE_SHAPE} ({array_mb:.1f} MB each) and runs the case once, keeping its "
        "results, minus the peak of a process that only imports NumPy and ln_core "
        f"({peaks['baseline']:.0f} MB); the torch row subtracts a process that also imports "
        f"torch ({peaks['torch baseline']:.0f} MB). Median of {REPEATS} processes. The last "
        "column counts in units of one full-size float32 array."
    )
    write_result(
        "memory",
        "5. Peak memory, (32, 128, 768) float32",
        5,
        text,
        [table(["case", "peak RSS above baseline (MB)", "full-size arrays"], rows)],
        {"peak_rss_mb": peaks},
    )


if __name__ == "__main__":
    main()
