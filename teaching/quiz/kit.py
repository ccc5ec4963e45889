"""What a question is made of: the Facts it quotes, the Question itself, the Vector it is asked
about, and the small rules that turn numbers into an answer (a sign, the nearest factor)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ln_core.agreement import forward_bounds, rounding_bounds
from ln_core.backward import StagedGrads, backward
from ln_core.forward import Cache, forward
from ln_core.node_check import rounding_bound
from ln_core.nodes import NODES, UNDO

SIGNS = ("positive", "negative", "zero")
SUMS = ("a positive number", "a negative number", "zero")
# The answer where the inputs cannot decide between options (the word the lab's other
# verdicts use for right and wrong coinciding: the audit's "cannot decide").
UNDECIDED = "cannot decide"

# The lesson's table, as a question quotes it: {line_sve} is sve's line and {undo_dsve} the
# NumPy line that gives dsve, each in backticks, so a changed line changes every question.
TABLE = {f"line_{node.name}": f"`{node.text()}`" for node in NODES} | {
    f"undo_{name}": f"`{name} = {text}`" for name, text in UNDO.items()
}


@dataclass(frozen=True)
class Fact:
    """A number a question quotes: `value` as ln_core computed it, `source` how to recompute it.

    `source` is a Python expression over the vector's nodes and gradients by their ln_core
    names (x, x_sm, dx_sm, dgamma...), D, np, and rerun(x=..., gamma=..., beta=...), which
    returns the nodes and gradients of a second run with some inputs changed.
    """

    source: str
    value: float
    # Significant digits shown: more where a claim rests on a small difference (just under 1).
    digits: int = 4

    @property
    def text(self) -> str:
        return f"{self.value:.{self.digits}g}"


def digits_to_show(gap: float) -> int:
    """Significant digits that keep a number `gap` away from a round one visibly apart from it."""
    if gap == 0 or not np.isfinite(gap):
        return 4
    return int(min(17, max(4, np.ceil(-np.log10(abs(gap))) + 2)))


@dataclass(frozen=True)
class Decision:
    """What the numbers decide: `fits`, the options the exact values can have (one when they
    decide) and, when more than one fits, `why` (with its numbers): round-off cannot tell the
    exact value from one that makes another option right."""

    fits: tuple[str, ...]
    why: str = ""

    @property
    def answer(self) -> str:
        return self.fits[0] if len(self.fits) == 1 else UNDECIDED


@dataclass(frozen=True)
class Question:
    """A multiple-choice question whose answer is one of `options`, or UNDECIDED where the
    inputs cannot decide: then `fits` holds the options that fit them and `undecided` why (no
    guess among `fits` may be marked wrong). `explanation` says why."""

    prompt: str
    options: tuple[str, ...]
    answer: str
    explanation: str
    facts: tuple[Fact, ...]
    fits: tuple[str, ...] = ()
    undecided: str = ""


@dataclass(frozen=True)
class Vector:
    """One vector's forward and backward pass: ln_core's cache and grads for x, dout: (D,)."""

    cache: Cache
    grads: StagedGrads
    # How a Fact's source reaches this run: "" for the student's own, "rerun(...)." for another.
    source: str = ""

    @property
    def d(self) -> int:
        return int(self.cache.x.shape[-1])

    def value(self, name: str) -> np.ndarray:
        """A node, an input or a gradient by its ln_core name."""
        return getattr(self.cache, name) if hasattr(self.cache, name) else getattr(self.grads, name)

    def bound(self, name: str, index: int = 0) -> float:
        """How far entry `index` of `name` (a gradient, or a node from sqrt_sve on) may sit
        from its exact value: ln_core.agreement's and node_check's
        rounding bounds, which count the offset's rounding too."""
        dout = self.grads.dout
        if name in ("dgamma", "dbeta"):
            bounds = rounding_bounds(self.cache, dout)[name]
        elif name.startswith("d"):
            # A path's part (dx_sm_via_sq_xsm) has its node's natural size.
            bounds = rounding_bound(self.cache, dout, name[1:].split("_via_")[0])
        else:
            bounds = forward_bounds(self.cache)[name]
        shape = self.value(name).shape
        return float(np.broadcast_to(bounds, shape).reshape(-1)[index])

    def entry(self, name: str, index: int = 0) -> Fact:
        value = float(self.value(name).reshape(-1)[index])
        return Fact(f"{self.source}{name}[{index}]", value)

    def rerun(self, change: str, **changed: np.ndarray) -> Vector:
        """The same vector with some of x, gamma, beta replaced, run forward and backward.

        `change` says how in the sources' terms, e.g. "x=2 * x" for changed={"x": 2 * x}.
        """
        c = self.cache
        inputs = {"x": c.x, "gamma": c.gamma, "beta": c.beta, **changed}
        cache = forward(inputs["x"], inputs["gamma"], inputs["beta"], c.eps)
        return Vector(cache, backward(self.grads.dout, cache), f"rerun({change}).")

    def doubled(self, name: str) -> Vector:
        """The same vector with every entry of `name` (x, gamma or beta) doubled."""
        return self.rerun(f"{name}=2 * {name}", **{name: 2 * getattr(self.cache, name)})


