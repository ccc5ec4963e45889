"""Predict, then check: one question per page, answered by the lab's own numbers.

Each answer is computed only when the student asks for it, from the current inputs (or, for
the constant vector, from that preset), through the same cached wrappers the pages use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ln_core.agreement import rounding_bounds
from ln_core.bugs import CAUGHT, Bug
from ln_core.node_check import rounding_bound
from ln_core.residual_check import path_rounding
from teaching.inputs import Inputs
from teaching.presets import make_example
from teaching.quiz.kit import larger
from teaching.upstream import one_hot
from ui.server import compute


@dataclass(frozen=True)
class Exercise:
    """A question to answer before looking, the predictions offered, and how the app answers
    it from `Inputs`."""

    prompt: str
    options: tuple[str, ...]
    answer: Callable[[Inputs], str]


def _first(inputs: Inputs) -> tuple[int, ...]:
    """The index of the first vector of x (shape S -> a tuple of len(S) - 1 zeros)."""
    return (0,) * (inputs.x.ndim - 1)


def _size(array: np.ndarray) -> float:
    return float(np.abs(array).sum())


def _constant_without_eps(inputs: Inputs) -> str:
    example = make_example("Constant vector", (inputs.x.shape[-1],), 0)
    constant = Inputs(
        x=example.x,
        gamma=example.gamma,
        beta=example.beta,
        dout=np.ones_like(example.x),
        eps=0.0,
        dtype="float64",
    )
    try:
        compute.forward(constant)
        refused = "the lab computed an output"
    except ValueError as err:
        refused = f"no defined output; the lab says: {err}"
    out = compute.forward(constant.with_eps(1e-5)).out
    gap = float(np.max(np.abs(out - example.beta)))
    return (
        f"With eps = 0: {refused} With eps = 1e-5 every output equals beta "
        f"(largest |out - beta| = {gap:.1e}): a constant vector carries no information."
    )


def _one_hot_reaches_every_input(inputs: Inputs) -> str:
    upstream = replace(inputs, dout=one_hot(inputs.x.shape, 0).astype(inputs.x.dtype))
    cache, grads = compute.forward_backward(upstream)
    dx = grads.dx[_first(inputs)]
    # An entry within its round-off bound of 0 may be exactly 0 (with D = 2 and eps = 0 every
    # entry is: normalized_x is ±1 whatever x is) or not: the numbers cannot say which.
    bound = rounding_bounds(cache, upstream.dout)["dx"][_first(inputs)]
    reached = int(np.count_nonzero(np.abs(dx) > bound))
    shown = ", ".join(f"{v:.3g}" for v in dx[:8]) + (" ..." if dx.size > 8 else "")
    if reached == dx.size:
        return (
            f"{reached} of the {dx.size} inputs get a gradient: dx = [{shown}]. Every x_j moves "
            "the mean and the variance, and through them y_0."
        )
    return (
        f"Cannot decide: {dx.size - reached} of the {dx.size} entries of dx = [{shown}] are "
        f"within round-off (up to {float(np.max(bound)):.1e}) of 0, so these inputs cannot say "
        "whether they are exactly 0"
        + (f"; the other {reached} get a gradient." if reached else ".")
    )


def _which_larger(labels: tuple[str, str], sizes: tuple[float, float], bounds) -> str:
    """The answer's lead: the larger of two sums of |...| (each off by at most its bound), or
    why round-off cannot tell them apart (a tie included)."""
    decision = larger(labels, sizes[0], bounds[0], sizes[1], bounds[1])
    if len(decision.fits) == 1:
        return f"{decision.answer}: summed over every entry,"
    return f"Cannot decide: {decision.why} Summed over every entry,"


def _dominant_path(inputs: Inputs) -> str:
    cache, grads = compute.forward_backward(inputs)
    direct = _size(grads.dx_sm_via_normalized_x)
    square = _size(grads.dx_sm_via_sq_xsm)
    # Each path's entries are off by at most dx_sm's rounding bound; so is each sum of |...|.
    bound = float(
        np.sum(np.broadcast_to(rounding_bound(cache, inputs.dout, "x_sm"), cache.x.shape))
    )
    lead = _which_larger(("from normalized_x", "from sq_xsm"), (direct, square), (bound, bound))
    return (
        f"{lead} |from normalized_x| = {direct:.3g} and "
        f"|from sq_xsm| = {square:.3g}. See both columns at step 19."
    )


def _shift_does_nothing(inputs: Inputs) -> str:
    facts = compute.jacobian_facts(inputs.vector(_first(inputs)))
    largest = float(np.abs(facts.jacobian).max())
    return (
        f"Not at all: max |J @ 1| = {facts.ones_response:.1e}, while J's largest entry is "
        f"{largest:.3g}. The mean absorbs the shift before anything else sees it."
    )


def _missed_bugs(inputs: Inputs) -> str:
    verdicts, missed = [], []
    for bug in Bug:
        name = bug.value.replace("_", " ")
        try:
            result = compute.bug_check(inputs, bug.value)
        except ValueError as err:
            verdicts.append(f"{name}: not defined here ({err})")
            continue
        verdicts.append(f"{name} {result.judgement.relative:.1e} ({result.outcome})")
        if result.outcome != CAUGHT:
            missed.append(f"{name} ({result.outcome})")
    lead = f"It does not catch: {', '.join(missed)}." if missed else "None: it catches all five."
    return (
        f"{lead} The check fails a dx whose gap to central differences is more than round-off "
        f"explains; the buggy dx's relative error with each bug: {'; '.join(verdicts)}."
    )


def _skip_or_sublayer(inputs: Inputs, seed: int) -> str:
    cache, grads = compute.residual(inputs, seed)[:2]
    skip, through = _size(grads.dx_skip), _size(grads.dx_sublayer)
    skip_bound, through_bound = path_rounding(cache, grads, inputs.dout)
    lead = _which_larger(
        ("the skip connection", "the path through F"),
        (skip, through),
        (float(np.sum(skip_bound)), float(np.sum(through_bound))),
    )
    return f"{lead} |through the skip| = {skip:.3g} and |through F| = {through:.3g}."


def exercise(url_path: str, seed: int) -> Exercise | None:
    """The page's exercise (pages are named by their URL path, "" for the Overview)."""
    exercises = {
        "": Exercise(
            "A constant vector has variance 0. With eps = 0, is its output 0, beta, or not "
            "defined at all? And with eps = 1e-5?",
            ("0, then 0", "beta, then beta", "not defined, then beta", "not defined, then 0"),
            _constant_without_eps,
        ),
        "inputs": Exercise(
            "Let dout be one-hot at the first output of the first vector. How many entries of "
            "that vector's dx are not zero: one, or all D?",
            ("one", "all D"),
            _one_hot_reaches_every_input,
        ),
        "stepper": Exercise(
            "At step 19 two paths meet in dx_sm. Which carries more: the path from "
            "normalized_x or the path from sq_xsm?",
            ("from normalized_x", "from sq_xsm"),
            _dominant_path,
        ),
        "jacobian": Exercise(
            "Add the same number to every entry of x. How much does y move: as much, a little, "
            "or not at all?",
            ("as much", "a little", "not at all"),
            _shift_does_nothing,
        ),
        "gradcheck": Exercise(
            "Five bugs can be injected under Break the backward. Which of them will the check "
            "miss at the current inputs (at eps as set in the sidebar)?",
            ("none of them", "some of them", "all five"),
            _missed_bugs,
        ),
        "residual": Exercise(
            "Which path hands more of the gradient back to x: the skip connection or the "
            "path through F?",
            ("the skip connection", "the path through F"),
            lambda inputs: _skip_or_sublayer(inputs, seed),
        ),
    }
    return exercises.get(url_path)
