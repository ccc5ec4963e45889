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
    python -m bench.verdict_sweep --power    # issue 37: each page's power (below)

The power sweep (issue 37) asks the opposite question on the inputs students see: the presets x
float64/float32 x D 2..64 x four upstream kinds x eps 1e-5 x seeds, against the exact gradients
of bench.longdouble_ref. Per page: correct gradients failed; wrong ones (x 1.1, each known bug)
passed or "cannot resolve" where a central difference can tell them (they are off the truth by
more than TELL times the working dtype's central difference is, and by at least 5 %); and
correct ones "cannot resolve" where that central difference is within 1 % of the truth.
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from bench.longdouble_ref import node_reference, reference
from ln_core import (
    NODE_NAMES,
    Bug,
    audit,
    backward,
    check_node,
    closed_form_backward,
    default_h,
    forward,
    gradient_check,
    jacobian_facts,
    make_sublayer,
    numerical_gradients,
    residual_backward,
    residual_forward,
    residual_numerical_grads,
)
from ln_core.agreement import agreement
from ln_core.audit import ENTRIES
from ln_core.bugs import CAUGHT, MISSED, check_bug
from ln_core.jacobian_facts import facts_of
from ln_core.node_check import NodeCheck, node_step, numerical_node_gradient
from ln_core.residual_check import residual_check
from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS, judge
from teaching.presets import PRESETS, make_example
from teaching.upstream import one_hot, squared_error_gradient

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


def judge_nodes(tally: Tally, case: Inputs, cache) -> dict[str, NodeCheck]:
    """Every node's check on the correct staged gradients (never a fail) and on a wrong one,
    the gradient with its sign flipped (a fail wherever that is 10x the bound). Returns the
    checks by node."""
    grads = backward(case.dout, cache)
    checks = {}
    for node in (*NODE_NAMES, "x"):
        try:
            result = check_node(cache, grads, node)
        except ValueError as err:
            tally.refused[f"node {node}: {str(err)[:50]}"] += 1
            continue
        checks[node] = result
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
    return checks


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


POWER = {
    "preset": (
        "Random normal",
        "Classroom (D = 4, integers)",
        "Constant vector",
        "One large outlier",
        "Large common offset (about 2000)",
    ),
    "dtype": ("float64", "float32"),
    "d": (2, 3, 4, 8, 16, 32, 64),
    "upstream": ("random", "ones", "one_hot", "loss"),
    "seed": (0, 1, 2),  # --seeds picks the first few
}
POWER_EPS = 1e-5
# A wrong value a central difference can tell from the truth: off it by more than TELL times
# the working dtype's central difference is, and by at least WRONG of its size. A correct one
# it resolves: the central difference within WITHIN of the truth.
TELL, WRONG, WITHIN = 3.0, 0.05, 0.01
# The residual block's central differences run the whole block per entry: its page's cap.
RESIDUAL_D = 32


def power_cases(grid: dict) -> Iterator[Inputs]:
    """The presets' inputs (3 vectors of D; the classroom's own (2, 4) once, at D = 4) with
    each upstream kind, cast to the dtype (eps as given: the computation rounds it)."""
    for preset, dtype, d, upstream, seed in itertools.product(
        grid["preset"], grid["dtype"], grid["d"], grid["upstream"], grid["seed"]
    ):
        if PRESETS[preset].fixed and d != PRESETS[preset].shape[-1]:
            continue
        example = make_example(preset, (ROWS, d), seed)
        rng = np.random.default_rng([seed, d, 37])
        shape = example.x.shape
        if upstream == "random":
            dout = rng.standard_normal(shape)
        elif upstream == "ones":
            dout = np.ones(shape)
        elif upstream == "one_hot":
            dout = one_hot(shape, 0)
        else:
            out = forward(example.x, example.gamma, example.beta, POWER_EPS).out
            dout = squared_error_gradient(out, rng.standard_normal(shape))
        cast = [a.astype(dtype) for a in (example.x, example.gamma, example.beta, dout)]
        yield Inputs((preset, dtype, d, upstream, seed), *cast, POWER_EPS)


def working_eps(case: Inputs) -> float:
    """eps as the working dtype adds it to the variance."""
    return float(case.x.dtype.type(case.eps))


def size_of(a) -> float:
    return float(np.max(np.abs(np.asarray(a, np.float64)), initial=0.0))


@dataclass
class Power:
    """Per (page, dtype): verdicts on correct values, how many failed, how many "cannot
    resolve" and how many of those a central difference resolves; wrong values a central
    difference can tell, and how many of them passed or were "cannot resolve"."""

    correct: Counter = field(default_factory=Counter)
    failed: list = field(default_factory=list)
    unresolved: Counter = field(default_factory=Counter)
    resolvable: Counter = field(default_factory=Counter)
    wrong: Counter = field(default_factory=Counter)
    wrong_passed: list = field(default_factory=list)
    wrong_unresolved: list = field(default_factory=list)
    resolved_examples: list = field(default_factory=list)
    torch: bool = False
    torch_gap: float = 0.0

    def judge_correct(self, page: str, case: Inputs, what: str, status: str, cd_error: float):
        key = (page, case.x.dtype.name)
        self.correct[key] += 1
        if status == FAIL:
            self.failed.append((page, case.label, what))
        if status == CANNOT_RESOLVE:
            self.unresolved[key] += 1
            self.resolvable[key] += cd_error < WITHIN
            if cd_error < WITHIN:
                self.resolved_examples.append((page, case.label, what, f"{cd_error:.1e}"))

    def judge_wrong(self, page: str, case: Inputs, what: str, status: str, error: float):
        """status: the page's verdict on a wrong value off the truth by `error` (relative),
        which a central difference can tell: only such values are passed in."""
        if error < WRONG:
            return
        key = (page, case.x.dtype.name)
        self.wrong[key] += 1
        if status in (PASS, MISSED):
            self.wrong_passed.append((page, case.label, what, round(error, 4)))
        elif status != FAIL and status != CAUGHT:
            self.wrong_unresolved.append((page, case.label, what, round(error, 4)))


def distance(a, exact) -> tuple[float, float]:
    """max |a - exact| and that over max |exact|: inf when exact is 0 everywhere, where no
    difference resolves a relative precision (any value about 0 matches it)."""
    gap = float(np.max(np.abs(np.asarray(a, np.longdouble) - exact), initial=0.0))
    size = size_of(exact)
    return gap, gap / size if size > 0 else float("inf")


def torch_gap(case: Inputs, exact: dict[str, np.ndarray]) -> float:
    """The largest |np.longdouble reference - PyTorch float64 autograd| over max |reference|,
    over dx, dgamma and dbeta of one case: the reference checked against a second, independent
    one (torch is imported here only: ln_core never sees it, and CI's tests do not need it)."""
    import torch

    from bench.torch_ref import layer_norm, tensors

    x, gamma, beta = tensors(*(np.asarray(a, np.float64) for a in (case.x, case.gamma, case.beta)))
    out = layer_norm(x, gamma, beta, working_eps(case))
    grads = torch.autograd.grad(out, (x, gamma, beta), torch.tensor(np.float64(case.dout)))
    return max(
        distance(grad.numpy(), exact[name])[1] if size_of(exact[name]) > 0 else 0.0
        for name, grad in zip(("dx", "dgamma", "dbeta"), grads, strict=True)
    )


def power_gradcheck(power: Power, case: Inputs) -> None:
    """The gradient check page and break the backward, on one case."""
    exact = reference(case.x, case.gamma, case.beta, case.dout, working_eps(case))
    if power.torch:
        power.torch_gap = max(power.torch_gap, torch_gap(case, exact))
    check = gradient_check(case.x, case.gamma, case.beta, case.dout, case.eps)
    cache = forward(case.x, case.gamma, case.beta, case.eps)
    working = numerical_gradients(
        case.x, case.gamma, case.beta, case.dout, case.eps, default_h(cache)
    )
    for tensor in check.tensors:
        cd_gap, cd_error = distance(getattr(working, tensor), exact[tensor])
        power.judge_correct(
            "gradient check", case, tensor, check.status("backward", tensor), cd_error
        )
        analytic = getattr(check.analytic, tensor)
        wrong = analytic * analytic.dtype.type(1.1)
        gap, error = distance(wrong, exact[tensor])
        if gap > TELL * cd_gap:
            status = check.judgement("backward", tensor, wrong).status
            power.judge_wrong("gradient check", case, f"{tensor} x 1.1", status, error)
    cd_gap, cd_error = distance(working.dx, exact["dx"])
    for bug in Bug:
        result = check_bug(check, case.dout, cache, bug)
        gap, error = distance(result.dx, exact["dx"])
        if gap > TELL * cd_gap:
            power.judge_wrong("break the backward", case, bug.value, result.outcome, error)


def exact_residual(case: Inputs, sublayer) -> dict[str, np.ndarray]:
    """The residual block's dx, dW, dc in np.longdouble from the same (rounded) inputs."""
    x, w, c = (np.asarray(a, np.longdouble) for a in (case.x, sublayer.W, sublayer.c))
    f = np.tanh(x @ w + c)
    ln = reference(x + f, case.gamma, case.beta, case.dout, working_eps(case))
    dpre = ln["dx"] * (1 - f**2)
    return {"dx": ln["dx"] + dpre @ w.T, "dW": x.T @ dpre, "dc": np.sum(dpre, axis=0)}


def power_residual(power: Power, case: Inputs) -> None:
    """The residual block's check (its page's seed 0 sublayer) on one case; "can tell" is
    measured with central differences in the working dtype."""
    sublayer = make_sublayer(case.x.shape[-1], 0, dtype=case.x.dtype)
    cache = residual_forward(case.x, sublayer, case.gamma, case.beta, case.eps)
    grads = residual_backward(case.dout, cache)
    working = residual_numerical_grads(
        case.x, sublayer, case.gamma, case.beta, case.dout, case.eps, default_h(cache.ln)
    )
    check = residual_check(cache, grads, case.dout)
    exact = exact_residual(case, cache.sublayer)
    for name, judgement in check.judgements.items():
        cd_gap, cd_error = distance(working[name], exact[name])
        power.judge_correct("residual block", case, name, judgement.status, cd_error)
        wrong = getattr(grads, name) * case.x.dtype.type(1.1)
        gap, error = distance(wrong, exact[name])
        if gap > TELL * cd_gap:
            status = check.judgement(name, wrong).status
            power.judge_wrong("residual block", case, f"{name} x 1.1", status, error)


def power_jacobian(power: Power, case: Inputs) -> None:
    """J times xhat (the Jacobian page) for each vector of one case: the computed product
    within WITHIN of the exact one is what a check could resolve."""
    if case.gamma is None or case.label[3] != "random":
        return
    for row in range(case.x.shape[0]):
        x, dout = case.x[row], case.dout[row]
        try:
            facts = jacobian_facts(x, case.gamma, dout, case.eps)
        except ValueError:
            continue
        long = np.asarray(x, np.longdouble)
        xc = long - np.mean(long)
        var = np.mean(xc * xc)
        eps = np.longdouble(working_eps(case))
        s = 1 / np.sqrt(var + eps)
        cache = forward(x, case.gamma, None, case.eps)
        expected = np.asarray(case.gamma, np.longdouble) * xc * s * s * eps / (var + eps)
        # The page's product: in float64 of the working dtype's J and xhat.
        product = facts.jacobian.astype(np.float64) @ cache.normalized_x.astype(np.float64)
        _, error = distance(product, expected)
        power.judge_correct("J times xhat", case, "J xhat", facts.xhat_judgement.status, error)
        _, off = distance(product * 1.1, expected)
        if off > TELL * error:
            wrong = facts_of(facts.jacobian * x.dtype.type(1.1), cache, dout).xhat_judgement
            power.judge_wrong("J times xhat", case, "J x 1.1", wrong.status, off)


def run_power(grid: dict = POWER, ln_only: bool = False, torch: bool = False) -> Power:
    """ln_only: the gradient check and break the backward only (the residual block's
    differences run the whole block per entry, most of the sweep's time); torch: check the
    reference against PyTorch float64 autograd on every case (`torch_gap`)."""
    power = Power(torch=torch)
    for case in power_cases(grid):
        power_gradcheck(power, case)
        if ln_only:
            continue
        power_jacobian(power, case)
        if case.x.shape[-1] <= RESIDUAL_D:
            power_residual(power, case)
    return power


def power_nodes(grid: dict = POWER) -> str:
    """The Stepper's node checks on the power grid's inputs, per dtype: correct node gradients
    called fail, sign-flipped ones 10x the bound not failed, each node's verdicts, and the
    correct ones "cannot resolve" where the working dtype's central difference of that node
    (at the check's own steps) is within WITHIN of bench.longdouble_ref's node gradient."""
    tallies = {dtype: Tally() for dtype in grid["dtype"]}
    power = Power()
    for case in power_cases(grid):
        cache = forward(case.x, case.gamma, case.beta, case.eps)
        checks = judge_nodes(tallies[case.x.dtype.name], case, cache)
        exact = node_reference(case.x, case.gamma, case.beta, case.dout, working_eps(case))
        for node, check in checks.items():
            working = check.numerical
            if working.dtype != cache.dtype:  # x's differences run in float64 (check_node)
                working = numerical_node_gradient(cache, case.dout, node, node_step(cache, node))
            _, cd_error = distance(working, exact[node])
            power.judge_correct(node, case, node, check.status, cd_error)
    lines = []
    for dtype, tally in tallies.items():
        correct = sum(power.correct[key] for key in power.correct if key[1] == dtype)
        resolvable = sum(power.resolvable[key] for key in power.resolvable if key[1] == dtype)
        lines.append(
            f"{dtype}: correct node gradients called fail: {len(tally.node_false_fails)}; "
            f"sign flipped >= 10x the bound not failed: {len(tally.node_big_misses)}; "
            f"cannot resolve where a central difference is within 1 %: {resolvable} of "
            f"{correct} ({100 * resolvable / max(correct, 1):.1f} %)"
        )
        for node in sorted({k[0] for k in tally.nodes}):
            counts = {s: tally.nodes[(node, s)] for s in (PASS, CANNOT_RESOLVE, FAIL)}
            lines.append(f"  {node}: {counts}, resolvable {power.resolvable[(node, dtype)]}")
    examples = [f for f in power.resolved_examples if f[1][1] == "float32"][:6]
    lines.append(f"resolvable, e.g. (float32): {examples}")
    return "\n".join(lines)


def power_report(power: Power) -> str:
    lines = [
        "| page | dtype | correct judged | failed | cannot resolve | ... where a central "
        "difference is within 1 % | wrong (>= 5 %) a central difference tells | passed | "
        "cannot resolve / cannot tell |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    pages = ("gradient check", "break the backward", "residual block", "J times xhat")
    for page, dtype in itertools.product(pages, POWER["dtype"]):
        key = (page, dtype)
        failed = sum(1 for f in power.failed if f[0] == page and f[1][1] == dtype)
        passed = sum(1 for f in power.wrong_passed if f[0] == page and f[1][1] == dtype)
        unsure = sum(1 for f in power.wrong_unresolved if f[0] == page and f[1][1] == dtype)
        n = power.correct[key]
        share = f"{power.resolvable[key]} ({100 * power.resolvable[key] / n:.1f} %)" if n else "-"
        lines.append(
            f"| {page} | {dtype} | {n or '-'} | {failed if n else '-'} | "
            f"{power.unresolved[key] if n else '-'} | {share} | {power.wrong[key]} | {passed} | "
            f"{unsure} |"
        )
    if power.torch:
        lines.append(
            "reference (np.longdouble) against PyTorch float64 autograd, largest gap over the "
            f"largest |value|: {power.torch_gap:.1e}"
        )
    lines.append(f"failed: {power.failed[:4]}")
    lines.append(f"wrong passed: {power.wrong_passed[:6]}")
    misses = Counter((f[0], f[2]) for f in power.wrong_unresolved)
    lines.append(f"wrong cannot resolve, by page and value: {dict(misses)}")
    lines.append(f"  e.g. {power.wrong_unresolved[:4]}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the CI grid only")
    parser.add_argument("--power", action="store_true", help="issue 37's power sweep")
    parser.add_argument("--seeds", type=int, default=1, help="seeds of the power sweep")
    parser.add_argument(
        "--pages",
        default="all",
        help="'ln' for the gradient check and break the backward only, 'nodes' for the node checks",
    )
    parser.add_argument(
        "--torch", action="store_true", help="check the power sweep's reference against PyTorch"
    )
    args = parser.parse_args()
    if args.power:
        grid = dict(POWER, seed=tuple(range(args.seeds)))
        if args.pages == "nodes":
            print(power_nodes(grid))
            return
        print(power_report(run_power(grid, ln_only=args.pages == "ln", torch=args.torch)))
        return
    print(report(run(QUICK if args.quick else FULL)))


if __name__ == "__main__":
    main()
