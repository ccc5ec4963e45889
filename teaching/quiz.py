"""Predict-then-reveal questions a student can reason out from what the lab has already shown.

Every question is about one vector (x: (D,)) and, where it names an entry, its first entry.
Its prompt quotes only numbers the student has seen on earlier steps, and its reasoning redoes
the step with the student's own numbers. Each number quoted is a Fact: the value computed by
ln_core, and as `source` the expression over that vector's nodes and gradients that gives it
(tests evaluate every source against a fresh ln_core run and compare).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ln_core.backward import StagedGrads, backward
from ln_core.forward import Cache, forward

SIGNS = ("positive", "negative", "zero")
SUMS = ("a positive number", "a negative number", "zero")


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
class Question:
    """A multiple-choice question whose answer is one of `options`; `explanation` says why."""

    prompt: str
    options: tuple[str, ...]
    answer: str
    explanation: str
    facts: tuple[Fact, ...]


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


def vector(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, dout: np.ndarray, eps: float):
    """The Vector that questions are asked about. x, dout: (D,); gamma, beta: (D,)."""
    cache = forward(x, gamma, beta, eps)
    return Vector(cache, backward(dout, cache))


def _question(
    prompt: str, options: tuple[str, ...], answer: str, reasoning: str, **facts: Fact
) -> Question:
    """Fill the numbers into prompt and reasoning ({name} placeholders) and keep them."""
    texts = {name: fact.text for name, fact in facts.items()}
    return Question(
        prompt.format(**texts), options, answer, reasoning.format(**texts), tuple(facts.values())
    )


def _sign(value: float, scale: float) -> str:
    # Round-off leaves tiny non-zero values where the exact answer is 0.
    if abs(value) <= 1e-9 * max(abs(scale), 1e-300):
        return "zero"
    return "positive" if value > 0 else "negative"


def _d(v: Vector) -> Fact:
    return Fact("D", float(v.d))


# -- forward steps ------------------------------------------------------------------------------


def _sample_mean(v: Vector) -> Question:
    return _question(
        "Before you look: if every entry of x grew by 1, what would `sample_mean` do?",
        ("grow by 1", "grow by D", "stay the same"),
        "grow by 1",
        "`sample_mean` is the sum of the D = {D} entries divided by D. Adding 1 to each adds "
        "{D} to the sum and {D}/{D} = 1 to the mean: {m} becomes {m1}.",
        D=_d(v),
        m=v.entry("sample_mean"),
        m1=v.rerun("x=x + 1", x=v.cache.x + 1).entry("sample_mean"),
    )


def _x_sm(v: Vector) -> Question:
    return _question(
        "Before you look: what do the D entries of `x_sm` add up to?",
        SUMS,
        "zero",
        "`x_sm` = x − `sample_mean`, so its sum is Σx − D · `sample_mean` = {sx} − {D} × {m}, "
        "which is 0 exactly: the mean is the one number that balances the entries. The computed "
        "sum, {sxsm}, is 0 up to rounding.",
        sx=Fact("np.sum(x)", float(np.sum(v.cache.x))),
        D=_d(v),
        m=v.entry("sample_mean"),
        sxsm=Fact("np.sum(x_sm)", float(np.sum(v.cache.x_sm))),
    )


def _sq_xsm(v: Vector) -> Question:
    k = int(np.argmax(v.cache.sq_xsm))
    return _question(
        "Before you look: where is the largest entry of `sq_xsm`?",
        ("where x is largest", "where x is farthest from sample_mean", "where x is smallest"),
        "where x is farthest from sample_mean",
        "`sq_xsm` = (x − `sample_mean`)² measures only the distance from the mean, whatever its "
        "sign: the largest entry, {sq}, is entry {k}, where x = {xk} lies {dist} from "
        "`sample_mean` = {m}.",
        sq=Fact("np.max(sq_xsm)", float(np.max(v.cache.sq_xsm))),
        k=Fact("np.argmax(sq_xsm)", float(k)),
        xk=Fact("x[np.argmax(sq_xsm)]", float(v.cache.x[k])),
        dist=Fact("np.max(np.abs(x_sm))", float(np.max(np.abs(v.cache.x_sm)))),
        m=v.entry("sample_mean"),
    )


def _sample_var(v: Vector) -> Question:
    return _question(
        "Before you look: is `sample_var` larger than the largest entry of `sq_xsm`?",
        ("no, at most as large", "yes, larger"),
        "no, at most as large",
        "`sample_var` is the mean of the D = {D} entries of `sq_xsm` (divided by D, not D − 1), "
        "and a mean never exceeds the largest entry: {var} ≤ {sq}.",
        D=_d(v),
        var=v.entry("sample_var"),
        sq=Fact("np.max(sq_xsm)", float(np.max(v.cache.sq_xsm))),
    )


def _sve(v: Vector) -> Question:
    return _question(
        "Before you look: if all D entries of x were equal, what would `sve` be?",
        ("0", "eps", "1"),
        "eps",
        "Equal entries leave every `x_sm` at 0, so `sample_var` = 0 and `sve` = 0 + eps = "
        "{eps}. With eps = 0 that would be 0, and `inv_sqrt_sve` = 1/√0 has no value: that is "
        "why eps exists. Here `sve` = {var} + {eps} = {sve}.",
        eps=Fact("eps", v.cache.eps),
        var=v.entry("sample_var"),
        sve=v.entry("sve"),
    )


def _nearest_factor(before: float, after: float, factors: Mapping[str, float]) -> str:
    """The label of the factor closest to after / before (on a log scale)."""
    # Equal numbers (0 and 0 included) did not change: a factor of 1.
    ratio = 1.0 if after == before else abs(after) / max(abs(before), 1e-300)
    return min(factors, key=lambda k: abs(np.log(max(ratio, 1e-300) / factors[k])))


def _sqrt_sve(v: Vector) -> Question:
    doubled = v.rerun("x=2 * x", x=2 * v.cache.x)
    options = {"double": 2.0, "quadruple": 4.0, "stay the same": 1.0}
    s, s2 = v.entry("sqrt_sve"), doubled.entry("sqrt_sve")
    return _question(
        "Before you look: if every entry of x doubled, what would `sqrt_sve` do?",
        tuple(options),
        _nearest_factor(s.value, s2.value, options),
        "Doubling x doubles every `x_sm`, so `sample_var` grows 4 times: {var} becomes {var2}. "
        "The square root turns 4 times into 2 times: `sqrt_sve` goes from {s} to {s2}, almost "
        "exactly, because eps = {eps} is not doubled.",
        var=v.entry("sample_var"),
        var2=doubled.entry("sample_var"),
        s=s,
        s2=s2,
        eps=Fact("eps", v.cache.eps),
    )


def _inv_sqrt_sve(v: Vector) -> Question:
    inv = v.entry("inv_sqrt_sve")
    answer = "exactly 1" if inv.value == 1 else "larger" if inv.value > 1 else "smaller"
    return _question(
        "Before you look: `sqrt_sve` = {s}. Is `inv_sqrt_sve` larger or smaller than 1?",
        ("larger", "smaller", "exactly 1"),
        answer,
        "1/{s} = {inv}: dividing by a number below 1 gives more than 1, by one above 1 less. "
        "The next step multiplies `x_sm` by it, stretching or shrinking the deviations to unit "
        "size.",
        s=v.entry("sqrt_sve"),
        inv=inv,
    )


def _normalized_x(v: Vector) -> Question:
    mean_square = float(np.mean(v.cache.normalized_x.astype(np.float64) ** 2))
    rounding = 8 * float(np.finfo(v.cache.dtype).eps)
    answer = (
        "exactly 1"
        if abs(mean_square - 1) <= rounding
        else "below 1"
        if mean_square < 1
        else "above 1"
    )
    ratio = float(v.cache.sample_var[0] / v.cache.sve[0])
    shown = digits_to_show(1 - ratio)
    facts = {
        "var": Fact("sample_var[0]", float(v.cache.sample_var[0]), shown),
        "sve": Fact("sve[0]", float(v.cache.sve[0]), shown),
        "ratio": Fact("sample_var[0] / sve[0]", ratio, shown),
        "eps": Fact("eps", v.cache.eps),
        # Exactly 1 is claimed only up to rounding, so its last digits are not shown.
        "ms": Fact(
            "np.mean(normalized_x.astype(np.float64) ** 2)",
            mean_square,
            4 if answer == "exactly 1" else digits_to_show(1 - mean_square),
        ),
    }
    if answer == "exactly 1":
        why = "with eps = {eps} beside `sample_var`, that is 1 up to this dtype's rounding"
    else:
        why = "{side} 1 by {gap}, because eps = {eps} is added in the denominator only"
        facts["gap"] = Fact("abs(1 - sample_var[0] / sve[0])", abs(1 - ratio))
    return _question(
        "Before you look: what is the mean of `normalized_x`² over the vector?",
        ("exactly 1", "below 1", "above 1"),
        answer,
        "`normalized_x` = `x_sm` / √(`sample_var` + eps), so the mean of its squares is "
        "`sample_var` / (`sample_var` + eps) = {var} / {sve} = {ratio}: "
        + why.replace("{side}", answer.split()[0])
        + ". Computed from `normalized_x` itself: {ms}.",
        **facts,
    )


def _product_sign(a: Fact, b: Fact, product: Fact) -> str:
    return _sign(product.value, abs(a.value) * abs(b.value))


def _gx(v: Vector) -> Question:
    g, n, gx = v.entry("gamma"), v.entry("normalized_x"), v.entry("gx")
    return _question(
        "Before you look: gamma_0 = {g} and `normalized_x_0` = {n}. Is `gx_0` positive, "
        "negative or zero?",
        SIGNS,
        _product_sign(g, n, gx),
        "`gx` = gamma ⊙ `normalized_x`, entry by entry: {g} × {n} = {gx}. The sign of a product "
        "is the product of the signs, so a negative gamma flips its feature.",
        g=g,
        n=n,
        gx=gx,
    )


def _out(v: Vector) -> Question:
    gx, b, out = v.entry("gx"), v.entry("beta"), v.entry("out")
    return _question(
        "Before you look: `gx_0` = {gx} and beta_0 = {b}. Is `out_0` positive, negative or zero?",
        SIGNS,
        _sign(out.value, abs(gx.value) + abs(b.value)),
        "`out` = `gx` + beta: {gx} + {b} = {out}. beta only shifts each feature; it will get "
        "a gradient of its own but changes no other gradient.",
        gx=gx,
        b=b,
        out=out,
    )


# -- backward steps -----------------------------------------------------------------------------


def _dout(v: Vector) -> Question:
    return _question(
        "Before you look: the loss is L = Σ dout ⊙ out. If `out_0` grew by a small δ, how much "
        "would L change?",
        ("dout_0 · δ", "out_0 · δ", "δ"),
        "dout_0 · δ",
        "∂L/∂out_0 = dout_0 = {d}: a gradient is the change of the loss per unit change of a "
        "node, so a small δ changes L by about {d} × δ. dout comes from the layers above "
        "LayerNorm; the backward pass starts from it.",
        d=v.entry("dout"),
    )


def _dgx(v: Vector) -> Question:
    twice = v.rerun("beta=2 * beta", beta=2 * v.cache.beta)
    return _question(
        "Before you look: if every beta doubled, what would `dgx` do?",
        ("double", "stay the same", "become 0"),
        "stay the same",
        "`out` = `gx` + beta, so ∂out/∂gx = 1 whatever beta is, and `dgx` = dout: `dgx_0` = "
        "{g} with beta as it is and {g2} with beta doubled. beta's own gradient is dout summed "
        "over the vectors: dbeta_0 = {db} for this vector.",
        g=v.entry("dgx"),
        g2=twice.entry("dgx"),
        db=v.entry("dbeta"),
    )


def _dnormalized_x(v: Vector) -> Question:
    twice = v.rerun("gamma=2 * gamma", gamma=2 * v.cache.gamma)
    dg, dg2 = v.entry("dgamma"), twice.entry("dgamma")
    options = {"double": 2.0, "stay the same": 1.0, "halve": 0.5}
    return _question(
        "Before you look: if every gamma doubled, what would dgamma do?",
        tuple(options),
        _nearest_factor(dg.value, dg2.value, options),
        "`gx` = gamma ⊙ `normalized_x`, so ∂gx_0/∂gamma_0 = `normalized_x_0`, and dgamma_0 = "
        "`normalized_x_0` × `dgx_0` = {n} × {g}, summed over the vectors. Neither factor "
        "depends on gamma (`normalized_x` is computed before gamma enters, `dgx` = dout), so "
        "dgamma_0 = {dg} stays {dg2}. What gamma does scale is the gradient passed on down: "
        "`dnormalized_x_0` = gamma_0 × `dgx_0` = {gamma} × {g} = {dn}.",
        n=v.entry("normalized_x"),
        g=v.entry("dgx"),
        dg=dg,
        dg2=dg2,
        gamma=v.entry("gamma"),
        dn=v.entry("dnormalized_x"),
    )


def _dinv_sqrt_sve(v: Vector) -> Question:
    products = v.cache.x_sm * v.grads.dnormalized_x
    positive = float(np.sum(np.maximum(products, 0)))
    negative = float(np.sum(np.minimum(products, 0)))
    total = v.entry("dinv_sqrt_sve")
    return _question(
        "Before you look: `dinv_sqrt_sve` adds up `x_sm_j` × `dnormalized_x_j` over the D "
        "entries. Is it positive, negative or zero?",
        SIGNS,
        _sign(total.value, positive - negative),
        "`inv_sqrt_sve` multiplies every entry of `x_sm`, so its gradient collects all D = {D} "
        "products: the positive ones add up to {pos}, the negative ones to {neg}, together "
        "{total}.",
        D=_d(v),
        pos=Fact("np.sum(np.maximum(x_sm * dnormalized_x, 0))", positive),
        neg=Fact("np.sum(np.minimum(x_sm * dnormalized_x, 0))", negative),
        total=total,
    )


def _dsqrt_sve(v: Vector) -> Question:
    a, b = v.entry("dinv_sqrt_sve"), v.entry("dsqrt_sve")
    slope = float(-1 / v.cache.sqrt_sve[0] ** 2)
    return _question(
        "Before you look: `dinv_sqrt_sve` = {a}. Is `dsqrt_sve` positive, negative or zero?",
        SIGNS,
        _sign(b.value, abs(a.value * slope)),
        "`inv_sqrt_sve` = 1/`sqrt_sve` falls when `sqrt_sve` rises: its slope is "
        "−1/`sqrt_sve`² = {slope}, so the sign flips: {slope} × {a} = {b}.",
        a=a,
        slope=Fact("-1 / sqrt_sve[0] ** 2", slope),
        b=b,
    )


def _dsve(v: Vector) -> Question:
    a, b = v.entry("dsqrt_sve"), v.entry("dsve")
    slope = float(0.5 / v.cache.sqrt_sve[0])
    same = _sign(a.value, 1.0) == _sign(b.value, 1.0)
    return _question(
        "Before you look: `dsqrt_sve` = {a}. Does `dsve` have the same sign or the opposite one?",
        ("same sign", "opposite sign"),
        "same sign" if same else "opposite sign",
        "The square root rises with its argument, with slope 1/(2√`sve`) = {slope} > 0, so "
        "`dsve` = {slope} × {a} = {b} keeps the sign.",
        a=a,
        slope=Fact("0.5 / sqrt_sve[0]", slope),
        b=b,
    )


def _dsample_var(v: Vector) -> Question:
    return _question(
        "Before you look: `sve` = `sample_var` + eps and `dsve` = {a}. What is `dsample_var`?",
        ("equal to dsve", "eps times dsve", "0, since eps is a constant"),
        "equal to dsve",
        "Adding a constant does not change a slope: ∂sve/∂sample_var = 1, so `dsample_var` = "
        "`dsve` = {b}. eps gets no gradient of its own: it is a setting, not a learned value.",
        a=v.entry("dsve"),
        b=v.entry("dsample_var"),
    )


def _dsq_xsm(v: Vector) -> Question:
    return _question(
        "Before you look: `dsample_var` = {a}. What does each of the D = {D} entries of "
        "`sq_xsm` receive?",
        ("dsample_var / D", "dsample_var", "only the largest entry, all of it"),
        "dsample_var / D",
        "`sample_var` is the mean of the D entries, so each moves it by 1/D of its own change: "
        "`dsq_xsm_j` = {a} / {D} = {b} for every j.",
        a=v.entry("dsample_var"),
        D=_d(v),
        b=v.entry("dsq_xsm"),
    )


def _dx_sm(v: Vector) -> Question:
    a, b = v.entry("dx_sm_via_normalized_x"), v.entry("dx_sm_via_sq_xsm")
    labels = ("from normalized_x", "from sq_xsm")
    return _question(
        "Before you look: which path contributes more (in size) to the first entry of `dx_sm`? "
        "From `normalized_x` it gets `inv_sqrt_sve` × `dnormalized_x_0` = {s} × {dn}; from "
        "`sq_xsm` it gets 2 × `x_sm_0` × `dsq_xsm_0` = 2 × {xsm} × {dsq}.",
        labels,
        labels[0] if abs(a.value) >= abs(b.value) else labels[1],
        "From normalized_x: {s} × {dn} = {a}. From sq_xsm: 2 × {xsm} × {dsq} = {b}. The "
        "sq_xsm path only carries how the variance moves, and the mean hands each of the "
        "D = {D} squares just 1/D of that, so it is usually the smaller one unless x_0 sits far "
        "from the mean. Their sum is `dx_sm_0` = {total}.",
        s=v.entry("inv_sqrt_sve"),
        dn=v.entry("dnormalized_x"),
        xsm=v.entry("x_sm"),
        dsq=v.entry("dsq_xsm"),
        a=a,
        b=b,
        D=_d(v),
        total=v.entry("dx_sm"),
    )


def _dx(v: Vector) -> Question:
    share = v.entry("dx_via_sample_mean")
    return _question(
        "Before you look: what do the D entries of dx add up to?",
        SUMS,
        "zero",
        "x reaches the loss through `x_sm` and through `sample_mean`. The `x_sm` path hands "
        "back `dx_sm`, which adds up to {sdxsm}; the `sample_mean` path hands every entry 1/D "
        "of `dsample_mean` = −Σ `dx_sm` = {dsm}, that is {share} each, which cancels that sum "
        "exactly. So Σ dx = {sdx}, zero up to rounding: moving every x_j by the same amount "
        "changes nothing once the mean is subtracted.",
        sdxsm=Fact("np.sum(dx_sm)", float(np.sum(v.grads.dx_sm))),
        dsm=v.entry("dsample_mean"),
        share=share,
        sdx=Fact("np.sum(dx)", float(np.sum(v.grads.dx))),
    )


# -- questions for whole pages ------------------------------------------------------------------


def gamma_doubling(v: Vector) -> Question:
    """What dx does when every gamma doubles (dx is linear in gamma)."""
    twice = v.rerun("gamma=2 * gamma", gamma=2 * v.cache.gamma)
    dx, dx2 = v.entry("dx"), twice.entry("dx")
    options = {"double": 2.0, "halve": 0.5, "stay the same": 1.0}
    return _question(
        "Before you look: if every gamma doubled, what would dx do?",
        tuple(options),
        _nearest_factor(dx.value, dx2.value, options),
        "gamma enters the backward pass once, in `dnormalized_x` = gamma ⊙ `dgx`, and every "
        "later step is linear in `dnormalized_x`: dx_0 = {dx} becomes {dx2}. Each row of J "
        "doubles with its gamma, so dx = dout J doubles too; dgamma does not change.",
        dx=dx,
        dx2=dx2,
    )


def _in_order(*makers: Callable[[Vector], Question]) -> dict[int, Callable[[Vector], Question]]:
    return dict(enumerate(makers, start=1))


# Step n's question: steps 1-10 forward through the nodes, 11-20 backward from out to x.
STEP_QUESTIONS = _in_order(
    _sample_mean,
    _x_sm,
    _sq_xsm,
    _sample_var,
    _sve,
    _sqrt_sve,
    _inv_sqrt_sve,
    _normalized_x,
    _gx,
    _out,
    _dout,
    _dgx,
    _dnormalized_x,
    _dinv_sqrt_sve,
    _dsqrt_sve,
    _dsve,
    _dsample_var,
    _dsq_xsm,
    _dx_sm,
    _dx,
)
PAGE_QUESTIONS = {"gamma_doubling": gamma_doubling}
