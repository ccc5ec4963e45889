"""Document 004, the computational-graph walkthrough: the lab's ten nodes, backpropagated one
local derivative at a time. Its ① and ④ average over the N samples of the batch
(np.ones((N, D))), so its graph is BatchNorm's: it is judged in that model, each feature
normalized over the V vectors of the student's x (ln_core's forward with axis 0), with one γ
per feature and ε.

Each line is fed the true gradients of the nodes it reads (the staged backward's), so it is
judged on its own local step; the last entry runs the whole chain as written instead.
"""

from __future__ import annotations

import numpy as np

from ln_core.audit import quantities as q
from ln_core.audit.entries import load_entries
from ln_core.audit.model import Entry
from ln_core.audit.setting import Model

MODEL = Model(gamma="per-feature", eps=True, axis="batch")
# ① and ④ are also judged as LayerNorm would need them, where they are the averaging-axis erratum.
LAYERNORM = Model(gamma="per-feature", eps=True, axis="features")


DX_SM_VIA_XHAT = q.node_gradient(
    "dx_sm_via_normalized_x", "the part of dx_sm that comes from normalized_x", q.size_dx
)
DINV = q.node_gradient(
    "dinv_sqrt_sve",
    "dinv_sqrt_sve, one per feature",
    lambda st: st.largest(st.group_sum(np.abs(st.x_sm * st.dxhat))),
)
DSQRT = q.node_gradient(
    "dsqrt_sve",
    "dsqrt_sve, one per feature",
    # s² Σ|(x - μ) dx̂|, in x̂ (see normalized_moment).
    lambda st: st.largest(st.s * q.normalized_moment(st)),
)
DSVE = q.node_gradient("dsve", "dsve, one per feature", q.size_dvar)
DSAMPLE_VAR = q.node_gradient("dsample_var", "dsample_var, one per feature", q.size_dvar)
DSQ = q.node_gradient("dsq_xsm", "dsq_xsm", q.size_dvar)
DX_SM_VIA_SQ = q.node_gradient(
    "dx_sm_via_sq_xsm", "the part of dx_sm that comes from sq_xsm", q.size_dx
)
DX_SM = q.node_gradient("dx_sm", "dx_sm, both parts", q.size_dx)
DX_VIA_X_SM = q.node_gradient("dx_via_x_sm", "the part of dx that comes through x_sm", q.size_dx)
DSAMPLE_MEAN = q.node_gradient("dsample_mean", "dsample_mean, one per feature", q.size_dx)
DX_VIA_MEAN = q.node_gradient(
    "dx_via_sample_mean", "the part of dx that comes through sample_mean", q.size_dx
)
DX = q.node_gradient("dx", "dx, BatchNorm's gradient at its input", q.size_dx)


ENTRIES: tuple[Entry, ...] = load_entries(
    "004",
    {
        "DINV": DINV,
        "DSAMPLE_MEAN": DSAMPLE_MEAN,
        "DSAMPLE_VAR": DSAMPLE_VAR,
        "DSQ": DSQ,
        "DSQRT": DSQRT,
        "DSVE": DSVE,
        "DX": DX,
        "DX_SM": DX_SM,
        "DX_SM_VIA_SQ": DX_SM_VIA_SQ,
        "DX_SM_VIA_XHAT": DX_SM_VIA_XHAT,
        "DX_VIA_MEAN": DX_VIA_MEAN,
        "DX_VIA_X_SM": DX_VIA_X_SM,
        "LAYERNORM": LAYERNORM,
        "MODEL": MODEL,
    },
)
