"""The lesson's table: LayerNorm's ten nodes, each with its line, its local derivative and its
LaTeX, written once.

`run_nodes` (ln_core/forward.py) is the pass itself in plain NumPy; tests/core/test_nodes.py
runs each NumPy text here against it and against ln_core/backward.py, so the table cannot drift
from the code. The Stepper's formulas (pages/stepper/formulas.py), the notebooks' code
(ui/export/notebook_code.py), the quiz's lines (teaching/quiz/kit.py), the glossary's node
meanings and ln_core's own refusals read their lines from here; backward.py heads each of its
stages with the line it undoes, which the same test holds to this table.
It is written a column at a time (one mapping per kind of text), then put together in NODES.
"""

from __future__ import annotations

from dataclasses import dataclass

from ln_core.staged import Line


@dataclass(frozen=True)
class Node(Line):
    """One forward line (`name = expression`, reading `inputs`) and what the lesson says of it.

    numpy: the line's right-hand side as NumPy, as the notebooks run it (`axis` and `eps` are
    the notebook's own names; mean() keeps the reduced axes as size 1).
    latex: the line typeset, as the Stepper shows it going forward.
    gradient_latex: d<name> typeset, as the Stepper shows it coming back.
    undo: undoing this line, as ln_core/backward.py does: each gradient it gives, as a
    (name, NumPy expression) pair, in order; a name with "_via_" is one part of a sum.
    rule: the local derivative that undo uses, in words (the exercise's hint); "{reused}"
    stands for what an affine parameter is shared by.
    meaning: what the node is, in plain words (the glossary's).
    forward_note, backward_note: what the Stepper adds beside the line going forward and its
    gradient coming back, once it is answered ("" where the line says it all).
    """

    numpy: str
    latex: str
    gradient_latex: str
    undo: tuple[tuple[str, str], ...]
    rule: str
    meaning: str
    forward_note: str
    backward_note: str


# Each line as written, and the earlier values it reads: the graph's edges.
_LINES = {
    "sample_mean": ("mean(x)", ("x",)),
    "x_sm": ("x - sample_mean", ("x", "sample_mean")),
    "sq_xsm": ("x_sm ** 2", ("x_sm",)),
    "sample_var": ("mean(sq_xsm)", ("sq_xsm",)),
    "sve": ("sample_var + eps", ("sample_var", "eps")),
    "sqrt_sve": ("sqrt(sve)", ("sve",)),
    "inv_sqrt_sve": ("1 / sqrt_sve", ("sqrt_sve",)),
    "normalized_x": ("x_sm * inv_sqrt_sve", ("x_sm", "inv_sqrt_sve")),
    "gx": ("gamma * normalized_x", ("gamma", "normalized_x")),
    "out": ("gx + beta", ("gx", "beta")),
}

