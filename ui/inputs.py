"""The typed input object every computation starts from, cast to its dtype once."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class Inputs:
    """x: shape S, (D,), (N, D) or (B, L, D); gamma, beta: (D,); dout: S. All of dtype `dtype`.

    Built once per rerun by ui.state.inputs(); the cached wrappers in ui.compute key on
    `digest`, so two reruns with the same numbers share every result.
    """

    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dout: np.ndarray
    eps: float
    dtype: str

    @cached_property
    def digest(self) -> str:
        """A content hash of every field (arrays by shape, dtype and bytes)."""
        h = hashlib.blake2b(digest_size=16)
        for array in (self.x, self.gamma, self.beta, self.dout):
            h.update(repr((array.shape, array.dtype.str)).encode())
            h.update(np.ascontiguousarray(array).tobytes())
        h.update(repr((self.eps, self.dtype)).encode())
        return h.hexdigest()

    def vector(self, index: tuple[int, ...]) -> Inputs:
        """The same inputs restricted to one vector: x and dout become (D,)."""
        return replace(self, x=self.x[index], dout=self.dout[index])

    def rows(self) -> Inputs:
        """Tokens flattened to rows: x and dout become (N, D) (BatchNorm averages over all)."""
        d = self.x.shape[-1]
        return replace(self, x=self.x.reshape(-1, d), dout=self.dout.reshape(-1, d))

    def with_eps(self, eps: float) -> Inputs:
        return replace(self, eps=eps)
