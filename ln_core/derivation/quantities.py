"""What a student's formula may claim to be: a gradient of the lab's backward pass, judged
against the same audit Quantity (reference and natural size) the documents' formulas are."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ln_core.audit import doc004
from ln_core.audit import quantities as q
from ln_core.audit.model import Quantity
from ln_core.audit.setting import Model
from ln_core.audit.symbols import BACKWARD_ORDER


@dataclass(frozen=True)
class Target:
    """One quantity a student can pick. key: the lab's gradient name; label: for the picker;
    per_feature, scalar: the audit quantity with one γ per feature, or one scalar γ."""

    key: str
    label: str
    per_feature: Quantity
    scalar: Quantity

    def quantity(self, model: Model) -> Quantity:
        return self.scalar if model.gamma == "scalar" else self.per_feature


def _same(key: str, label: str, quantity: Quantity, text: str | None = None) -> Target:
    # Document 004 words its node quantities for BatchNorm ("one per feature"); the student
    # works in LayerNorm, so only the words change: reference and size are the audit's.
    if text is not None:
        quantity = replace(quantity, text=text)
    return Target(key, label, quantity, quantity)


TARGETS: dict[str, Target] = {
    t.key: t
    for t in (
        _same("dx", "dx — the gradient at the input x", q.DX),
        Target("dgamma", "dγ — the gradient of γ", q.DGAMMA, q.DGAMMA_SCALAR),
        Target("dbeta", "dβ — the gradient of β", q.DBETA, q.DBETA_SCALAR),
        _same("dnormalized_x", "dx̂ — dnormalized_x", q.DXHAT),
        _same("dgx", "dgx", q.DGX),
        _same("dinv_sqrt_sve", "dinv_sqrt_sve", doc004.DINV, "dinv_sqrt_sve, one per vector"),
        _same("dsqrt_sve", "dsqrt_sve", doc004.DSQRT, "dsqrt_sve, one per vector"),
        _same("dsve", "dsve", doc004.DSVE, "dsve, one per vector"),
        _same("dsample_var", "dσ² — dsample_var", q.DVAR),
        _same("dsq_xsm", "dsq_xsm", doc004.DSQ),
        _same("dx_sm_via_normalized_x", "dx_sm via normalized_x", doc004.DX_SM_VIA_XHAT),
        _same("dx_sm_via_sq_xsm", "dx_sm via sq_xsm", doc004.DX_SM_VIA_SQ),
        _same("dx_sm", "dx_sm (both paths)", doc004.DX_SM),
        _same("dx_via_x_sm", "dx via x_sm", doc004.DX_VIA_X_SM),
        _same("dsample_mean", "dμ — dsample_mean", q.DMU),
        _same("dx_via_sample_mean", "dx via sample_mean", doc004.DX_VIA_MEAN),
    )
}


def usable(target: str) -> frozenset[str]:
    """The gradient names a formula for `target` may read: the staged backward's gradients
    computed before it (dgamma and dbeta: only dout and dgx)."""
    if target in BACKWARD_ORDER:
        return frozenset(BACKWARD_ORDER[: BACKWARD_ORDER.index(target)])
    return frozenset(("dout", "dgx"))
