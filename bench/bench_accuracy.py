"""(6) Accuracy at D = 2^22: every ln_core path and PyTorch against a long-double reference.

One row x of shape (1, 2^22), in float32 and in float64. Each path (staged forward + backward,
forward + closed form, the fused kernel) and torch's F.layer_norm + backward in the same
dtype are compared with the same formulas evaluated in np.longdouble (64-bit mantissa on
x86-64, 11 more bits than float64). Error = max |path - reference| / max |reference| per
tensor. Target: every ln_core path within 2x PyTorch's own error in the same dtype.
"""

from __future__ import annotations

import sys

import numpy as np

import ln_core
from bench import longdouble_ref, torch_ref
from bench.results import table, times, write_result, yes_no
from ln_core.fast import layernorm_forward_backward

D = 1 << 22
EPS = 1e-5
TARGET = 2.0
TENSORS = ("out", "dx", "dgamma", "dbeta")


def inputs(dtype) -> tuple[np.ndarray, ...]:
    """x ~ N(1, 1) (an offset, so the mean cancels digits), dout ~ N(0, 1), gamma ~ N(1, 0.1),
    beta ~ N(0, 0.1); shape (1, D) and (D,)."""
    rng = np.random.default_rng(0)
    return (
        rng.normal(1.0, 1.0, (1, D)).astype(dtype),
        rng.normal(1.0, 0.1, D).astype(dtype),
        rng.normal(0.0, 0.1, D).astype(dtype),
        rng.normal(0.0, 1.0, (1, D)).astype(dtype),
    )


def reference(x, gamma, beta, dout) -> dict[str, np.ndarray]:
    """out, dx, dgamma, dbeta by the textbook formulas in np.longdouble."""
    return longdouble_ref.reference(x, gamma, beta, dout, EPS)


def paths(x, gamma, beta, dout) -> dict[str, dict[str, np.ndarray]]:
    cache = ln_core.forward(x, gamma, beta, EPS)
    staged = ln_core.backward(dout, cache)
    closed = ln_core.closed_form_backward(dout, cache)
    fused = layernorm_forward_backward(x, gamma, beta, dout, EPS)
    tx, tgamma, tbeta = torch_ref.tensors(x, gamma, beta)
    (tdout,) = torch_ref.tensors(dout, requires_grad=False)
    tout = torch_ref.layer_norm(tx, tgamma, tbeta, EPS)
    tout.backward(tdout)
    return {
        "staged": {
            "out": cache.out,
            "dx": staged.dx,
            "dgamma": staged.dgamma,
            "dbeta": staged.dbeta,
        },
        "closed form": {
            "out": cache.out,
            "dx": closed.dx,
            "dgamma": closed.dgamma,
            "dbeta": closed.dbeta,
        },
        "fused": {"out": fused.out, "dx": fused.dx, "dgamma": fused.dgamma, "dbeta": fused.dbeta},
        "torch": {
            "out": tout.detach().numpy(),
            "dx": tx.grad.numpy(),
            "dgamma": tgamma.grad.numpy(),
            "dbeta": tbeta.grad.numpy(),
        },
    }


def errors(dtype) -> dict[str, dict[str, float]]:
    args = inputs(dtype)
    ref = reference(*args)
    scale = {t: float(np.max(np.abs(ref[t]))) for t in TENSORS}
    return {
        name: {
            t: float(np.max(np.abs(np.asarray(got[t], np.longdouble) - ref[t]))) / scale[t]
            for t in TENSORS
        }
        for name, got in paths(*args).items()
    }


def main() -> int:
    torch_ref.use_threads()
    measured = {np.dtype(d).name: errors(d) for d in (np.float32, np.float64)}
    rows, met = [], True
    for dtype, per_path in measured.items():
        torch_errors = per_path["torch"]
        for name, errs in per_path.items():
            ratios = {t: errs[t] / max(torch_errors[t], 1e-300) for t in TENSORS}
            ok = name == "torch" or all(r <= TARGET for r in ratios.values())
            met &= ok
            cells = [
                f"{errs[t]:.1e}" + ("" if name == "torch" else f" ({times(ratios[t])})")
                for t in TENSORS
            ]
            rows.append([dtype, name, *cells, "" if name == "torch" else yes_no(ok)])
    text = (
        f"One row x of shape (1, 2^22 = {D}), x ~ N(1, 1), dout ~ N(0, 1), gamma ~ N(1, 0.1), "
        f"beta ~ N(0, 0.1), eps = {EPS:g}. Error: max |path - reference| / max |reference| per "
        "tensor, the reference being the same formulas in np.longdouble; in brackets, the ratio "
        f"to PyTorch's own error in the same dtype (target: at most {TARGET:g}x). "
        "Reproduce: `.venv/bin/python -m bench.bench_accuracy`."
    )
    write_result(
        "accuracy",
        "6. Accuracy at D = 2^22 against a long-double reference",
        6,
        text,
        [table(["dtype", "path", *TENSORS, f"within {TARGET:g}x torch"], rows)],
        raw=measured,
    )
    for row in rows:
        print(" | ".join(row))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