# Each line's right-hand side as NumPy: what the notebooks run.
_NUMPY = {
    "sample_mean": "np.mean(x, axis=axis, keepdims=True)",
    "x_sm": "x - sample_mean",
    "sq_xsm": "x_sm ** 2",
    "sample_var": "np.mean(sq_xsm, axis=axis, keepdims=True)",
    "sve": "sample_var + eps",
    "sqrt_sve": "np.sqrt(sve)",
    "inv_sqrt_sve": "1 / sqrt_sve",
    "normalized_x": "x_sm * inv_sqrt_sve",
    "gx": "gamma * normalized_x",
    "out": "gx + beta",
}
# Each line typeset, as the Stepper shows it going forward.
_LATEX = {
    "sample_mean": r"\mathrm{sample\_mean} = \frac{1}{D}\sum_{j=1}^{D} x_j",
    "x_sm": r"\mathrm{x\_sm} = x - \mathrm{sample\_mean}",
    "sq_xsm": r"\mathrm{sq\_xsm} = \mathrm{x\_sm}^2",
    "sample_var": r"\mathrm{sample\_var} = \frac{1}{D}\sum_{j=1}^{D} \mathrm{sq\_xsm}_j",
    "sve": r"\mathrm{sve} = \mathrm{sample\_var} + \varepsilon",
    "sqrt_sve": r"\mathrm{sqrt\_sve} = \sqrt{\mathrm{sve}}",
    "inv_sqrt_sve": r"\mathrm{inv\_sqrt\_sve} = \frac{1}{\mathrm{sqrt\_sve}}",
    "normalized_x": r"\mathrm{normalized\_x} = \mathrm{x\_sm} \cdot \mathrm{inv\_sqrt\_sve}",
    "gx": r"\mathrm{gx} = \gamma \odot \mathrm{normalized\_x}",
    "out": r"\mathrm{out} = \mathrm{gx} + \beta",
}
# Each node's gradient typeset, as the Stepper shows it coming back.
_GRADIENT_LATEX = {
    # Its two lines start at the left rather than lining up their "=": lined up, the long
    # d sample_mean pushed dx's line too wide to sit beside its forward line at 1024 px.
    "sample_mean": (
        r"\begin{aligned}&d\,\mathrm{sample\_mean} = -\sum_{j=1}^{D} d\,\mathrm{x\_sm}_j\\ &dx = "
        r"\underbrace{d\,\mathrm{x\_sm}}_{\text{from x\_sm}} + \underbrace{\tfrac{1}{D}\,d\,\mathr"
        r"m{sample\_mean}}_{\text{from sample\_mean}}\end{aligned}"
    ),
    "x_sm": (
        r"\begin{aligned}d\,\mathrm{x\_sm} = \;&\underbrace{\mathrm{inv\_sqrt\_sve}\cdot d\,\mathr"
        r"m{normalized\_x}}_{\text{from normalized\_x}}\\+\;&\underbrace{2\,\mathrm{x\_sm}\odot d"
        r"\,\mathrm{sq\_xsm}}_{\text{from sq\_xsm}}\end{aligned}"
    ),
    "sq_xsm": (
        r"d\,\mathrm{sq\_xsm}_j = \frac{1}{D}\,d\,\mathrm{sample\_var}\quad\text{for every } j"
    ),
    "sample_var": r"d\,\mathrm{sample\_var} = d\,\mathrm{sve}\cdot 1",
    "sve": r"d\,\mathrm{sve} = \frac{1}{2\sqrt{\mathrm{sve}}}\,d\,\mathrm{sqrt\_sve}",
    "sqrt_sve": (
        r"d\,\mathrm{sqrt\_sve} = -\frac{1}{\mathrm{sqrt\_sve}^2}\,d\,\mathrm{inv\_sqrt\_sve}"
    ),
    "inv_sqrt_sve": (
        r"d\,\mathrm{inv\_sqrt\_sve} = \sum_{j=1}^{D} \mathrm{x\_sm}_j\,d\,\mathrm{normalized\_x}_"
        r"j"
    ),
    "normalized_x": (
        r"\begin{aligned}d\,\mathrm{normalized\_x} &= \gamma \odot d\,\mathrm{gx}\\d\gamma &= \sum"
        r"_{\text{vectors}} \mathrm{normalized\_x} \odot d\,\mathrm{gx}\end{aligned}"
    ),
    "gx": (
        r"\begin{aligned}d\,\mathrm{gx} &= d\,\mathrm{out}\cdot\frac{\partial\,\mathrm{out}}{\part"
        r"ial\,\mathrm{gx}} = d\,\mathrm{out}\cdot 1\\d\beta &= \sum_{\text{vectors}} d\,\mathrm{o"
        r"ut}\end{aligned}"
    ),
    "out": r"d\,\mathrm{out} = \frac{\partial L}{\partial\,\mathrm{out}}",
}
# Each line undone, as ln_core/backward.py undoes it: the gradients it gives, in order.
_UNDO = {
    "sample_mean": (
        ("dx_via_sample_mean", "np.ones_like(x) / n * dsample_mean"),
        ("dx", "dx_via_x_sm + dx_via_sample_mean"),
    ),
    "x_sm": (
        ("dx_via_x_sm", "dx_sm"),
        ("dsample_mean", "-np.sum(dx_sm, axis=axis, keepdims=True)"),
    ),
    "sq_xsm": (
        ("dx_sm_via_sq_xsm", "2 * x_sm * dsq_xsm"),
        ("dx_sm", "dx_sm_via_normalized_x + dx_sm_via_sq_xsm"),
    ),
    "sample_var": (("dsq_xsm", "np.ones_like(sq_xsm) / n * dsample_var"),),
    "sve": (("dsample_var", "dsve"),),
    "sqrt_sve": (("dsve", "1 / (2 * sqrt_sve) * dsqrt_sve"),),
    "inv_sqrt_sve": (("dsqrt_sve", "-1 / sqrt_sve**2 * dinv_sqrt_sve"),),
    "normalized_x": (
        ("dx_sm_via_normalized_x", "inv_sqrt_sve * dnormalized_x"),
        ("dinv_sqrt_sve", "np.sum(x_sm * dnormalized_x, axis=axis, keepdims=True)"),
    ),
    "gx": (("dnormalized_x", "gamma * dgx"), ("dgamma", "np.sum(dgx * normalized_x, axis=shared)")),
    "out": (("dgx", "dout"), ("dbeta", "np.sum(dout, axis=shared)")),
}
# The local derivative each undo uses, in words.
_RULE = {
    "sample_mean": (
        "sample_mean = mean(x) averages n entries: each x gets 1/n of dsample_mean. x feeds "
        "lines 1 and 2, so dx is the sum of both parts: dx_via_x_sm + dx_via_sample_mean."
    ),
    "x_sm": (
        "x_sm = x - sample_mean: x gets dx_sm unchanged and sample_mean gets minus it; "
        "sample_mean has one value per group, so its gradient sums over the group."
    ),
    "sq_xsm": (
        "sq_xsm = x_sm ** 2: the derivative of u**2 is 2u. x_sm feeds two lines (3 and 8), so "
        "dx_sm is the sum of both parts: dx_sm_via_normalized_x + dx_sm_via_sq_xsm."
    ),
    "sample_var": (
        "sample_var = mean(sq_xsm) averages n entries: each entry gets 1/n of dsample_var."
    ),
    "sve": (
        "sve = sample_var + eps: adding a constant changes no gradient (eps is a "
        "hyperparameter, not learned)."
    ),
    "sqrt_sve": (
        "sqrt_sve = sqrt(sve): the derivative of sqrt(u) is 1 / (2 sqrt(u)) = 1 / (2 * sqrt_sve), "
        "times dsqrt_sve."
    ),
    "inv_sqrt_sve": (
        "inv_sqrt_sve = 1 / sqrt_sve: the derivative of 1/u is -1/u**2, times dinv_sqrt_sve."
    ),
    "normalized_x": (
        "normalized_x = x_sm * inv_sqrt_sve is a product: each factor's gradient is "
        "dnormalized_x times the other factor. inv_sqrt_sve has one value per group, used by "
        "every entry of it, so its gradient sums over the group (axis=axis, keepdims=True). "
        "x_sm also feeds line 3: this line's part of dx_sm is dx_sm_via_normalized_x."
    ),
    "gx": (
        "gx = gamma * normalized_x is a product: each factor's gradient is dgx times the other "
        "factor; gamma is shared by {reused}, so dgamma sums over the shared axes."
    ),
    "out": (
        "out = gx + beta is a sum: each term gets the upstream gradient dout unchanged; beta is "
        "shared by {reused}, so dbeta sums dout over the shared axes."
    ),
}

