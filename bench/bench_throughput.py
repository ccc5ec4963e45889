"""(2) Forward + backward throughput on (32, 128, 768) float32, two threads, against PyTorch.

Cases, interleaved in one process:
- before: ln_core.forward + ln_core.closed_form_backward (plain NumPy);
- fused: ln_core.fast.layernorm_forward_backward, on 2 threads and on 1;
- torch: F.layer_norm forward + backward, torch on 2 threads.
The process keeps freed memory for reuse (bench/allocator.py) from the start, as PyTorch's
allocations already are; what fresh output pages cost a NumPy-only program is measured
separately in child processes (bench/fresh_pages.py).
"""

from __future__ import annotations

import numpy as np

import ln_core
from bench import fresh_pages, torch_ref
from bench.allocator import minor_faults, reuse_freed_memory
from bench.bandwidth import copy_bandwidth
from bench.inputs import EPS, LARGE_SHAPE, large_inputs
from bench.results import ms, table, times, write_result, yes_no
from bench.timing import interleaved, median_ms
from ln_core.fast import _BLOCK_BYTES, layernorm_forward_backward

ROUNDS = 31
TARGET = 2.0  # ln_core's fused time at most twice torch's
BLOCK_SWEEP = (32, 64, 128, 256, 341, 512, 1024, 2048)
FUSED = "fused, 2 threads"
TORCH = "torch, 2 threads"


def compulsory_bytes() -> int:
    """Bytes every implementation must move: read x and dout, write out and dx (float32)."""
    return 4 * int(np.prod(LARGE_SHAPE)) * 4


def steps(x, gamma, beta, dout) -> dict:
    tx, tgamma, tbeta = torch_ref.tensors(x, gamma, beta)
    (tdout,) = torch_ref.tensors(dout, requires_grad=False)

    def torch_step() -> None:
        tx.grad = tgamma.grad = tbeta.grad = None
        torch_ref.layer_norm(tx, tgamma, tbeta, EPS).backward(tdout)

    return {
        "before: forward + closed_form_backward": lambda: ln_core.closed_form_backward(
            dout, ln_core.forward(x, gamma, beta, EPS)
        ),
        FUSED: lambda: layernorm_forward_backward(x, gamma, beta, dout, EPS),
        "fused, 1 thread": lambda: layernorm_forward_backward(x, gamma, beta, dout, EPS, threads=1),
        TORCH: torch_step,
    }


def counting_faults(named_steps: dict, faults: dict[str, list[int]]) -> dict:
    """The same steps, each appending its page-fault count to faults[name] when called."""

    def counted(name: str, step):
        def run() -> None:
            start = minor_faults()
            step()
            faults[name].append(minor_faults() - start)

        return run

    for name in named_steps:
        faults[name] = []
    return {name: counted(name, step) for name, step in named_steps.items()}


def errors_vs_staged(x, gamma, beta, dout) -> dict[str, float]:
    """max |fused - staged| / max |staged| per tensor, both computed in float32."""
    fused = layernorm_forward_backward(x, gamma, beta, dout, EPS)
    cache = ln_core.forward(x, gamma, beta, EPS)
    staged = ln_core.backward(dout, cache)
    pairs = {
        "out": (fused.out, cache.out),
        "dx": (fused.dx, staged.dx),
        "dgamma": (fused.dgamma, staged.dgamma),
        "dbeta": (fused.dbeta, staged.dbeta),
    }
    return {
        name: float(np.max(np.abs(a.astype(np.float64) - b)) / np.max(np.abs(b)))
        for name, (a, b) in pairs.items()
    }


def main_rows(named_steps: dict, bandwidth: float, raw: dict) -> list[list]:
    faults: dict[str, list[int]] = {}
    seconds = interleaved(counting_faults(named_steps, faults), rounds=ROUNDS)
    raw["seconds"], raw["faults"] = seconds, faults
    torch_ms = median_ms(seconds[TORCH])
    rows = []
    for name, samples in seconds.items():
        median = median_ms(samples)
        gbps = compulsory_bytes() / (median / 1e3) / 1e9
        rows.append(
            [
                name,
                ms(median),
                times(median / torch_ms),
                f"{gbps:.1f} ({gbps / bandwidth:.0%})",
                f"{np.median(faults[name]):,.0f}",
                f"<= {TARGET:g}x" if name == FUSED else "",
                yes_no(median / torch_ms <= TARGET) if name == FUSED else "",
            ]
        )
        print(rows[-1])
    return rows


