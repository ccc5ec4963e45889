"""BatchNorm as LayerNorm of the transposed input.

BatchNorm normalizes each feature over the batch (axis 0); LayerNorm normalizes each vector over
its features (the last axis). Moving the batch axis to the end turns every feature's batch
column into one vector, so LayerNorm's forward and backward, run with unit gamma and zero beta,
do all of BatchNorm's work; gamma and beta are then applied per feature, outside the transpose.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.agreement import agreement, output_agreement
from ln_core.backward import Grads, backward, param_grads
from ln_core.forward import forward, run_nodes
from ln_core.gradcheck import compare, rel_error
from ln_core.validation import (
    check_dout,
    check_input_x,
    check_params,
    numeric_guard,
)
from ln_core.verdict import Judgement


@dataclass(frozen=True)
class BatchNormResult(Grads):
    """BatchNorm's output and the gradients of sum(dout * out).

    out, dx: x's shape ((N, D) or (B, L, D)); dgamma, dbeta: (D,).
    """

    out: np.ndarray


@dataclass(frozen=True)
class BNComparison:
    """BatchNorm computed directly (forward/backward with axis=0) and via the transpose.

    errors: rel_error of the two for "out", "dx", "dgamma" and "dbeta"; judgements: the two
    judged against their rounding (ln_core.agreement), for the same keys.
    """

    direct: BatchNormResult
    via_transpose: BatchNormResult
    errors: dict[str, float]
    judgements: dict[str, Judgement]

    @property
    def max_error(self) -> float:
        return max(self.errors.values())


def _check_batch(x: np.ndarray) -> np.ndarray:
    x = check_input_x(x)
    if x.ndim < 2:
        raise ValueError(
            f"BatchNorm normalizes over a batch, but x has shape {x.shape}; give it a batch "
            "axis first: (N, D) or (B, L, D)."
        )
    return x


def batchnorm_via_transpose(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float = 1e-5,
) -> BatchNormResult:
    """BatchNorm over axis 0 by running LayerNorm (axis=-1) on x with axis 0 moved last.

    x: (N, D) or (B, L, D); gamma, beta: (D,); dout: x's shape. Returns out, dx (x's shape)
    and dgamma, dbeta (D,), in x's dtype.
    """
    x = _check_batch(x)
    gamma, beta = check_params(x, gamma, beta)
    dout = check_dout(dout, x.shape, x.dtype)
    try:
        unit = forward(np.moveaxis(x, 0, -1), eps=eps)
    except ValueError as err:
        # Of the same kind (a zero variance stays one: the app offers its fixes).
        raise type(err)(
            f"In the transposed view (each feature's batch column is one vector): {err}"
        ) from None
    normalized_x = np.moveaxis(unit.normalized_x, -1, 0)
    with numeric_guard("BatchNorm's gamma and beta"):
        # The graph's last two nodes (gx, out), per feature, outside the transpose.
        values = {"normalized_x": normalized_x, "gamma": gamma, "beta": beta}
        out = run_nodes(values, (-1,), eps, after="normalized_x")["out"]
        # gamma sits outside the transposed LayerNorm, so its factor is applied before entering.
        dnormalized_x = dout if gamma is None else dout * gamma
    dx = np.moveaxis(backward(np.moveaxis(dnormalized_x, 0, -1), unit).dx, -1, 0)
    dgamma, dbeta = param_grads(dout, normalized_x, gamma, beta)
    return BatchNormResult(dx=dx, dgamma=dgamma, dbeta=dbeta, out=out)


def compare_bn_ln(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float = 1e-5,
) -> BNComparison:
    """BatchNorm two ways: the staged graph with axis=0, and LayerNorm of the transpose.

    Shapes as in `batchnorm_via_transpose`. The two agree to rounding; errors shows by how much.
    """
    via_transpose = batchnorm_via_transpose(x, gamma, beta, dout, eps)
    cache = forward(x, gamma, beta, eps, axis=0)
    grads = backward(dout, cache)
    direct = BatchNormResult(dx=grads.dx, dgamma=grads.dgamma, dbeta=grads.dbeta, out=cache.out)
    return BNComparison(
        direct=direct,
        via_transpose=via_transpose,
        errors={"out": rel_error(direct.out, via_transpose.out), **compare(direct, via_transpose)},
        judgements={
            "out": output_agreement(cache, direct.out, via_transpose.out),
            **agreement(cache, grads.dout, direct, via_transpose, own_forward=True),
        },
    )
