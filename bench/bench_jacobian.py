"""(3) The (D, D) Jacobian of one vector: ln_core.jacobian against
torch.autograd.functional.jacobian, at D = 64, 256, 1024, float64."""

from __future__ import annotations

import numpy as np
import torch

import ln_core
from bench import torch_ref
from bench.results import ms, table, times, write_result
from bench.timing import interleaved, median_ms

EPS = 1e-5
DIMS = (64, 256, 1024)
ROUNDS = 15


def inputs(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(d)
    return rng.normal(0.5, 2.0, d), rng.normal(1.0, 0.3, d), rng.normal(0.0, 0.5, d)


def torch_jacobian(x, gamma, beta, vectorize: bool) -> torch.Tensor:
    return torch.autograd.functional.jacobian(
        lambda t: torch_ref.layer_norm(t, gamma, beta, EPS), x, vectorize=vectorize
    )


def measure(d: int) -> tuple[dict[str, list[float]], float]:
    """Seconds per call for each side, and max |ln_core - torch| over the Jacobian's entries."""
    x, gamma, beta = inputs(d)
    tx, tgamma, tbeta = torch_ref.tensors(x, gamma, beta, requires_grad=False)
    difference = float(
        np.max(
            np.abs(
                ln_core.jacobian(x, gamma, EPS) - torch_jacobian(tx, tgamma, tbeta, False).numpy()
            )
        )
    )
    seconds = interleaved(
        {
            "ln_core": lambda: ln_core.jacobian(x, gamma, EPS),
            "torch": lambda: torch_jacobian(tx, tgamma, tbeta, False),
            "torch, vectorize=True": lambda: torch_jacobian(tx, tgamma, tbeta, True),
        },
        rounds=ROUNDS,
    )
    return seconds, difference


def main() -> None:
    torch_ref.use_threads()
    rows, raw = [], {}
    for d in DIMS:
        seconds, difference = measure(d)
        ln_ms = median_ms(seconds["ln_core"])
        torch_ms = median_ms(seconds["torch"])
        vectorized_ms = median_ms(seconds["torch, vectorize=True"])
        rows.append(
            [
                d,
                ms(ln_ms),
                ms(torch_ms),
                times(torch_ms / ln_ms),
                ms(vectorized_ms),
                times(vectorized_ms / ln_ms),
                f"{difference:.1e}",
            ]
        )
        raw[str(d)] = {"seconds": seconds, "max_abs_difference": difference}
        print(rows[-1])
    text = (
        "One float64 vector x ~ N(0.5, 2) with gamma ~ N(1, 0.3), beta ~ N(0, 0.5), "
        f"eps = {EPS}. ln_core.jacobian builds J = d out / d x from the closed form; "
        "torch.autograd.functional.jacobian runs one backward pass per output row (its "
        "default), or one batched pass with vectorize=True. "
        f"{ROUNDS} interleaved rounds after a warm-up; medians. No target was set."
    )
    write_result(
        "jacobian",
        "3. Jacobian of one vector (float64)",
        3,
        text,
        [
            table(
                [
                    "D",
                    "ln_core median (ms)",
                    "torch median (ms)",
                    "torch ÷ ln_core",
                    "torch vectorize=True (ms)",
                    "÷ ln_core",
                    "max |difference|",
                ],
                rows,
            )
        ],
        raw,
    )


if __name__ == "__main__":
    main()
