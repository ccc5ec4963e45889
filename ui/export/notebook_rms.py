"""RMSNorm's notebook cells: the eight lines of ln_core/rmsnorm.py and their backward, as text.

The lines mirror rms_forward and rms_backward operation for operation, so the notebook computes
the lab's numbers to the last bit. The lab has no gradient check for RMSNorm, so the notebook
works out its steps with the lab's rule for LayerNorm (the root mean square in place of the
standard deviation) and how closely they resolve from the same differences at twice the step.
"""

from __future__ import annotations

from ln_core.rmsnorm import RMS_LINES
from teaching.glossary import meaning
from ui.export.notebook_code import jacobian, sizes
from ui.export.notebook_norm import Norm, Step, cells

FORWARD = {
    "sq_x": "sq_x = x ** 2",
    "mean_sq": "mean_sq = np.mean(sq_x, axis=axis, keepdims=True)",
    "mse": "mse = mean_sq + eps",
    "sqrt_mse": "sqrt_mse = np.sqrt(mse)",
    "inv_sqrt_mse": "inv_sqrt_mse = 1 / sqrt_mse",
    "normalized_x": "normalized_x = x * inv_sqrt_mse",
    "gx": "gx = gamma * normalized_x",
    "out": "out = gx + beta",
}

MEANINGS = {
    "sq_x": "each entry of x squared",
    "mean_sq": "the mean of the vector's D squares",
    "mse": "mean square plus eps",
    "sqrt_mse": "square root of (mean square plus eps): the root mean square, kept off 0",
    "inv_sqrt_mse": "one over that square root: the factor that rescales to unit mean square",
    "normalized_x": "x divided by its root mean square (no mean is subtracted)",
    "gx": meaning("gx"),
    "out": meaning("out"),
}

MIDDLE = (
    Step(
        6,
        (
            ("dx_via_normalized_x", "inv_sqrt_mse * dnormalized_x"),
            ("dinv_sqrt_mse", "np.sum(x * dnormalized_x, axis=axis, keepdims=True)"),
        ),
        ("dinv_sqrt_mse",),
        "normalized_x = x * inv_sqrt_mse is a product: each factor's gradient is "
        "dnormalized_x times the other factor. inv_sqrt_mse has one value per vector, used by "
        "every entry of it, so its gradient sums over the vector (axis=axis, keepdims=True). "
        "x also feeds line 1: this line's part of dx is dx_via_normalized_x.",
    ),
    Step(
        5,
        (("dsqrt_mse", "-1.0 / sqrt_mse**2 * dinv_sqrt_mse"),),
        ("dsqrt_mse",),
        "inv_sqrt_mse = 1 / sqrt_mse: the derivative of 1/u is -1/u**2, times dinv_sqrt_mse.",
    ),
    Step(
        4,
        (("dmse", "0.5 / sqrt_mse * dsqrt_mse"),),
        ("dmse",),
        "sqrt_mse = sqrt(mse): the derivative of sqrt(u) is 1 / (2 sqrt(u)) = 0.5 / sqrt_mse, "
        "times dsqrt_mse.",
    ),
    Step(
        3,
        (("dmean_sq", "dmse"),),
        ("dmean_sq",),
        "mse = mean_sq + eps: adding a constant changes no gradient (eps is a hyperparameter, "
        "not learned).",
    ),
    Step(
        2,
        (("dsq_x", "np.ones_like(sq_x) / n * dmean_sq"),),
        ("dsq_x",),
        "mean_sq = mean(sq_x) averages n entries: each entry gets 1/n of dmean_sq.",
    ),
    Step(
        1,
        (
            ("dx_via_sq_x", "2.0 * x * dsq_x"),
            ("dx", "dx_via_normalized_x + dx_via_sq_x"),
        ),
        ("dx",),
        "sq_x = x ** 2: the derivative of u**2 is 2u. x feeds lines 1 and 6, so dx is the sum "
        "of both parts: dx_via_normalized_x + dx_via_sq_x.",
    ),
)

# RMSNorm's own fixed cells (ui/export/cells/rmsnorm.py).
_CELLS = cells("rmsnorm")

RMS = Norm(
    title="RMSNorm",
    words="RMSNorm: each vector divided by its root mean square",
    lines=RMS_LINES,
    forward=FORWARD,
    meanings=MEANINGS,
    middle=MIDDLE,
    reused="every vector",
    axis=(-1,),
    groups={(-1,): "RMSNorm: a vector's D features share one mean square"},
    sizes=sizes(
        "mean_sq",
        "the D features of a vector",
        "tuple(range(x.ndim - len(axis)))",
        "gamma and beta are shared by every vector",
    ),
    closed_form=_CELLS["closed-form"],
    layer=_CELLS["layer"],
    jacobian=jacobian(
        "inv_sqrt_mse",
        "J = gamma_i * s * ((1 if i == j else 0) - normalized_x_i * normalized_x_j / P)",
        "np.eye(P) - np.outer(xhat, xhat) / P",
    ),
    exercise_lines=_CELLS["exercise-lines"],
    own_steps=_CELLS["own-steps"],
)
