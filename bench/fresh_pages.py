"""Child process for bench_throughput: the fused kernel in a process that never loads torch.

Run as `python -m bench.fresh_pages --child default|reuse`. torch stays out because its own
allocations move glibc's dynamic mmap threshold, which would hide what a NumPy-only program
pays for fresh output pages.
"""

from __future__ import annotations

import sys
import time

from bench.allocator import minor_faults, reuse_freed_memory
from bench.child import report, run_child
from bench.inputs import large_inputs
from ln_core.fast import layernorm_forward_backward

CALLS = 11


def measure(mode: str) -> dict[str, list[float]]:
    """Seconds and page faults of CALLS calls in a row; the first call is the process's first."""
    if mode == "reuse":
        reuse_freed_memory()
    x, gamma, beta, dout = large_inputs()
    seconds, faults = [], []
    for _ in range(CALLS):
        start_faults, start = minor_faults(), time.perf_counter()
        layernorm_forward_backward(x, gamma, beta, dout)
        seconds.append(time.perf_counter() - start)
        faults.append(minor_faults() - start_faults)
    return {"seconds": seconds, "faults": faults}


def alternate(repeats: int = 3) -> dict[str, dict[str, list[float]]]:
    """Both modes, each in `repeats` fresh processes run alternately; samples pooled."""
    pooled: dict[str, dict[str, list[float]]] = {}
    for _ in range(repeats):
        for mode in ("default", "reuse"):
            sample = run_child("bench.fresh_pages", mode)
            for key, values in sample.items():
                pooled.setdefault(mode, {}).setdefault(key, []).extend(values)
    return pooled


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    report(measure(sys.argv[2]))
