"""What LayerNorm's and RMSNorm's staged passes share: how a line reads, and the cache's views.

Each pass computes its nodes in plain NumPy (ln_core/forward.py, ln_core/rmsnorm.py). Beside
the code each keeps a small table of `Line`s, one per node: the line as the pages print it
and the earlier values it reads (the graph's edges). The tests hold each table to its code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ln_core.validation import param_shape

# The affine parameters; either may be None, and the line that uses it then passes its other
# input through (gx = normalized_x without gamma, out = gx without beta).
PARAMETERS = ("gamma", "beta")


@dataclass(frozen=True)
class Line:
    """One forward line, `name = expression`, and the names the expression reads."""

    name: str
    expression: str
    inputs: tuple[str, ...]

    def text(self, skipped: tuple[str, ...] = ()) -> str:
        """The line as it runs: `gx = normalized_x  (no gamma)` when gamma is skipped."""
        missing = [name for name in self.inputs if name in skipped]
        if not missing:
            return f"{self.name} = {self.expression}"
        kept = " ".join(name for name in self.inputs if name not in skipped)
        return f"{self.name} = {kept}  (no {' '.join(missing)})"


class StagedCache:
    """What every staged forward cache offers; a subclass lists its lines in LINES.

    A mixin, not a dataclass: each cache writes out all its own fields.
    """

    LINES: ClassVar[tuple[Line, ...]]
    x: np.ndarray
    gamma: np.ndarray | None
    beta: np.ndarray | None
    axis: tuple[int, ...]

    @property
    def n(self) -> int:
        """How many entries each statistic averages over (D for LayerNorm, N for BatchNorm)."""
        return math.prod(self.x.shape[a] for a in self.axis)

    @property
    def nodes(self) -> dict[str, np.ndarray]:
        """The nodes in forward order."""
        return {line.name: getattr(self, line.name) for line in self.LINES}

    @property
    def dtype(self) -> np.dtype:
        return self.x.dtype

    @property
    def skipped(self) -> tuple[str, ...]:
        """The affine parameters left out (None): () for the full layer, up to (gamma, beta)."""
        return tuple(p for p in PARAMETERS if getattr(self, p) is None)

    @property
    def param_ndim(self) -> int:
        """How many trailing axes gamma and beta cover (see validation.param_shape)."""
        return len(param_shape(self.x.shape, self.axis))

    def line(self, node: str) -> str:
        """The forward line of `node` as this pass ran it (saying what it skipped)."""
        return self._line(node).text(self.skipped)

    def skipped_in(self, node: str) -> tuple[str, ...]:
        """The skipped parameters `node`'s line would read: ("gamma",) for gx without gamma."""
        return tuple(p for p in self.skipped if p in self._line(node).inputs)

    def _line(self, node: str) -> Line:
        return next(line for line in self.LINES if line.name == node)
