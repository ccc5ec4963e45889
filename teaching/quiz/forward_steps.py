"""The questions of stepper steps 1-10, one per node in forward order: what the node will hold,
asked before its numbers are shown."""

from __future__ import annotations

import numpy as np

from ln_core.agreement import ROUNDINGS, forward_bounds
from teaching.quiz.kit import (
    SIGNS,
    SUMS,
    Decision,
    Fact,
    Question,
    Vector,
    d_fact,
    digits_to_show,
    nearest_factor,
    question,
    sign,
    signs,
)


def _sample_mean(v: Vector) -> Question:
    return question(
        "Before you look: if every entry of x grew by 1, what would `sample_mean` do?",
        ("grow by 1", "grow by D", "stay the same"),
        "grow by 1",
        "`sample_mean` is the sum of the D = {D} entries divided by D. Adding 1 to each adds "
        "{D} to the sum and {D}/{D} = 1 to the mean: {m} becomes {m1}.",
        D=d_fact(v),
        m=v.entry("sample_mean"),
        m1=v.rerun("x=x + 1", x=v.cache.x + 1).entry("sample_mean"),
    )


def _x_sm(v: Vector) -> Question:
    return question(
        "Before you look: what do the D entries of `x_sm` add up to?",
        SUMS,
        "zero",
        "{line_x_sm}, so its sum is Σx − D · `sample_mean` = {sx} − {D} × {m}, "
        "which is 0 exactly: the mean is the one number that balances the entries. The computed "
        "sum, {sxsm}, is 0 up to rounding.",
        sx=Fact("np.sum(x)", float(np.sum(v.cache.x))),
        D=d_fact(v),
        m=v.entry("sample_mean"),
        sxsm=Fact("np.sum(x_sm)", float(np.sum(v.cache.x_sm))),
    )


def _sq_xsm(v: Vector) -> Question:
    k = int(np.argmax(v.cache.sq_xsm))
    return question(
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
    return question(
        "Before you look: is `sample_var` larger than the largest entry of `sq_xsm`?",
        ("no, at most as large", "yes, larger"),
        "no, at most as large",
        "`sample_var` is the mean of the D = {D} entries of `sq_xsm` (divided by D, not D − 1), "
        "and a mean never exceeds the largest entry: {var} ≤ {sq}.",
        D=d_fact(v),
        var=v.entry("sample_var"),
        sq=Fact("np.max(sq_xsm)", float(np.max(v.cache.sq_xsm))),
    )


def _sve(v: Vector) -> Question:
    return question(
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


def _sqrt_sve(v: Vector) -> Question:
    doubled = v.doubled("x")
    options = {"double": 2.0, "quadruple": 4.0, "stay the same": 1.0}
    s, s2 = v.entry("sqrt_sve"), doubled.entry("sqrt_sve")
    return question(
        "Before you look: if every entry of x doubled, what would `sqrt_sve` do?",
        tuple(options),
        nearest_factor(
            (s.value, v.bound("sqrt_sve")), (s2.value, doubled.bound("sqrt_sve")), options
        ),
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
    bound = v.bound("inv_sqrt_sve")
    words = {"positive": "larger", "negative": "smaller", "zero": "exactly 1"}
    fits = tuple(words[side] for side in signs(inv.value - 1, bound))
    why = (
        f"`inv_sqrt_sve` = {inv.value:.17g} is within round-off ({bound:.1e}) of 1, so its exact "
        "value may be larger than 1, smaller or exactly 1."
    )
    return question(
        "Before you look: `sqrt_sve` = {s}. Is `inv_sqrt_sve` larger or smaller than 1?",
        ("larger", "smaller", "exactly 1"),
        Decision(fits, why if len(fits) > 1 else ""),
        "1/{s} = {inv}: dividing by a number below 1 gives more than 1, by one above 1 less. "
        "The next step multiplies `x_sm` by it, stretching or shrinking the deviations to unit "
        "size.",
        s=v.entry("sqrt_sve"),
        inv=inv,
    )


def _normalized_x(v: Vector) -> Question:
    normalized = np.abs(v.cache.normalized_x.astype(np.float64))
    mean_square = float(np.mean(normalized**2))
    # Each square is off by twice |normalized_x| times its bound, and the mean by its chain of
    # roundings. Exactly, the mean square is sample_var / sve (sve adds eps): below 1 for any
    # eps > 0, but by less than round-off shows when eps is tiny against sample_var.
    xhat_bound = np.broadcast_to(forward_bounds(v.cache)["normalized_x"], normalized.shape)
    chain = 2.0 + np.log2(v.d)
    rounding = float(
        2 * np.mean(normalized * xhat_bound)
        + ROUNDINGS * np.finfo(v.cache.dtype).eps * chain * mean_square
    )
    close = abs(mean_square - 1) <= rounding
    if v.cache.eps == 0 and close:
        decision = Decision(("exactly 1",))
    elif close:
        decision = Decision(
            ("exactly 1", "below 1"),
            f"the mean square, {mean_square:.17g}, is within round-off ({rounding:.1e}) of 1: "
            f"eps = {v.cache.eps:g} puts it below 1 by less than this dtype can show.",
        )
    else:
        decision = Decision(("below 1" if mean_square < 1 else "above 1",))
    answer = "exactly 1" if close else decision.answer
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
    return question(
        "Before you look: what is the mean of `normalized_x`² over the vector?",
        ("exactly 1", "below 1", "above 1"),
        decision,
        "`normalized_x` = `x_sm` / √(`sample_var` + eps), so the mean of its squares is "
        "`sample_var` / (`sample_var` + eps) = {var} / {sve} = {ratio}: "
        + why.replace("{side}", answer.split()[0])
        + ". Computed from `normalized_x` itself: {ms}.",
        **facts,
    )


def _gx(v: Vector) -> Question:
    g, n, gx = v.entry("gamma"), v.entry("normalized_x"), v.entry("gx")
    return question(
        "Before you look: gamma_0 = {g} and `normalized_x_0` = {n}. Is `gx_0` positive, "
        "negative or zero?",
        SIGNS,
        sign("`gx_0`", gx.value, v.bound("gx")),
        "{line_gx}, entry by entry: {g} × {n} = {gx}. The sign of a product "
        "is the product of the signs, so a negative gamma flips its feature.",
        g=g,
        n=n,
        gx=gx,
    )


def _out(v: Vector) -> Question:
    gx, b, out = v.entry("gx"), v.entry("beta"), v.entry("out")
    return question(
        "Before you look: `gx_0` = {gx} and beta_0 = {b}. Is `out_0` positive, negative or zero?",
        SIGNS,
        sign("`out_0`", out.value, v.bound("out")),
        "{line_out}: {gx} + {b} = {out}. beta only shifts each feature; it will get "
        "a gradient of its own but changes no other gradient.",
        gx=gx,
        b=b,
        out=out,
    )


# Steps 1-10: forward through the nodes.
QUESTIONS = (
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
)
