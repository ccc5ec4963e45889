"""What the stepper writes beside each node: the forward line and the local derivative used."""

from __future__ import annotations

from ln_core.nodes import NODES

# The LaTeX of each node's line, and of its gradient, from the lesson's table.
FORWARD = {node.name: node.latex for node in NODES}
BACKWARD = {node.name: node.gradient_latex for node in NODES}

# The notes beside them, from the same table (only where it has one).
FORWARD_NOTE = {node.name: node.forward_note for node in NODES if node.forward_note}
BACKWARD_NOTE = {node.name: node.backward_note for node in NODES if node.backward_note}

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
