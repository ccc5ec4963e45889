"""This machine's memory bandwidth, by NumPy copies of arrays far larger than the caches."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

import numpy as np

from bench.timing import interleaved

COPY_BYTES = 512 * 2**20


def copy_bandwidth(rounds: int = 7, threads: int = 2) -> dict[str, float]:
    """GB/s (1e9 bytes/s, bytes read + bytes written) of np.copyto on 512 MiB arrays.

    Keys: "1 thread", and "<threads> threads" where each thread copies its own slice.
    """
    source = np.ones(COPY_BYTES // 8)
    target = np.zeros_like(source)
    bounds = np.linspace(0, source.size, threads + 1).astype(int)
    shares = [slice(a, b) for a, b in pairwise(bounds)]

    def copy(share: slice) -> None:
        np.copyto(target[share], source[share])

    with ThreadPoolExecutor(threads) as pool:
        seconds = interleaved(
            {
                "1 thread": lambda: copy(slice(None)),
                f"{threads} threads": lambda: list(pool.map(copy, shares)),
            },
            rounds=rounds,
        )
    return {name: 2 * COPY_BYTES / float(np.median(s)) / 1e9 for name, s in seconds.items()}
