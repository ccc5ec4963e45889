"""Where the time goes on (32, 128, 768) float32: the "before" path by pyinstrument, the fused
kernel line by line (one thread, so one trace sees every block)."""

from __future__ import annotations

from pyinstrument import Profiler

import ln_core
from bench.allocator import reuse_freed_memory
from bench.inputs import EPS, large_inputs
from bench.line_timer import line_times, source_lines
from bench.results import table, write_result
from bench.timing import interleaved, median_ms
from ln_core.fast import _work, layernorm_forward_backward
from ln_core.validation import check_dout, check_input_x, check_params

CALLS = 10
MIN_SHARE = 0.005  # lines below half a percent are left out of the table


def before_profile(x, gamma, beta, dout) -> str:
    profiler = Profiler(interval=0.0005)
    profiler.start()
    for _ in range(CALLS):
        ln_core.closed_form_backward(dout, ln_core.forward(x, gamma, beta, EPS))
    profiler.stop()
    return profiler.output_text(unicode=False, color=False)


def fused_lines(x, gamma, beta, dout) -> list[list]:
    layernorm_forward_backward(x, gamma, beta, dout, EPS, threads=1)

    def run() -> None:
        for _ in range(CALLS):
            layernorm_forward_backward(x, gamma, beta, dout, EPS, threads=1)

    seconds = line_times(_work, run)
    total = sum(seconds.values())
    text = source_lines(_work)
    return [
        [
            line,
            f"`{text[line]}`",
            f"{seconds[line] / CALLS * 1e3:.3f}",
            f"{seconds[line] / total:.0%}",
        ]
        for line in sorted(seconds)
        if seconds[line] / total >= MIN_SHARE
    ]


def input_checks_ms(x, gamma, beta, dout) -> dict[str, float]:
    """Median time of the full input checks, and of those layernorm_forward_backward makes
    before any work (shapes and dtypes; it scans for NaN and inf only if its sums say so)."""

    def checks(finite: bool) -> None:
        checked = check_input_x(x, finite=finite)
        check_params(checked, gamma, beta)
        check_dout(dout, checked.shape, checked.dtype, finite=finite)

    times = interleaved(
        {"full": lambda: checks(True), "up front": lambda: checks(False)}, rounds=CALLS
    )
    return {name: median_ms(seconds) for name, seconds in times.items()}


def main() -> None:
    reuse_freed_memory()
    x, gamma, beta, dout = large_inputs()
    tree = before_profile(x, gamma, beta, dout)
    rows = fused_lines(x, gamma, beta, dout)
    checks_ms = input_checks_ms(x, gamma, beta, dout)
    for row in rows:
        print(row)
    write_result(
        "profile",
        "2b. Where the time goes: profiles, (32, 128, 768) float32",
        2.5,
        f"Both over {CALLS} calls, in a process that reuses freed memory (see section 2). The "
        "table times each line of the fused kernel's block loop (ln_core/fast.py, `_work`) "
        "with bench/line_timer.py, on one thread, in ms per call: lines that first read an "
        "input (x, dout) or first write an output (out, dx) also pay for memory, the others "
        "work on a block already in cache. The tree below it is pyinstrument's profile of the "
        "'before' path, forward + closed_form_backward.\n\n"
        "Input checks (ln_core.validation): the full checks (x and dout finite, shapes, "
        f"dtypes) take {checks_ms['full']:.2f} ms per call on one thread; the fused call makes "
        f"only the shape and dtype checks up front ({checks_ms['up front']:.2f} ms) and scans "
        "x and dout for NaN and inf only when its dgamma/dbeta sums come out non-finite.",
        [table(["line", "source", "ms per call", "share"], rows)],
        {"fused_lines": rows, "input_checks_ms": checks_ms},
        blocks=[tree],
    )


if __name__ == "__main__":
    main()
