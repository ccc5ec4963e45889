"""A small line profiler: wall time per source line of one function, by sys.settrace.

Time from one of the function's line events to the next is charged to the first line, so a
line's NumPy and BLAS calls (C code, invisible to a sampling profiler like pyinstrument,
which sees only the Python frame) are timed where they are written.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any


def line_times(function: Callable, run: Callable[[], Any]) -> dict[int, float]:
    """Call run(), which must call `function` in this thread; seconds spent on each line of
    `function`, by line number, summed over all its calls.

    Calls it makes into other Python functions count towards the calling line. Tracing costs
    about a microsecond per line executed, so lines that run for less are overstated.
    """
    code = getattr(function, "__code__", None)
    if code is None:
        raise ValueError(f"{function!r} is not a Python function")
    seconds: dict[int, float] = defaultdict(float)
    current: list = [None, 0.0]  # line being timed, when it started

    def local(frame, event, arg):
        now = time.perf_counter()
        if current[0] is not None:
            seconds[current[0]] += now - current[1]
        current[0] = frame.f_lineno if event == "line" else None
        current[1] = time.perf_counter()
        return local

    def start(frame, event, arg):
        return local if frame.f_code is code else None

    sys.settrace(start)
    try:
        run()
    finally:
        sys.settrace(None)
    return dict(seconds)


def source_lines(function: Callable) -> dict[int, str]:
    """Line number -> stripped source text of the function."""
    lines, first = inspect.getsourcelines(function)
    return {first + i: text.strip() for i, text in enumerate(lines)}