def fresh_page_rows(raw: dict) -> list[list]:
    pooled = fresh_pages.alternate()
    raw["fresh_pages"] = pooled
    labels = {"default": "glibc defaults", "reuse": "freed memory reused (mallopt)"}
    rows = []
    for mode, sample in pooled.items():
        calls = fresh_pages.CALLS
        first = [i for i in range(len(sample["seconds"])) if i % calls == 0]
        later = [i for i in range(len(sample["seconds"])) if i % calls != 0]
        rows.append(
            [labels[mode]]
            + [
                f"{ms(np.median([sample['seconds'][i] * 1e3 for i in which]))} "
                f"({np.median([sample['faults'][i] for i in which]):,.0f})"
                for which in (first, later)
            ]
        )
    return rows


def block_rows_sweep(x, gamma, beta, dout, raw: dict) -> list[list]:
    seconds = interleaved(
        {
            f"{rows}": lambda rows=rows: layernorm_forward_backward(
                x, gamma, beta, dout, EPS, block_rows=rows
            )
            for rows in BLOCK_SWEEP
        },
        rounds=ROUNDS // 2,
    )
    raw["block_sweep"] = seconds
    itemsize = x.dtype.itemsize
    return [
        [rows, int(rows) * LARGE_SHAPE[-1] * itemsize // 1024, ms(median_ms(s))]
        for rows, s in seconds.items()
    ]


def describe(raw: dict, best_bandwidth: float) -> str:
    errors = ", ".join(f"{k} {v:.1e}" for k, v in raw["errors_vs_staged"].items())
    bandwidth = ", ".join(f"{k}: {v:.1f} GB/s" for k, v in raw["copy_bandwidth_gbps"].items())
    return (
        f"x, dout ~ N(0, 1) float32 of shape {LARGE_SHAPE}; gamma ~ N(1, 0.1), "
        f"beta ~ N(0, 0.1); eps = {EPS}. {ROUNDS} interleaved rounds after one warm-up; "
        "medians; '÷ torch' is the ratio of medians. The fused result equals ln_core's staged "
        f"forward + backward in float32 to rounding (max error / max value: {errors}).\n\n"
        f"Memory bandwidth, np.copyto of 512 MiB float64 (read + write counted): {bandwidth}. "
        "Every implementation must read x and dout and write out and dx: "
        f"{compulsory_bytes() / 1e6:.1f} MB. 'Effective GB/s' is that over the median time, "
        f"as a share of the better copy bandwidth ({best_bandwidth:.1f} GB/s). Writes to "
        "memory not in cache read it first (write-allocate), so real traffic is about 1.5x "
        "the compulsory bytes.\n\n"
        "Allocator: this process calls mallopt(M_MMAP_THRESHOLD = 32 MiB, M_TRIM_THRESHOLD = "
        "1 GiB) before anything else, so freed 12.6 MB blocks are reused rather than unmapped "
        f"(applied: {raw['reuse_applied']}), as PyTorch's memory already is. With glibc's "
        "defaults a process's first large results are fresh mmaps, whose pages the kernel "
        "zeroes and faults in on first write; after that glibc keeps them in the heap (the "
        "fused kernel allocates out and dx as one block so that glibc does not trim it "
        "again). The second table shows both in NumPy-only processes."
    )


def main() -> None:
    raw: dict = {"reuse_applied": reuse_freed_memory()}
    torch_ref.use_threads()
    raw["copy_bandwidth_gbps"] = copy_bandwidth()
    best_bandwidth = max(raw["copy_bandwidth_gbps"].values())
    x, gamma, beta, dout = large_inputs()
    raw["errors_vs_staged"] = errors_vs_staged(x, gamma, beta, dout)

    rows = main_rows(steps(x, gamma, beta, dout), best_bandwidth, raw)
    fresh = fresh_page_rows(raw)
    sweep = block_rows_sweep(x, gamma, beta, dout, raw)
    default_rows = _BLOCK_BYTES // (LARGE_SHAPE[-1] * x.dtype.itemsize)
    write_result(
        "throughput",
        "2. Forward + backward throughput, (32, 128, 768) float32",
        2,
        describe(raw, best_bandwidth),
        [
            table(
                [
                    "case",
                    "median (ms)",
                    "÷ torch",
                    "effective GB/s (% of copy)",
                    "page faults / call",
                    "target",
                    "met?",
                ],
                rows,
            ),
            {
                **table(
                    [
                        "allocator",
                        "first call: ms (page faults)",
                        "later calls: ms (page faults)",
                    ],
                    fresh,
                ),
                "caption": "The fused kernel, 2 threads, in NumPy-only processes that never "
                f"load torch (3 of each kind, run alternately, {fresh_pages.CALLS} calls each); "
                "medians:",
            },
            {
                **table(["block_rows", "KiB per array", "median (ms)"], sweep),
                "caption": f"Block size, fused on 2 threads (default: {default_rows} rows, "
                f"{_BLOCK_BYTES // 1024} KiB per array):",
            },
        ],
        raw,
    )


if __name__ == "__main__":
    main()
