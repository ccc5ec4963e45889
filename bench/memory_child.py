"""Child process for bench_memory: run one case on the (32, 128, 768) problem, report peak RSS.

Run as `python -m bench.memory_child --child CASE`. Each case is its own process because peak
RSS only ever grows; the baselines import the libraries and make nothing.
"""

from __future__ import annotations

import resource
import sys
from collections.abc import Callable

import ln_core
from bench.child import report
from bench.inputs import EPS, large_inputs


def _staged() -> object:
    x, gamma, beta, dout = large_inputs()
    return ln_core.backward(dout, ln_core.forward(x, gamma, beta, EPS))


def _closed_form() -> object:
    x, gamma, beta, dout = large_inputs()
    return ln_core.closed_form_backward(dout, ln_core.forward(x, gamma, beta, EPS))


def _fused() -> object:
    x, gamma, beta, dout = large_inputs()
    return ln_core.layernorm_forward_backward(x, gamma, beta, dout, EPS)


def _inputs_only() -> object:
    return large_inputs()


def _torch_baseline() -> object:
    # torch is imported only by the torch cases, so that it is never part of ln_core's numbers.
    from bench import torch_ref

    torch_ref.use_threads()
    return None


def _torch() -> object:
    from bench import torch_ref

    torch_ref.use_threads()
    # from_numpy shares the arrays, so the inputs are in memory once, as in the ln_core cases.
    tx, tgamma, tbeta, tdout = (torch_ref.torch.from_numpy(a) for a in large_inputs())
    for t in (tx, tgamma, tbeta):
        t.requires_grad_()
    out = torch_ref.layer_norm(tx, tgamma, tbeta, EPS)
    out.backward(tdout)
    return out, tx.grad


CASES: dict[str, Callable[[], object]] = {
    "baseline": lambda: None,
    "inputs only": _inputs_only,
    "forward + backward (staged)": _staged,
    "forward + closed_form_backward": _closed_form,
    "fused layernorm_forward_backward": _fused,
    "torch baseline": _torch_baseline,
    "torch layer_norm forward + backward": _torch,
}


def peak_rss_mb(case: str) -> float:
    """Run the case, keep its result alive, and return this process's peak RSS in MB."""
    result = CASES[case]()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    del result
    return peak_kb * 1024 / 1e6


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    report(peak_rss_mb(sys.argv[2]))
