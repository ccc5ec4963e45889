"""The questions of stepper steps 11-20, one per gradient in backward order, from dout at `out`
down to dx."""

from __future__ import annotations

import numpy as np

from teaching.quiz.kit import (
    SIGNS,
    SUMS,
    Fact,
    Question,
    Vector,
    d_fact,
    larger,
    nearest_factor,
    question,
    sign,
    signs,
)


def _dout(v: Vector) -> Question:
    return question(
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
    twice = v.doubled("beta")
    return question(
        "Before you look: if every beta doubled, what would `dgx` do?",
        ("double", "stay the same", "become 0"),
        "stay the same",
        "{line_out}, so ∂out/∂gx = 1 whatever beta is, and {undo_dgx}: `dgx_0` = {g} with beta "
        "as it is and {g2} with beta doubled. beta's own gradient is dout summed over the "
        "vectors, {undo_dbeta}: dbeta_0 = {db} for this vector.",
        g=v.entry("dgx"),
        g2=twice.entry("dgx"),
        db=v.entry("dbeta"),
    )


def _dnormalized_x(v: Vector) -> Question:
    twice = v.doubled("gamma")
    dg, dg2 = v.entry("dgamma"), twice.entry("dgamma")
    options = {"double": 2.0, "stay the same": 1.0, "halve": 0.5}
    return question(
        "Before you look: if every gamma doubled, what would dgamma do?",
        tuple(options),
        nearest_factor((dg.value, v.bound("dgamma")), (dg2.value, twice.bound("dgamma")), options),
        "{line_gx}, so ∂gx_0/∂gamma_0 = `normalized_x_0`, and {undo_dgamma}: dgamma_0 = "
        "`normalized_x_0` × `dgx_0` = {n} × {g}, summed over the vectors. Neither factor "
        "depends on gamma (`normalized_x` is computed before gamma enters, `dgx` = dout), so "
        "dgamma_0 = {dg} stays {dg2}. What gamma does scale is the gradient passed on down, "
        "{undo_dnormalized_x}: `dnormalized_x_0` = gamma_0 × `dgx_0` = {gamma} × {g} = {dn}.",
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
    return question(
        "Before you look: {undo_dinv_sqrt_sve} adds up the D products `x_sm_j` × "
        "`dnormalized_x_j`. Is it positive, negative or zero?",
        SIGNS,
        sign("`dinv_sqrt_sve`", total.value, v.bound("dinv_sqrt_sve")),
        "In {line_normalized_x} one value per vector multiplies every entry of `x_sm`, so its "
        "gradient collects all D = {D} products: the positive ones add up to {pos}, the "
        "negative ones to {neg}, together {total}.",
        D=d_fact(v),
        pos=Fact("np.sum(np.maximum(x_sm * dnormalized_x, 0))", positive),
        neg=Fact("np.sum(np.minimum(x_sm * dnormalized_x, 0))", negative),
        total=total,
    )


def _dsqrt_sve(v: Vector) -> Question:
    a, b = v.entry("dinv_sqrt_sve"), v.entry("dsqrt_sve")
    return question(
        "Before you look: `dinv_sqrt_sve` = {a}. Is `dsqrt_sve` positive, negative or zero?",
        SIGNS,
        sign("`dsqrt_sve`", b.value, v.bound("dsqrt_sve")),
        "{line_inv_sqrt_sve} falls when `sqrt_sve` rises, and {undo_dsqrt_sve}: the slope "
        "in front of `dinv_sqrt_sve` is negative whatever `sqrt_sve` is, so the sign flips. "
        "With `sqrt_sve` = {s}, {a} becomes {b}.",
        a=a,
        s=v.entry("sqrt_sve"),
        b=b,
    )


def _dsve(v: Vector) -> Question:
    a, b = v.entry("dsqrt_sve"), v.entry("dsve")
    # The slope is positive, so the exact values always share their sign (0 and 0 included);
    # only two signs beyond round-off, and opposite, could say otherwise.
    sides = signs(a.value, v.bound("dsqrt_sve")), signs(b.value, v.bound("dsve"))
    opposite = all(len(side) == 1 for side in sides) and sides[0] != sides[1]
    return question(
        "Before you look: `dsqrt_sve` = {a}. Does `dsve` have the same sign or the opposite one?",
        ("same sign", "opposite sign"),
        "opposite sign" if opposite else "same sign",
        "The square root in {line_sqrt_sve} rises with its argument, and {undo_dsve}: the "
        "slope in front of `dsqrt_sve` is positive, so `dsve` keeps the sign. With `sqrt_sve` "
        "= {s}, {a} becomes {b}.",
        a=a,
        s=v.entry("sqrt_sve"),
        b=b,
    )


def _dsample_var(v: Vector) -> Question:
    return question(
        "Before you look: {line_sve} and `dsve` = {a}. What is `dsample_var`?",
        ("equal to dsve", "eps times dsve", "0, since eps is a constant"),
        "equal to dsve",
        "Adding a constant does not change a slope: ∂sve/∂sample_var = 1, so {undo_dsample_var}"
        " = {b}. eps gets no gradient of its own: it is a setting, not a learned value.",
        a=v.entry("dsve"),
        b=v.entry("dsample_var"),
    )


def _dsq_xsm(v: Vector) -> Question:
    return question(
        "Before you look: `dsample_var` = {a}. What does each of the D = {D} entries of "
        "`sq_xsm` receive?",
        ("dsample_var / D", "dsample_var", "only the largest entry, all of it"),
        "dsample_var / D",
        "{line_sample_var} averages the D entries, so each moves it by 1/D of its own change: "
        "`dsq_xsm_j` = {a} / {D} = {b} for every j.",
        a=v.entry("dsample_var"),
        D=d_fact(v),
        b=v.entry("dsq_xsm"),
    )


def _dx_sm(v: Vector) -> Question:
    a, b = v.entry("dx_sm_via_normalized_x"), v.entry("dx_sm_via_sq_xsm")
    labels = ("from normalized_x", "from sq_xsm")
    return question(
        "Before you look: which path contributes more (in size) to the first entry of `dx_sm`? "
        "From `normalized_x` it gets {undo_dx_sm_via_normalized_x}, here {s} × {dn}; from "
        "`sq_xsm` it gets {undo_dx_sm_via_sq_xsm}, here 2 × {xsm} × {dsq}.",
        labels,
        larger(
            labels,
            abs(a.value),
            v.bound("dx_sm_via_normalized_x"),
            abs(b.value),
            v.bound("dx_sm_via_sq_xsm"),
        ),
        "From normalized_x: {s} × {dn} = {a}. From sq_xsm: 2 × {xsm} × {dsq} = {b}. The "
        "sq_xsm path only carries how the variance moves, and the mean hands each of the "
        "D = {D} squares just 1/D of that, so it is usually the smaller one unless x_0 sits far "
        "from the mean. Their sum is {undo_dx_sm}, `dx_sm_0` = {total}.",
        s=v.entry("inv_sqrt_sve"),
        dn=v.entry("dnormalized_x"),
        xsm=v.entry("x_sm"),
        dsq=v.entry("dsq_xsm"),
        a=a,
        b=b,
        D=d_fact(v),
        total=v.entry("dx_sm"),
    )


def _dx(v: Vector) -> Question:
    share = v.entry("dx_via_sample_mean")
    return question(
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


# Steps 11-20: backward from out to x.
QUESTIONS = (
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
