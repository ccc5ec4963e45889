"""How much memory the server may hold, the allocator settings that let it give memory back,
and the moments it gives back what it no longer uses.

Imported by app.py, so it applies however the server was started. Every session's script runs
in a thread of its own, and glibc's malloc gives busy threads arenas of their own (up to 8 per
core) and, after the first large array is freed, serves later large arrays from those arenas
instead of mapping them afresh. A class's worth of large arrays then stays in arenas that
rarely shrink, and the server grows with every new visitor. Two arenas and a fixed mmap
threshold make every large array a mapping of its own, unmapped when freed.

What is smaller (the objects of a run, sessions that left, figures) is freed inside the arenas,
where glibc keeps it. When no run has started for PAUSE_S seconds, a thread of this module
collects garbage (Streamlit's own collection after each run is off, .streamlit/config.toml) and
asks glibc to return the arenas' free pages (malloc_trim), once per pause.

CEILING_MB is what a server may reach: the idle server, every cache full (CACHE_BUDGET_MB of
results plus the shared figures) and the sessions a class keeps open, each with its arrays at
the sidebar's largest shape. bench/bench_server_memory.py checks it.
"""

from __future__ import annotations

import ctypes
import gc
import threading

from ui.server.cache_budget import CACHE_BUDGET_MB

_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
# Arrays of 256 KiB and more (a 32 x 1024 float64 x is 256 KiB) get mappings of their own.
_MMAP_THRESHOLD = 256 * 2**10
_ARENAS = 2

IDLE_MB = 250  # a started server after its first run (measured: about 193 MB)
FIGURES_MB = 64  # ui/draw/figures: at most 64 shared figures, the largest about 1 MB of data
# Sessions open, or closed and kept: Streamlit keeps up to 128 closed ones until a new tab
# connects 2 minutes or more after they closed (dropping those of 200 tabs at the caps gave
# back 67 MB, bench/bench_server_memory.py).
SESSIONS = 100
SESSION_MB = 3  # x, dout and target at 8 x 16 x 1024 float64, 1 MiB each
CEILING_MB = IDLE_MB + CACHE_BUDGET_MB + FIGURES_MB + SESSIONS * SESSION_MB

# Seconds without a run before memory is given back: a class pausing. (A closed tab's session
# is dropped only when another tab connects, which is a run, so one pause covers it.)
PAUSE_S = 30.0
_ran = threading.Event()


def give_memory_back() -> bool:
    """Apply the allocator settings to this process; False where the C library is not glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except AttributeError:
        return False
    return bool(mallopt(_M_ARENA_MAX, _ARENAS)) and bool(
        mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    )


def give_idle_memory_back() -> bool:
    """Collect garbage and return the allocator's free pages to the system; False where the
    C library is not glibc (the collection still happens)."""
    gc.collect()
    try:
        malloc_trim = ctypes.CDLL(None).malloc_trim
    except AttributeError:
        return False
    malloc_trim(0)
    return True


def note_run() -> None:
    """Called by every full run of the app (a fragment's own rerun skips app.py): the server is
    busy, so the give-back waits."""
    _ran.set()


def watch(ran: threading.Event, pause: float = PAUSE_S) -> None:
    """Forever: once a run has been followed by `pause` seconds without another, give memory
    back (a run during the pause starts it again)."""
    while True:
        ran.wait()
        ran.clear()
        if not ran.wait(pause):
            give_idle_memory_back()


give_memory_back()
threading.Thread(target=watch, args=(_ran,), name="lnlab-give-back", daemon=True).start()
