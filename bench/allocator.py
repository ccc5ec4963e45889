"""Make glibc's malloc keep large freed blocks for reuse from the first call on.

By default glibc serves a large allocation (here a 12.6 MB result) with a fresh mmap and
unmaps it on free, so its pages are new each time: the kernel zeroes them and the first write
to each faults. Only after such a free does glibc raise its mmap threshold and start reusing
heap memory, and what else the process allocates (torch does a lot) decides when. NumPy
allocates every result anew, so benchmarks fix this up front: mallopt(M_MMAP_THRESHOLD) and
mallopt(M_TRIM_THRESHOLD) keep such blocks in the heap.
"""

from __future__ import annotations

import ctypes
import resource

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# glibc accepts at most 32 MiB for the mmap threshold on 64-bit; the outputs here are 12.6 MB.
_MMAP_THRESHOLD = 32 * 2**20
_TRIM_THRESHOLD = 1 << 30


def reuse_freed_memory() -> bool:
    """Apply the two settings to this process; False where the C library is not glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except AttributeError:
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    )


def minor_faults() -> int:
    """Minor page faults of this process so far (a fresh page's first touch is one)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
