"""What the benchmarks ran on: CPU, caches, memory, library versions, load at the start."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np

from bench.results import table, write_result


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _simd() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            return ", ".join(f for f in ("sse4_2", "avx2", "fma", "avx512f") if f in flags)
    return "unknown"


def _caches() -> str:
    sizes = []
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        level = (index / "level").read_text().strip()
        kind = (index / "type").read_text().strip()
        label = {"Data": "d", "Instruction": "i"}.get(kind, "")
        shared = (index / "shared_cpu_list").read_text().strip()
        sizes.append(f"L{level}{label} {(index / 'size').read_text().strip()} (cpus {shared})")
    return ", ".join(sizes)


def _memory_gib() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    return "unknown"


def _blas() -> str:
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return f"{blas['name']} {blas['version']}"


def _torch() -> str:
    try:
        import torch
    except ImportError:
        return "not installed"
    return f"{torch.__version__} ({torch.get_num_threads()} threads by default)"


def main() -> None:
    rows = [
        ["CPU", _cpu_model()],
        ["cores usable", f"{len(os.sched_getaffinity(0))} (os.cpu_count() = {os.cpu_count()})"],
        ["SIMD", _simd()],
        ["caches", _caches()],
        ["memory", _memory_gib()],
        ["kernel", platform.release()],
        ["Python", platform.python_version()],
        ["NumPy", f"{np.__version__}, BLAS {_blas()}"],
        ["PyTorch", _torch()],
        ["load average at start (1, 5, 15 min)", ", ".join(f"{v:.2f}" for v in os.getloadavg())],
    ]
    write_result(
        "machine",
        "Machine",
        0,
        "Timings are medians of interleaved runs in one process (see each section).",
        [table(["what", "value"], rows)],
        {},
    )


if __name__ == "__main__":
    main()