def vector(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float
) -> Vector:
    """The Vector that questions are asked about. x, dout: (D,); gamma, beta: (D,)."""
    cache = forward(x, gamma, beta, eps)
    return Vector(cache, backward(dout, cache))


def question(
    prompt: str,
    options: tuple[str, ...],
    answer: str | Decision,
    reasoning: str,
    **facts: Fact,
) -> Question:
    """Fill the numbers into prompt and reasoning ({name} placeholders) and keep them, and the
    table's lines ({line_<node>}, {undo_<gradient>}: see TABLE).
    answer: an option the question's structure decides, or the Decision of the numbers."""
    decision = answer if isinstance(answer, Decision) else Decision((answer,))
    texts = TABLE | {name: fact.text for name, fact in facts.items()}
    return Question(
        prompt.format(**texts),
        options,
        decision.answer,
        reasoning.format(**texts),
        tuple(facts.values()),
        decision.fits,
        decision.why,
    )


def signs(value: float, bound: float) -> tuple[str, ...]:
    """The signs (SIGNS' words) the exact value can have when the computed `value` is within
    `bound` of it: one when |value| is beyond the bound, all three when it is not (an exact 0
    hidden under round-off looks like a tiny positive or negative number, and the reverse);
    "zero" alone only for an exact 0 with nothing to round (bound 0)."""
    if abs(value) > bound:
        return ("positive",) if value > 0 else ("negative",)
    return ("zero",) if bound == 0 else SIGNS


def sign(name: str, value: float, bound: float) -> Decision:
    """The sign of the quantity `name`, computed as `value` with round-off up to `bound`."""
    fits = signs(value, bound)
    return Decision(
        fits,
        ""
        if len(fits) == 1
        else f"{name} = {value:.4g} is within round-off ({bound:.1e}) of 0, so its exact value "
        "may be positive, negative or zero.",
    )


def larger(labels: tuple[str, str], a: float, a_bound: float, b: float, b_bound: float) -> Decision:
    """Which of a and b is larger (labels[0] for a), each computed within its bound: both fit
    when they are within the sum of their bounds of each other (a tie included)."""
    if abs(a - b) > a_bound + b_bound:
        return Decision((labels[0] if a > b else labels[1],))
    if a_bound + b_bound == 0:
        return Decision(labels, f"{a:.4g} and {b:.4g} are exactly equal: neither is larger.")
    return Decision(
        labels,
        f"{a:.4g} and {b:.4g} are equal up to round-off ({a_bound + b_bound:.1e}), so either "
        "could be the larger.",
    )


def d_fact(v: Vector) -> Fact:
    """D, the number of entries of the vector, as a Fact."""
    return Fact("D", float(v.d))


def _nearest(ratio: float, factors: Mapping[str, float]) -> str:
    """The label of the factor closest to `ratio` (> 0) on a log scale."""
    return min(factors, key=lambda k: abs(np.log(ratio / factors[k])))


def nearest_factor(
    before: tuple[float, float], after: tuple[float, float], factors: Mapping[str, float]
) -> Decision:
    """The factor closest (on a log scale) to |after| / |before|, each given as (value, bound
    on its round-off). Every factor nearest to some ratio the bounds allow fits: the factors
    between those nearest to the smallest and the largest such ratio. A before within its
    bound of 0 (0 -> 0 included: twice 0 is 0) allows any ratio, so every factor fits."""
    (b, b_bound), (a, a_bound) = before, after
    low = max(abs(a) - a_bound, 0.0) / (abs(b) + b_bound) if abs(b) > b_bound else 0.0
    high = (abs(a) + a_bound) / (abs(b) - b_bound) if abs(b) > b_bound else np.inf
    ordered = sorted(factors, key=factors.get)
    first = ordered[0] if low == 0 else _nearest(low, factors)
    last = ordered[-1] if not np.isfinite(high) else _nearest(high, factors)
    fits = tuple(ordered[ordered.index(first) : ordered.index(last) + 1])
    if len(fits) == 1:
        return Decision(fits)
    if abs(b) <= b_bound:
        why = (
            f"the value before the change, {b:.4g}, is within round-off ({b_bound:.1e}) of 0, "
            "and any multiple of 0 is 0, so every factor fits."
        )
    else:
        why = (
            f"{b:.4g} becomes {a:.4g}: within round-off ({b_bound:.1e} and {a_bound:.1e}) the "
            f"ratio lies between {low:.4g} and {high:.4g}, as near to one factor as to another."
        )
    return Decision(tuple(k for k in factors if k in fits), why)
