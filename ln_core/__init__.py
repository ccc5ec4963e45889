"""ln_core: the NumPy core of LayerNorm Lab. Every number the app shows comes from here.

Shapes: x is (D,), (N, D) or (B, L, D); gamma and beta are (D,) and act on the last axis.
Bad input raises ValueError with a message meant for a student.
"""

from ln_core.backward import Grads, StagedGrads, backward
from ln_core.closed_form import PathTerms, closed_form_backward, dx_path_terms
from ln_core.forward import NODE_INPUTS, NODE_NAMES, Cache, forward, forward_from
from ln_core.gradcheck import (
    GradientCheck,
    band,
    default_h,
    elementwise_rel_error,
    gradient_check,
    rel_error,
    tolerance,
)
from ln_core.jacobian import jacobian, jacobian_parts
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

__all__ = [
    "NODE_INPUTS",
    "NODE_NAMES",
    "Cache",
    "GradientCheck",
    "Grads",
    "NodeCheck",
    "PathTerms",
    "ResidualCache",
    "ResidualGrads",
    "StagedGrads",
    "Sublayer",
    "backward",
    "band",
    "central_difference",
    "check_node",
    "closed_form_backward",
    "default_h",
    "dx_path_terms",
    "elementwise_rel_error",
    "forward",
    "forward_from",
    "gradient_check",
    "jacobian",
    "jacobian_parts",
    "make_sublayer",
    "numerical_gradients",
    "rel_error",
    "residual_backward",
    "residual_forward",
    "residual_numerical_grads",
    "tolerance",
]
