"""PyTorch reference functions for the benchmarks. Only bench/ imports torch; ln_core never does."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

THREADS = 2


def use_threads(threads: int = THREADS) -> None:
    """Give torch the same two cores the ln_core kernels use."""
    torch.set_num_threads(threads)


def tensors(*arrays: np.ndarray, requires_grad: bool = True) -> list[torch.Tensor]:
    """Copies of NumPy arrays as tensors of the same dtype (copies, so torch owns its memory)."""
    return [torch.tensor(a, requires_grad=requires_grad) for a in arrays]


def layer_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float):
    return F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)


class ScaledDxLayerNorm(torch.autograd.Function):
    """layer_norm whose backward returns 1.01 * dx: a wrong gradient gradcheck must flag."""

    eps = 1e-5

    @staticmethod
    def forward(ctx, x, gamma, beta):
        ctx.save_for_backward(x, gamma, beta)
        return layer_norm(x, gamma, beta, ScaledDxLayerNorm.eps)

    @staticmethod
    def backward(ctx, grad_out):
        inputs = [t.detach().requires_grad_() for t in ctx.saved_tensors]
        with torch.enable_grad():
            out = layer_norm(*inputs, ScaledDxLayerNorm.eps)
            dx, dgamma, dbeta = torch.autograd.grad(out, inputs, grad_out)
        return dx * 1.01, dgamma, dbeta
