"""The audit's verdicts do not depend on the inputs: over 40 seeds x {float32, float64} x
eps {0, 1e-5, 1e-3} x D {2, 3, 8, 64, 1024} x every upstream-gradient kind, each entry gets its
expected verdict (audit_expected.EXPECTED) or "cannot decide", never the other verdict.

The 40 seeds of one (D, upstream kind, dtype) are stacked into one Case, so every formula runs
once for all of them; the documents without ε are judged at ε = 0 whatever the case's ε, so the
three ε share that Case (Case.with_eps) and those documents are evaluated once.
"""

from __future__ import annotations

import numpy as np
import pytest
from audit_expected import EXPECTED

from ln_core import forward
from ln_core.audit import Case, audit_case
from teaching.presets import make_example
from teaching.upstream import one_hot, squared_error_gradient

SEEDS = range(40)
DTYPES = (np.float32, np.float64)
EPS = (0.0, 1e-5, 1e-3)
DS = (2, 3, 8, 64, 1024)
VECTORS = 3


def upstream_kinds(seed: int, x: np.ndarray, gamma, beta) -> dict[str, np.ndarray]:
    """The app's upstream-gradient kinds (ui.session.state.UPSTREAM_KINDS) for x: random as the app
    seeds it (an edited one starts from it), all ones, one-hot at the first and at the last
    output, and the gradient of 1/2 ||y - target||^2 (at ε = 1e-5)."""
    rng = np.random.default_rng(seed + 1)
    random, target = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
    return {
        "random": random,
        "ones": np.ones_like(x),
        "one_hot first": one_hot(x.shape, 0),
        "one_hot last": one_hot(x.shape, x.shape[-1] - 1),
        "loss": squared_error_gradient(forward(x, gamma, beta, 1e-5).out, target),
    }


def stacked_inputs(d: int) -> dict[str, list[tuple[np.ndarray, ...]]]:
    """For each upstream kind, the (x, gamma, beta, dout) of every seed."""
    by_kind: dict[str, list[tuple[np.ndarray, ...]]] = {}
    for seed in SEEDS:
        example = make_example("Random normal", (VECTORS, d), seed)
        kinds = upstream_kinds(seed, example.x, example.gamma, example.beta)
        for kind, dout in kinds.items():
            by_kind.setdefault(kind, []).append((example.x, example.gamma, example.beta, dout))
    return by_kind


@pytest.mark.parametrize("d", DS)
def test_every_verdict_is_the_expected_one_or_cannot_decide(d):
    flipped, undecided_random, reasons = [], [], []
    for kind, inputs in stacked_inputs(d).items():
        for dtype in DTYPES:
            cast = [tuple(a.astype(dtype) for a in case) for case in inputs]
            base = Case.stack(cast, eps=0.0)
            for eps in EPS:
                for seed, results in zip(SEEDS, audit_case(base.with_eps(eps)), strict=True):
                    for result in results:
                        where = (result.id, seed, kind, np.dtype(dtype).name, eps)
                        if result.verdict == "cannot decide":
                            if not result.reason.startswith("These inputs cannot decide"):
                                reasons.append(where)
                            # A random upstream gradient with D >= 3 always decides (but
                            # dividing by N is dividing by D when the batch has D vectors).
                            square = result.id.endswith("-layernorm") and d == VECTORS
                            if kind == "random" and d >= 3 and not square:
                                undecided_random.append(where)
                        elif result.verdict != EXPECTED[result.id]:
                            flipped.append((*where, result.verdict, result.reason))
    assert not flipped, f"{len(flipped)} verdicts flipped, e.g. {flipped[:5]}"
    assert not undecided_random, f"undecided on decisive inputs: {undecided_random[:5]}"
    assert not reasons, f"'cannot decide' without saying so: {reasons[:5]}"
