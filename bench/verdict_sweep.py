"""Every verdict of the gradient check and of "break the backward" over the issue-19 grid.

x kinds (seeded normal x at scales 1e-30 .. 1e30, offsets 2e3 and 1e5, one outlier, the
classroom preset's integers) x D x dtypes x eps x upstream kinds (random, ones, one-hot,
zeros, random x 1e6), with a random gamma and with gamma = 1. For each case:

- the correct backward must never be called "fail";
- each bug must never be "missed" when it changes dx by at least 10x the check's bound;
- calibration: the largest |numerical - exact| / bound over correct gradients (must stay < 1),
  and the largest |analytic - exact| / bound.

    python -m bench.verdict_sweep            # the full grid (a few minutes)
    python -m bench.verdict_sweep --quick    # the CI grid of tests/core/test_verdict_sweep.py
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ln_core import (
    NODE_NAMES,
    Bug,
    audit,
    backward,
    check_node,
    closed_form_backward,
    forward,
    gradient_check,
)
from ln_core.agreement import agreement
from ln_core.audit import ENTRIES
from ln_core.bugs import CAUGHT, MISSED, check_bug
from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS, judge

FULL = {
    "d": (1, 2, 3, 8, 64, 128, 512),
    "dtype": ("float64", "float32"),
    "eps": (0.0, 1e-12, 1e-5, 1e-3, 1.0),
    "upstream": ("random", "ones", "one-hot", "zeros", "x1e6"),
    "x": (
        "scale 1e-30",
        "scale 1e-15",
        "scale 1e-5",
        "scale 1",
        "scale 1e5",
        "scale 1e15",
        "scale 1e30",
        "offset 2e3",
        "offset 1e5",
        "outlier",
    ),
    "gamma": ("random", "ones"),
}
QUICK = {
    "d": (1, 2, 3, 8, 64),
    "dtype": ("float64", "float32"),
    "eps": (0.0, 1e-5, 1e-3, 1.0),
    "upstream": ("random", "ones", "one-hot", "x1e6"),
    "x": ("scale 1e-30", "scale 1", "scale 1e15", "offset 2e3", "offset 1e5", "outlier"),
    "gamma": ("random", "ones"),
}
ROWS = 3


@dataclass(frozen=True)
class Inputs:
    label: tuple
    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dout: np.ndarray
    eps: float


def make_x(kind: str, d: int, rng: np.random.Generator) -> np.ndarray:
    base = rng.standard_normal((ROWS, d))
    if kind.startswith("scale"):
        return float(kind.split()[1]) * base
    if kind.startswith("offset"):
        return float(kind.split()[1]) + base
    base[:, 0] = 50.0
    return base


def make_dout(kind: str, d: int, rng: np.random.Generator) -> np.ndarray:
    random = rng.standard_normal((ROWS, d))
    if kind == "random":
        return random
    if kind == "ones":
        return np.ones((ROWS, d))
    if kind == "one-hot":
        hot = np.zeros((ROWS, d))
        hot[:, 0] = 1.0
        return hot
    if kind == "zeros":
        return np.zeros((ROWS, d))
    return 1e6 * random


def cases(grid: dict, seed: int = 0) -> Iterator[Inputs]:
    for d, dtype, eps, upstream, x_kind, gamma_kind in itertools.product(
        grid["d"], grid["dtype"], grid["eps"], grid["upstream"], grid["x"], grid["gamma"]
    ):
        rng = np.random.default_rng([seed, d])
        x = make_x(x_kind, d, rng)
        gamma = 1.0 + 0.5 * rng.standard_normal(d) if gamma_kind == "random" else np.ones(d)
        beta = 0.5 * rng.standard_normal(d)
        dout = make_dout(upstream, d, rng)
        label = (d, dtype, eps, upstream, x_kind, gamma_kind)
        cast = [a.astype(dtype) for a in (x, gamma, beta, dout)]
        yield Inputs(label, *cast, eps)


@dataclass
class Tally:
    """Counts and the worst offenders of one sweep."""

    cases: int = 0
    refused: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    bugs: Counter = field(default_factory=Counter)
    false_fails: list = field(default_factory=list)
    big_misses: list = field(default_factory=list)
    reference_ratio: float = 0.0
    worst_reference: tuple = ()
    analytic_ratio: float = 0.0
    eps_after_sqrt_default: Counter = field(default_factory=Counter)
    nodes: Counter = field(default_factory=Counter)
    node_false_fails: list = field(default_factory=list)
    node_big_misses: list = field(default_factory=list)
    node_ratio: float = 0.0
    agreement: Counter = field(default_factory=Counter)
    audit: Counter = field(default_factory=Counter)
    audit_flips: list = field(default_factory=list)


EXPECTED = {entry.id: entry.expected for entry in ENTRIES}


def judge_audit(tally: Tally, case: Inputs) -> None:
    """Every audited formula: a correct one never 'wrong', a wrong one never 'correct'."""
    for result in audit(case.x, case.gamma, case.beta, case.dout, case.eps):
        tally.audit[result.verdict] += 1
        if result.verdict not in (EXPECTED[result.id], "cannot decide"):
            tally.audit_flips.append((case.label, result.id, result.verdict, result.reason))


def largest_ratio(error: np.ndarray, bound: np.ndarray) -> float:
    """max |error| / bound (a nonzero error against a zero bound is infinitely far off)."""
    error = np.abs(np.asarray(error, dtype=np.float64))
    bound = np.broadcast_to(bound, error.shape)
    ratio = np.divide(error, bound, out=np.where(error > 0, np.inf, 0.0), where=bound > 0)
    return float(np.max(ratio, initial=0.0))


def judge_nodes(tally: Tally, case: Inputs, cache) -> None:
    """Every node's check on the correct staged gradients (never a fail) and on a wrong one,
    the gradient with its sign flipped (a fail wherever that is 10x the bound)."""
    grads = backward(case.dout, cache)
    for node in (*NODE_NAMES, "x"):
        try:
            result = check_node(cache, grads, node)
        except ValueError as err:
            tally.refused[f"node {node}: {str(err)[:50]}"] += 1
            continue
        tally.nodes[(node, result.status)] += 1
        if cache.dtype == np.float64:  # the analytic value is exact next to the bound
            ratio = largest_ratio(result.numerical - result.analytic, result.bound)
            tally.node_ratio = max(tally.node_ratio, ratio)
        if result.status == FAIL:
            tally.node_false_fails.append((case.label, node, result.judgement))
        flipped = judge(-result.analytic, result.numerical, result.bound)
        measurable = judge(-result.analytic, result.analytic, result.bound)
        if flipped.status != FAIL and measurable.excess >= 10:
            tally.node_big_misses.append((case.label, node, measurable.excess))


def run(grid: dict, seed: int = 0, nodes: bool = True, audits: bool = True) -> Tally:
    tally = Tally()
    for case in cases(grid, seed):
        try:
            check = gradient_check(case.x, case.gamma, case.beta, case.dout, case.eps)
        except (ValueError, FloatingPointError) as err:
            tally.refused[str(err).split(".")[0][:60]] += 1
            continue
        tally.cases += 1
        cache = forward(case.x, case.gamma, case.beta, case.eps)
        if nodes:
            judge_nodes(tally, case, cache)
        if audits and case.label[-1] == "random":
            judge_audit(tally, case)
        for tensor, result in agreement(
            cache, case.dout, check.analytic, check.closed_form
        ).items():
            tally.agreement[(tensor, result.status)] += 1
            if result.status == FAIL:
                tally.false_fails.append((case.label, "staged vs closed form", tensor))
        exact = closed_form_backward(
            case.dout.astype(np.float64),
            forward(*(a.astype(np.float64) for a in (case.x, case.gamma, case.beta)), case.eps),
        ).dx
        bound = check.bounds["dx"]
        reference = largest_ratio(check.numerical.dx - exact, bound)
        if reference > tally.reference_ratio:
            tally.reference_ratio, tally.worst_reference = reference, case.label
        analytic = largest_ratio(check.analytic.dx - exact, bound)
        tally.analytic_ratio = max(tally.analytic_ratio, analytic)
        for method in check.errors:
            for tensor in check.tensors:
                status = check.status(method, tensor)
                tally.statuses[(tensor, status)] += 1
                if status == FAIL:
                    tally.false_fails.append((case.label, method, tensor))
        for bug in Bug:
            if bug is Bug.UNBIASED_VARIANCE and cache.n < 2:
                continue
            result = check_bug(check, case.dout, cache, bug)
            tally.bugs[(bug.value, result.outcome)] += 1
            if result.outcome == MISSED and result.change.excess >= 10:
                tally.big_misses.append((case.label, bug.value, result.change.excess))
            if (
                bug is Bug.EPS_AFTER_SQRT
                and case.eps == 1e-3
                and case.label[3:]
                == (
                    "random",
                    "scale 1",
                    "random",
                )
            ):
                tally.eps_after_sqrt_default[result.outcome == CAUGHT] += 1
    return tally


def report(tally: Tally) -> str:
    lines = [
        f"cases judged: {tally.cases}; refused by the forward pass: {sum(tally.refused.values())}",
        f"correct gradients called fail: {len(tally.false_fails)} {tally.false_fails[:3]}",
        f"bugs changing dx by >= 10x the bound called missed: {len(tally.big_misses)} "
        f"{tally.big_misses[:3]}",
        f"largest |numerical - exact| / bound: {tally.reference_ratio:.2g} "
        f"(at {tally.worst_reference}); "
        f"largest |analytic - exact| / bound: {tally.analytic_ratio:.2g}",
        "eps_after_sqrt at eps = 1e-3, random x, dout, gamma: caught in "
        f"{tally.eps_after_sqrt_default[True]} of {sum(tally.eps_after_sqrt_default.values())}",
    ]
    lines.append(f"audit: {dict(tally.audit)}; flipped verdicts: {len(tally.audit_flips)}")
    flipped = Counter((f[1], f[2]) for f in tally.audit_flips)
    lines.extend(f"  {key}: {count}" for key, count in flipped.most_common(8))
    lines.extend(f"  {f}" for f in tally.audit_flips[:3])
    lines.append(
        f"node checks: correct ones called fail: {len(tally.node_false_fails)}; largest "
        f"|numerical - analytic| / bound in float64: {tally.node_ratio:.2g}"
    )
    lines.extend(f"  {f[:2]} {f[2]}" for f in tally.node_false_fails[:4])
    lines.append(
        f"node checks: flipped sign >= 10x the bound not failed: {len(tally.node_big_misses)}"
    )
    nodes = sorted({k[0] for k in tally.nodes})
    for node in nodes:
        counts = {s: tally.nodes[(node, s)] for s in (PASS, CANNOT_RESOLVE, FAIL)}
        lines.append(f"  {node}: {counts}")
    for tensor in ("dx", "dgamma", "dbeta"):
        counts = {s: tally.agreement[(tensor, s)] for s in (PASS, CANNOT_RESOLVE, FAIL)}
        lines.append(f"staged vs closed form {tensor}: {counts}")
    for tensor in ("dx", "dgamma", "dbeta"):
        counts = {s: tally.statuses[(tensor, s)] for s in (PASS, CANNOT_RESOLVE, FAIL)}
        lines.append(f"{tensor}: {counts}")
    for bug in Bug:
        counts = {k[1]: v for k, v in sorted(tally.bugs.items()) if k[0] == bug.value}
        lines.append(f"{bug.value}: {counts}")
    for reason, count in tally.refused.most_common(3):
        lines.append(f"refused {count}: {reason}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the CI grid only")
    args = parser.parse_args()
    print(report(run(QUICK if args.quick else FULL)))


if __name__ == "__main__":
    main()
