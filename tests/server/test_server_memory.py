"""The server gives memory back when it is idle (ui/server/server_memory.py).

After a run, a pause without another one collects garbage and trims glibc's arenas once; a
run during the pause starts it again. What that returns is measured in bench/bench_server_memory.py
(BENCHMARKS.md); here: that it happens, when it should, and that the app reports its runs.
"""

from __future__ import annotations

import gc
import platform
import threading
import time
import weakref
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.server import server_memory

APP = Path(__file__).resolve().parents[2] / "app.py"


def _watched(monkeypatch, pause: float) -> tuple[threading.Event, list[float]]:
    """A watcher of our own with this pause, its give-backs recorded instead of done."""
    calls: list[float] = []
    monkeypatch.setattr(server_memory, "give_idle_memory_back", lambda: calls.append(1.0))
    ran = threading.Event()
    threading.Thread(target=server_memory.watch, args=(ran, pause), daemon=True).start()
    return ran, calls


def _wait_for(calls: list[float], count: int) -> None:
    deadline = time.monotonic() + 30
    while len(calls) < count and time.monotonic() < deadline:
        time.sleep(0.01)


def test_a_pause_after_a_run_gives_memory_back_once(monkeypatch) -> None:
    ran, calls = _watched(monkeypatch, 0.05)
    time.sleep(0.3)
    assert calls == []  # no run yet, nothing to give back
    ran.set()
    _wait_for(calls, 1)
    time.sleep(0.3)
    assert len(calls) == 1  # then it waits for the next run
    ran.set()
    _wait_for(calls, 2)
    assert len(calls) == 2


def test_runs_during_a_pause_postpone_the_give_back(monkeypatch) -> None:
    ran, calls = _watched(monkeypatch, 1.0)
    for _ in range(30):  # a class at work: a run every 50 ms for 1.5 s
        ran.set()
        time.sleep(0.05)
    assert calls == []
    _wait_for(calls, 1)
    assert calls == [1.0]


def test_the_give_back_collects_garbage_and_trims_the_allocator() -> None:
    class Node:
        pass

    cycle = Node()
    cycle.itself = cycle  # only the cycle collector frees it
    alive = weakref.ref(cycle)
    del cycle
    gc.disable()  # as a server run leaves it: Streamlit's collection after each run is off
    try:
        trimmed = server_memory.give_idle_memory_back()
    finally:
        gc.enable()
    assert alive() is None
    if platform.libc_ver()[0] == "glibc":
        assert trimmed  # malloc_trim was found and called


def test_the_watcher_runs_in_the_server_process() -> None:
    names = [t.name for t in threading.enumerate() if t.is_alive()]
    assert "lnlab-give-back" in names


def test_every_run_of_the_app_is_reported(monkeypatch) -> None:
    runs: list[int] = []
    monkeypatch.setattr(server_memory, "note_run", lambda: runs.append(1))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    at.switch_page("pages/inputs/inputs.py").run()
    assert len(runs) == 2