# What each node is, in plain words.
_MEANING = {
    "sample_mean": "the mean of the vector's D entries",
    "x_sm": "x minus the sample mean: each entry's deviation from the mean",
    "sq_xsm": "squared deviation from the mean",
    "sample_var": "sample variance: the mean of the squared deviations (divided by D)",
    "sve": "sample variance plus eps",
    "sqrt_sve": "square root of (sample variance plus eps): the standard deviation, kept off 0",
    "inv_sqrt_sve": "one over that square root: the factor that rescales to unit variance",
    "normalized_x": "x normalized to mean 0 and variance about 1 (also written x̂, x_hat)",
    "gx": "gamma times normalized_x: each feature rescaled by its learned gamma",
    "out": "the output y = gx + beta",
}

# What the Stepper adds beside a line going forward, and beside its gradient coming back.
_FORWARD_NOTE = {
    "sample_mean": "One number per vector: the reduced axis is kept with size 1 (keepdims).",
    "x_sm": "sample_mean is broadcast back over the D features.",
    "sample_var": "The biased variance: divide by D, not D - 1.",
    "sve": "eps keeps the square root away from 0 when a vector is (nearly) constant.",
    "normalized_x": "Mean 0 and variance sample_var / sve, just under 1 (sve adds eps).",
    "gx": "gamma has one entry per feature and is broadcast over the rows.",
}
_BACKWARD_NOTE = {
    "out": "dout is given: the upstream gradient, from what comes after the layer.",
    "sample_var": "sve = sample_var + eps: eps is a constant, so it takes no gradient.",
    "inv_sqrt_sve": "inv_sqrt_sve was broadcast over the D features, so its gradient sums them.",
    "sq_xsm": "The mean hands 1/D of its gradient to each of the D squares.",
    "x_sm": "x_sm feeds two nodes (normalized_x and sq_xsm), so its gradient adds both.",
    "sample_mean": "x feeds two nodes (x_sm and sample_mean), so dx adds both contributions.",
}

NODES = tuple(
    Node(
        name,
        expression,
        inputs,
        numpy=_NUMPY[name],
        latex=_LATEX[name],
        gradient_latex=_GRADIENT_LATEX[name],
        undo=_UNDO[name],
        rule=_RULE[name],
        meaning=_MEANING[name],
        forward_note=_FORWARD_NOTE.get(name, ""),
        backward_note=_BACKWARD_NOTE.get(name, ""),
    )
    for name, (expression, inputs) in _LINES.items()
)
NODE_NAMES = tuple(node.name for node in NODES)
# Every gradient the backward pass gives, and the NumPy that gives it (the undo lines in order).
UNDO = {name: text for node in NODES for name, text in node.undo}
