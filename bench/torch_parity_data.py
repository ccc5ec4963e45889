"""Write tests/core/data/torch_reference.npz: PyTorch's LayerNorm and RMSNorm on small cases.

tests/core/test_torch_parity.py compares ln_core with these numbers, so the test suite needs no
torch. Rerun after changing the cases: `.venv/bin/python -m bench.torch_parity_data`
(needs requirements-bench.txt).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "torch_reference.npz"

# name: (kind, x shape, normalized axes k, dtype, eps, has gamma, has beta)
CASES = {
    "layernorm": ("layer", (3, 4, 5), 1, "float64", 1e-5, True, True),
    "layernorm_without_bias": ("layer", (3, 4, 5), 1, "float64", 1e-5, True, False),
    "layernorm_without_affine": ("layer", (3, 4, 5), 1, "float64", 1e-5, False, False),
    "layernorm_over_two_axes": ("layer", (3, 4, 5), 2, "float64", 1e-5, True, True),
    "layernorm_over_two_axes_without_affine": (
        "layer",
        (3, 4, 5),
        2,
        "float64",
        1e-5,
        False,
        False,
    ),
    "layernorm_over_three_axes": ("layer", (2, 3, 4, 2), 3, "float64", 1e-3, True, True),
    "layernorm_single_feature": ("layer", (4, 1), 1, "float64", 1e-5, True, True),
    "layernorm_float32": ("layer", (6, 8), 1, "float32", 1e-5, True, True),
    "layernorm_float32_over_two_axes": ("layer", (2, 6, 8), 2, "float32", 1e-5, True, False),
    "rmsnorm": ("rms", (3, 4, 5), 1, "float64", 1e-6, True, False),
    "rmsnorm_over_two_axes_without_affine": ("rms", (3, 4, 5), 2, "float64", 1e-6, False, False),
}


def _case(seed: int, kind: str, shape, k: int, dtype: str, eps: float, has_g: bool, has_b: bool):
    rng = np.random.default_rng(seed)
    block = shape[len(shape) - k :]
    arrays = {
        "x": (0.5 + 2.0 * rng.normal(size=shape)).astype(dtype),
        "dout": rng.normal(size=shape).astype(dtype),
    }
    if has_g:
        arrays["gamma"] = rng.uniform(0.5, 2.0, size=block).astype(dtype)
    if has_b:
        arrays["beta"] = rng.normal(size=block).astype(dtype)
    inputs = {name: torch.tensor(a, requires_grad=True) for name, a in arrays.items()}
    weight, bias = inputs.get("gamma"), inputs.get("beta")
    if kind == "layer":
        out = F.layer_norm(inputs["x"], block, weight, bias, eps)
    else:
        out = F.rms_norm(inputs["x"], block, weight, eps)
    out.backward(inputs["dout"])
    arrays["out"] = out.detach().numpy()
    for name in ("x", "gamma", "beta"):
        if name in inputs:
            arrays[f"d{name}"] = inputs[name].grad.numpy()
    meta = {"kind": kind, "k": k, "eps": eps, "torch": torch.__version__}
    return arrays, meta


def main() -> None:
    torch.manual_seed(0)
    stored: dict[str, np.ndarray] = {}
    for seed, (name, spec) in enumerate(CASES.items()):
        arrays, meta = _case(seed, *spec)
        stored[f"{name}__meta"] = np.array(json.dumps(meta))
        stored.update({f"{name}__{key}": value for key, value in arrays.items()})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **stored)
    print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    main()
