"""What the stepper writes beside each node: the forward line and the local derivative used."""

from __future__ import annotations

from ln_core.nodes import NODES

# The LaTeX of each node's line, and of its gradient, from the lesson's table.
FORWARD = {node.name: node.latex for node in NODES}
BACKWARD = {node.name: node.gradient_latex for node in NODES}

FORWARD_NOTE = {
    "sample_mean": "One number per vector: the reduced axis is kept with size 1 (keepdims).",
    "x_sm": "sample_mean is broadcast back over the D features.",
    "sample_var": "The biased variance: divide by D, not D - 1.",
    "sve": "eps keeps the square root away from 0 when a vector is (nearly) constant.",
    "normalized_x": "Mean 0 and variance sample_var / sve, just under 1 (sve adds eps).",
    "gx": "gamma has one entry per feature and is broadcast over the rows.",
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
