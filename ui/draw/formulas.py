"""What the stepper writes beside each node: the forward line and the local derivative used."""

from __future__ import annotations

FORWARD = {
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

FORWARD_NOTE = {
    "sample_mean": "One number per vector: the reduced axis is kept with size 1 (keepdims).",
    "x_sm": "sample_mean is broadcast back over the D features.",
    "sample_var": "The biased variance: divide by D, not D - 1.",
    "sve": "eps keeps the square root away from 0 when a vector is (nearly) constant.",
    "normalized_x": "Mean 0 and variance sample_var / (sample_var + eps), just under 1.",
    "gx": "gamma has one entry per feature and is broadcast over the rows.",
}

BACKWARD = {
    "out": r"d\,\mathrm{out} = \frac{\partial L}{\partial\,\mathrm{out}}"
    r"\quad\text{(given: the upstream gradient)}",
    "gx": r"\begin{aligned}d\,\mathrm{gx} &= d\,\mathrm{out}\cdot"
    r"\frac{\partial\,\mathrm{out}}{\partial\,\mathrm{gx}} = d\,\mathrm{out}\cdot 1\\"
    r"d\beta &= \sum_{\text{vectors}} d\,\mathrm{out}\end{aligned}",
    "normalized_x": r"\begin{aligned}d\,\mathrm{normalized\_x} &= \gamma \odot d\,\mathrm{gx}\\"
    r"d\gamma &= \sum_{\text{vectors}} \mathrm{normalized\_x} \odot d\,\mathrm{gx}\end{aligned}",
    "inv_sqrt_sve": r"d\,\mathrm{inv\_sqrt\_sve} = \sum_{j=1}^{D} \mathrm{x\_sm}_j\,"
    r"d\,\mathrm{normalized\_x}_j",
    "sqrt_sve": r"d\,\mathrm{sqrt\_sve} = -\frac{1}{\mathrm{sqrt\_sve}^2}"
    r"\,d\,\mathrm{inv\_sqrt\_sve}",
    "sve": r"d\,\mathrm{sve} = \frac{1}{2\sqrt{\mathrm{sve}}}\,d\,\mathrm{sqrt\_sve}",
    "sample_var": r"d\,\mathrm{sample\_var} = d\,\mathrm{sve}\cdot 1"
    r"\quad(\varepsilon\text{ is a constant: no gradient})",
    "sq_xsm": r"d\,\mathrm{sq\_xsm}_j = \frac{1}{D}\,d\,\mathrm{sample\_var}"
    r"\quad\text{for every } j",
    "x_sm": r"\begin{aligned}d\,\mathrm{x\_sm} = \;&\underbrace{\mathrm{inv\_sqrt\_sve}\cdot "
    r"d\,\mathrm{normalized\_x}}_{\text{from normalized\_x}}\\"
    r"+\;&\underbrace{2\,\mathrm{x\_sm}\odot d\,\mathrm{sq\_xsm}}_{\text{from sq\_xsm}}"
    r"\end{aligned}",
    "sample_mean": r"\begin{aligned}d\,\mathrm{sample\_mean} &= -\sum_{j=1}^{D} "
    r"d\,\mathrm{x\_sm}_j\\ dx &= \underbrace{d\,\mathrm{x\_sm}}_{\text{from x\_sm}} + "
    r"\underbrace{\tfrac{1}{D}\,d\,\mathrm{sample\_mean}}_{\text{from sample\_mean}}"
    r"\end{aligned}",
}

BACKWARD_NOTE = {
    "inv_sqrt_sve": "inv_sqrt_sve was broadcast over the D features, so its gradient sums them.",
    "sq_xsm": "The mean hands 1/D of its gradient to each of the D squares.",
    "x_sm": "x_sm feeds two nodes (normalized_x and sq_xsm), so its gradient adds both.",
    "sample_mean": "x feeds two nodes (x_sm and sample_mean), so dx adds both contributions.",
}

# The two merge points: node -> (its two contributions, labelled), as StagedGrads fields.
MERGES = {
    "x_sm": (
        ("from normalized_x", "dx_sm_via_normalized_x"),
        ("from sq_xsm", "dx_sm_via_sq_xsm"),
        ("dx_sm (sum)", "dx_sm"),
    ),
    "sample_mean": (
        ("from x_sm", "dx_via_x_sm"),
        ("from sample_mean", "dx_via_sample_mean"),
        ("dx (sum)", "dx"),
    ),
}
