"""ln_core: the NumPy core of LayerNorm Lab. Every number the app shows comes from here.

Shapes: x is (D,), (N, D) or (B, L, D); gamma and beta are (D,) and act on the last axis, or
None to leave them out. `axis` may name several trailing axes (normalized_shape (L, D), as in
torch.nn.LayerNorm); gamma and beta then have that block's shape, and left out (None) it
follows gamma's shape as PyTorch does. Bad input raises ValueError with a message meant for a
student. As a library: `layernorm_closed_form` and `layernorm_forward_backward` answer for any
finite x whose normalization is defined (float16 in, float16 out); the staged `forward` and
`backward` show every node as it is, so they refuse, naming the node, where one is not
representable.
"""

from ln_core.agreement import agreement
from ln_core.audit import AuditResult, audit
from ln_core.backward import Grads, StagedGrads, backward
from ln_core.batchnorm import BatchNormResult, BNComparison, batchnorm_via_transpose, compare_bn_ln
from ln_core.bugs import (
    Bug,
    BugCheck,
    buggy_backward,
    check_bug,
    jacobian_from_backward,
    numerical_jacobian,
)
from ln_core.closed_form import (
    ClosedForm,
    PathTerms,
    closed_form_backward,
    dx_path_terms,
    layernorm_closed_form,
)
from ln_core.dx_sum import DxSum, dx_sum
from ln_core.fast import FastResult, layernorm_forward_backward
from ln_core.forward import NODE_INPUTS, NODE_NAMES, Cache, forward, forward_from
from ln_core.gradcheck import (
    GradientCheck,
    band,
    default_h,
    gradient_check,
)
from ln_core.jacobian import jacobian, jacobian_parts
from ln_core.jacobian_facts import JacobianFacts, jacobian_facts
from ln_core.node_check import NodeCheck, check_node
from ln_core.numerical import central_difference, numerical_gradients
from ln_core.residual import (
    ResidualCache,
    ResidualGrads,
    Sublayer,
    make_sublayer,
    residual_backward,
    residual_forward,
    residual_numerical_grads,
)
from ln_core.rmsnorm import RMSCache, RMSGrads, rms_backward, rms_forward, rms_jacobian
from ln_core.step_sweep import StepCurve, StepSweep, error_vs_step
from ln_core.verdict import Judgement, elementwise_rel_error, judge, rel_error

__all__ = [
    "NODE_INPUTS",
    "NODE_NAMES",
    "AuditResult",
    "BNComparison",
    "BatchNormResult",
    "Bug",
    "BugCheck",
    "Cache",
    "ClosedForm",
    "DxSum",
    "FastResult",
    "GradientCheck",
    "Grads",
    "JacobianFacts",
    "Judgement",
    "NodeCheck",
    "PathTerms",
    "RMSCache",
    "RMSGrads",
    "ResidualCache",
    "ResidualGrads",
    "StagedGrads",
    "StepCurve",
    "StepSweep",
    "Sublayer",
    "agreement",
    "audit",
    "backward",
    "band",
    "batchnorm_via_transpose",
    "buggy_backward",
    "central_difference",
    "check_bug",
    "check_node",
    "closed_form_backward",
    "compare_bn_ln",
    "default_h",
    "dx_path_terms",
    "dx_sum",
    "elementwise_rel_error",
    "error_vs_step",
    "forward",
    "forward_from",
    "gradient_check",
    "jacobian",
    "jacobian_facts",
    "jacobian_from_backward",
    "jacobian_parts",
    "judge",
    "layernorm_closed_form",
    "layernorm_forward_backward",
    "make_sublayer",
    "numerical_gradients",
    "numerical_jacobian",
    "rel_error",
    "residual_backward",
    "residual_forward",
    "residual_numerical_grads",
    "rms_backward",
    "rms_forward",
    "rms_jacobian",
]
