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
from ln_core.audit.model import Correction, Entry, Model
from ln_core.audit.setting import Setting

MODEL = Model(gamma="per-feature", eps=True, axis="batch")

_BATCHNORM = (
    " As a LayerNorm derivation this graph is BatchNorm's: ① and ④ average each feature over "
    "the N samples of the batch, where LayerNorm averages each vector over its D features, so "
    "it is judged here as BatchNorm over the vectors of your x."
)
_PER_SAMPLE = (
    "is one number per feature, broadcast to all N samples in the forward pass, so its gradient "
    "is the sum over the N samples; as written every sample keeps its own, N × D numbers "
    "where the node has D."
)
_ONE_SAMPLE = "the batch has one sample (N = 1), so there is nothing to sum"
_TWO_OR_MORE = "Rows of N ≥ 2 vectors show it."


def _dx_as_written(st: Setting, summed: bool) -> np.ndarray:
    """⑧ to ① chained as written (no sums), or with the sums at ⑧ and ②. (N, D)."""
    c = st.cache

    def over_samples(a: np.ndarray) -> np.ndarray:
        return st.group_sum(a) if summed else a

    dnormalized_x = st.gamma * st.dy
    dx_sm1 = c.inv_sqrt_sve * dnormalized_x
    dinv = over_samples(c.x_sm * dnormalized_x)
    dsqrt_sve = -1.0 / c.sqrt_sve**2 * dinv
    dsve = 0.5 / np.sqrt(c.sve) * dsqrt_sve
    dsq_xsm = 1.0 / st.n * np.ones_like(c.x) * dsve
    dx_sm = dx_sm1 + 2 * c.x_sm * dsq_xsm
    dsample_mean = -1 * over_samples(dx_sm)
    return dx_sm + 1.0 / st.n * np.ones_like(c.x) * dsample_mean


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
    lambda st: st.largest(st.s**2 * st.group_sum(np.abs(st.x_sm * st.dxhat))),
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


def _line(number: str, body: str) -> str:
    return rf"\text{{{number}}}\ {body}"


_L10 = _line("⑩", r"\begin{cases} d\gamma x = 1 * dout \\ d\beta q = 1 * dout \end{cases}")
_L9 = _line(
    "⑨",
    r"\begin{cases} d\gamma = normalized\_x * d\gamma x \\ dnormalized\_x = \gamma * d\gamma x"
    r" \end{cases}",
)
_L8 = _line(
    "⑧",
    r"\begin{cases} dx_{sm1} = inversed\_sqrt\_sve * dnormalized\_x \\ dinversed\_sqrt\_sve = "
    r"x_{sm} * dnormalized\_x \end{cases}",
)
_L2 = _line("②", r"\begin{cases} dx_1 = 1 * dx_{sm} \\ dsample\_mean = -1 * dx_{sm} \end{cases}")
_SIGNS = (
    "The leading '−' on the left of ⑦ and ⑥ is read as a list dash. Read as minus signs, ⑦ "
    "would give dsqrt_sve = +dinversed_sqrt_sve/sqrt_sve² and ⑥ dsve = −dsqrt_sve/(2√sve): "
    "two sign errors that cancel from dsve on."
)


