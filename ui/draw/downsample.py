"""Shrinking a large matrix for display: block means keep its picture, not its every entry."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Downsampled:
    """matrix: (ceil(R / block), ceil(C / block)) block means of the original (R, C)."""

    matrix: np.ndarray
    block: int


def block_mean(matrix: np.ndarray, max_size: int) -> Downsampled:
    """Average square blocks so that neither side exceeds max_size (block = 1: unchanged).

    Edge blocks that do not fill a whole square average over the entries they have.
    """
    if max_size < 1:
        raise ValueError(f"max_size must be at least 1, got {max_size}.")
    rows, cols = matrix.shape
    block = int(np.ceil(max(rows, cols) / max_size))
    if block <= 1:
        return Downsampled(matrix, 1)
    pad_r, pad_c = -rows % block, -cols % block
    padded = np.pad(matrix, ((0, pad_r), (0, pad_c)), constant_values=np.nan)
    blocks = padded.reshape(padded.shape[0] // block, block, padded.shape[1] // block, block)
    return Downsampled(np.nanmean(blocks, axis=(1, 3)).astype(matrix.dtype), block)
