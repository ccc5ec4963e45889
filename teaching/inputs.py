"""The typed input object every computation starts from, cast to its dtype once."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

# Which affine parameters the layer applies (torch: elementwise_affine, bias).
AFFINE = {"both": "gamma and beta", "gamma": "gamma only", "neither": "neither"}
# What one LayerNorm statistic averages over, for a token batch (B, L, D).
PER = {"token": "per token", "sequence": "per sequence"}


@dataclass(frozen=True)
class Inputs:
    """x: shape S, (D,), (N, D) or (B, L, D); gamma, beta: (D,); dout: S. All of dtype `dtype`.

    affine (a key of AFFINE) says which of gamma and beta the layer applies; per (a key of
    PER) whether a token batch is normalized per token (over D) or per sequence (over L and
    D). Built once per rerun by ui.session.state.inputs(); the cached wrappers in ui.server.compute
    key on `digest`, so two reruns with the same numbers share every result.
    """

    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dout: np.ndarray
    eps: float
    dtype: str
    affine: str = "both"
    per: str = "token"

    @cached_property
    def digest(self) -> str:
        """A content hash of every field (arrays by shape, dtype and bytes)."""
        h = hashlib.blake2b(digest_size=16)
        for array in (self.x, self.gamma, self.beta, self.dout):
            h.update(repr((array.shape, array.dtype.str)).encode())
            h.update(np.ascontiguousarray(array).tobytes())
        h.update(repr((self.eps, self.dtype, self.affine, self.per)).encode())
        return h.hexdigest()

    def vector(self, index: tuple[int, ...]) -> Inputs:
        """The same inputs restricted to one vector: x and dout become (D,)."""
        return replace(self, x=self.x[index], dout=self.dout[index])

    def group(self, index: tuple[int, ...]) -> Inputs:
        """The same inputs restricted to the entries `index` picks, their axes kept: one
        sequence of a token batch stays (1, L, D), normalized per sequence as the group it is."""
        picked = tuple(slice(i, i + 1) for i in index)
        return replace(self, x=self.x[picked], dout=self.dout[picked])

    def affine_as_numbers(self) -> Inputs:
        """The same layer with a skipped gamma as ones and a skipped beta as zeros, both
        applied: every node and dx come out the same (gamma = 1 and beta = 0 change no digit),
        and the stepper's questions, which name gamma and beta, quote what the layer shows."""
        gamma = self.gamma if self.affine != "neither" else np.ones_like(self.gamma)
        beta = self.beta if self.affine == "both" else np.zeros_like(self.beta)
        return replace(self, gamma=gamma, beta=beta, affine="both")

    def rows(self) -> Inputs:
        """Tokens flattened to rows: x and dout become (N, D) (BatchNorm averages over all)."""
        d = self.x.shape[-1]
        return replace(self, x=self.x.reshape(-1, d), dout=self.dout.reshape(-1, d))

    def with_eps(self, eps: float) -> Inputs:
        return replace(self, eps=eps)

    @property
    def axis(self) -> tuple[int, ...]:
        """The axes LayerNorm averages over: (-2, -1) per sequence of a token batch, else (-1,)."""
        return (-2, -1) if self.per == "sequence" and self.x.ndim == 3 else (-1,)

    def _param(self, value: np.ndarray, used: bool) -> np.ndarray | None:
        # Per sequence, torch's LayerNorm((L, D)) has an (L, D) gamma: the same row per token.
        if not used:
            return None
        return np.broadcast_to(value, self.x.shape[-2:]) if len(self.axis) == 2 else value

    @property
    def layer_gamma(self) -> np.ndarray | None:
        """gamma as the layer applies it: None when skipped, (L, D) per sequence, else (D,)."""
        return self._param(self.gamma, self.affine != "neither")

    @property
    def layer_beta(self) -> np.ndarray | None:
        """beta as the layer applies it: None unless affine is "both"; shaped like layer_gamma."""
        return self._param(self.beta, self.affine == "both")