ENTRIES: tuple[Entry, ...] = (
    Entry(
        id="004-10-dgx",
        document="004",
        step="⑩ dγx",
        line=_L10,
        model=MODEL,
        quantity=q.DGX,
        formula=lambda st: 1 * st.dy,
        reading="dγx is read as dgx, the gradient at node ⑨'s gx = gamma * normalized_x.",
    ),
    Entry(
        id="004-10-dbeta",
        document="004",
        step="⑩ dβq",
        line=_L10,
        model=MODEL,
        quantity=q.DBETA,
        formula=lambda st: 1 * st.dy,
        reading="dβq is read as dβ: the q is left over from the chain-rule example f = qz.",
        correction=Correction(
            latex=_line("⑩", r"d\beta = \sum_{i=1}^{N} dout_i"),
            formula=lambda st: st.batch_sum(st.dy),
            mistake="β " + _PER_SAMPLE + _BATCHNORM,
            agrees_when=_ONE_SAMPLE,
            exposed_by=_TWO_OR_MORE,
        ),
    ),
    Entry(
        id="004-9-dgamma",
        document="004",
        step="⑨ dγ",
        line=_L9,
        model=MODEL,
        quantity=q.DGAMMA,
        formula=lambda st: st.xhat * st.dy,
        correction=Correction(
            latex=_line("⑨", r"d\gamma = \sum_{i=1}^{N} normalized\_x_i * d\gamma x_i"),
            formula=lambda st: st.batch_sum(st.xhat * st.dy),
            mistake="γ " + _PER_SAMPLE + _BATCHNORM,
            agrees_when=_ONE_SAMPLE,
            exposed_by=_TWO_OR_MORE,
        ),
    ),
    Entry(
        id="004-9-dxhat",
        document="004",
        step="⑨ dnormalized_x",
        line=_L9,
        model=MODEL,
        quantity=q.DXHAT,
        formula=lambda st: st.gamma * st.dy,
    ),
    Entry(
        id="004-8-dxsm1",
        document="004",
        step="⑧ dx_sm1",
        line=_L8,
        model=MODEL,
        quantity=DX_SM_VIA_XHAT,
        formula=lambda st: st.cache.inv_sqrt_sve * st.grads.dnormalized_x,
        reading="inversed_sqrt_sve is the forward pass's inversed_sqr_sve (the lab's "
        "inv_sqrt_sve).",
    ),
    Entry(
        id="004-8-dinv",
        document="004",
        step="⑧ dinversed_sqrt_sve",
        line=_L8,
        model=MODEL,
        quantity=DINV,
        formula=lambda st: st.x_sm * st.grads.dnormalized_x,
        correction=Correction(
            latex=_line("⑧", r"dinversed\_sqrt\_sve = \sum_{i=1}^{N} x_{sm,i} * dnormalized\_x_i"),
            formula=lambda st: st.group_sum(st.x_sm * st.grads.dnormalized_x),
            mistake="inversed_sqrt_sve " + _PER_SAMPLE + _BATCHNORM,
            agrees_when=_ONE_SAMPLE,
            exposed_by=_TWO_OR_MORE,
        ),
    ),
    Entry(
        id="004-7",
        document="004",
        step="⑦ dsqrt_sve",
        line=_line("⑦", r"-dsqrt\_sve = -\frac{1}{(sqrt\_sve)^2} * dinversed\_sqrt\_sve"),
        model=MODEL,
        quantity=DSQRT,
        formula=lambda st: -1.0 / st.cache.sqrt_sve**2 * st.grads.dinv_sqrt_sve,
        reading=_SIGNS,
    ),
    Entry(
        id="004-6",
        document="004",
        step="⑥ dsve",
        line=_line("⑥", r"-dsve = \frac{1}{2} * \frac{1}{\sqrt{sve}} * dsqrt\_sve"),
        model=MODEL,
        quantity=DSVE,
        formula=lambda st: 0.5 / np.sqrt(st.cache.sve) * st.grads.dsqrt_sve,
        reading=_SIGNS,
    ),
    Entry(
        id="004-5",
        document="004",
        step="⑤ dsample_var",
        line=_line(
            "⑤",
            r"\begin{cases} dsample\_var = 1 * dsve \\ deps \leftarrow \text{hyperparameter, "
            r"so we don't backpropagate it} \end{cases}",
        ),
        model=MODEL,
        quantity=DSAMPLE_VAR,
        formula=lambda st: 1 * st.grads.dsve,
    ),
    Entry(
        id="004-4",
        document="004",
        step="④ dsq_xsm",
        line=_line("④", r"dsq\_xsm = \frac{1}{N} * np.ones((N, D)) * dsample\_var"),
        model=MODEL,
        quantity=DSQ,
        formula=lambda st: 1.0 / st.n * np.ones_like(st.x) * st.grads.dsample_var,
    ),
    Entry(
        id="004-3",
        document="004",
        step="③ dx_sm2",
        line=_line("③", r"dx_{sm2} = 2 * x_{sm} * dsq\_xsm"),
        model=MODEL,
        quantity=DX_SM_VIA_SQ,
        formula=lambda st: 2 * st.x_sm * st.grads.dsq_xsm,
    ),
    Entry(
        id="004-merge-xsm",
        document="004",
        step="the note on dx_sm",
        line=r"dx_{sm} = \underbrace{dx_{sm1}}_{\text{from normalized\_x}} + "
        r"\underbrace{dx_{sm2}}_{\text{from sq\_xsm}}",
        model=MODEL,
        quantity=DX_SM,
        formula=lambda st: st.grads.dx_sm_via_normalized_x + st.grads.dx_sm_via_sq_xsm,
    ),
    Entry(
        id="004-2-dx1",
        document="004",
        step="② dx_1",
        line=_L2,
        model=MODEL,
        quantity=DX_VIA_X_SM,
        formula=lambda st: 1 * st.grads.dx_sm,
    ),
    Entry(
        id="004-2-dmean",
        document="004",
        step="② dsample_mean",
        line=_L2,
        model=MODEL,
        quantity=DSAMPLE_MEAN,
        formula=lambda st: -1 * st.grads.dx_sm,
        correction=Correction(
            latex=_line("②", r"dsample\_mean = -\sum_{i=1}^{N} dx_{sm,i}"),
            formula=lambda st: -st.group_sum(st.grads.dx_sm),
            mistake="sample_mean " + _PER_SAMPLE + _BATCHNORM,
            agrees_when=_ONE_SAMPLE,
            exposed_by=_TWO_OR_MORE,
        ),
    ),
    Entry(
        id="004-1",
        document="004",
        step="① dx_2",
        line=_line("①", r"dx_2 = \frac{1}{N} * np.ones((N, D)) * dsample\_mean"),
        model=MODEL,
        quantity=DX_VIA_MEAN,
        formula=lambda st: 1.0 / st.n * np.ones_like(st.x) * st.grads.dsample_mean,
    ),
    Entry(
        id="004-merge-x",
        document="004",
        step="the note on dx",
        line=r"dx = \underbrace{dx_1}_{\text{from xsm}} + \underbrace{dx_2}_{\text{from "
        r"sample\_mean}}",
        model=MODEL,
        quantity=DX,
        formula=lambda st: st.grads.dx_via_x_sm + st.grads.dx_via_sample_mean,
    ),
    Entry(
        id="004-chain",
        document="004",
        step="⑩ to ① chained as written",
        line=_L8 + r"\quad\cdots\quad " + _L2,
        model=MODEL,
        quantity=DX,
        formula=lambda st: _dx_as_written(st, summed=False),
        reading="Every line from ⑨ down to ① is applied in turn to the one before, exactly "
        "as written, with the leading '−' of ⑦ and ⑥ read as list dashes.",
        correction=Correction(
            latex=_line(
                "⑧",
                r"dinversed\_sqrt\_sve = \sum_{i=1}^{N} x_{sm,i} * "
                r"dnormalized\_x_i",
            )
            + r",\quad "
            + _line("②", r"dsample\_mean = -\sum_{i=1}^{N} dx_{sm,i}"),
            formula=lambda st: _dx_as_written(st, summed=True),
            mistake="Read literally, ⑧ and ② keep one gradient per sample for "
            "inversed_sqrt_sve and sample_mean, which are one number per feature; the two "
            "missing sums over the N samples carry into dx, which then misses the paths "
            "through the statistics of the other samples." + _BATCHNORM,
            agrees_when=_ONE_SAMPLE,
            exposed_by=_TWO_OR_MORE,
        ),
    ),
)
