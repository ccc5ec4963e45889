"""How the gradient check's error depends on the step h, in float64 and float32.

For a central difference the error falls like h^2 (truncation) until round-off, about
machine_eps / h, takes over; the log-log curve is a V whose bottom sits near `default_h`.
float32's V bottoms out orders of magnitude above float64's, and at tiny h its step rounds away.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.backward import backward
from ln_core.forward import forward
from ln_core.gradcheck import default_h, rel_error
from ln_core.numerical import numerical_gradients
from ln_core.validation import as_float_array, check_dout, check_input_x

DEFAULT_STEPS = np.logspace(-1, -12, 23)  # every half decade from 1e-1 to 1e-12
DEFAULT_STEPS.flags.writeable = False  # shared by every sweep that uses the default


@dataclass(frozen=True)
class StepCurve:
    """One dtype's curve. errors, step_vanished: (K,), one per step of the sweep.

    errors[k] is rel_error of the backward dx against the central difference with step k; where
    x + h == x for some entry (step_vanished), no difference was taken and the error is 1.0.
    """

    dtype: np.dtype
    errors: np.ndarray
    step_vanished: np.ndarray
    default_h: float

    @property
    def best_index(self) -> int:
        return int(np.argmin(self.errors))


@dataclass(frozen=True)
class StepSweep:
    """steps: (K,), the h of each point; float64, float32: the two curves over them."""

    steps: np.ndarray
    float64: StepCurve
    float32: StepCurve


def _curve(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float,
    steps: np.ndarray,
    dtype: type[np.floating],
) -> StepCurve:
    cache = forward(as_float_array("x", x, np.dtype(dtype)), gamma, beta, eps)
    dout = check_dout(dout, cache.x.shape, cache.dtype)
    analytic = backward(dout, cache).dx
    errors = np.ones(steps.shape)
    vanished = np.zeros(steps.shape, dtype=bool)
    for k, h in enumerate(steps):
        # A step that rounds away leaves 0 / 0: the numerical gradient would be meaningless.
        vanished[k] = bool(np.any((cache.x + dtype(h)) - (cache.x - dtype(h)) == 0))
        if not vanished[k]:
            numerical = numerical_gradients(cache.x, cache.gamma, cache.beta, dout, eps, h)
            errors[k] = rel_error(analytic, numerical.dx)
    return StepCurve(
        dtype=cache.dtype, errors=errors, step_vanished=vanished, default_h=default_h(cache)
    )


def _check_steps(steps: np.ndarray) -> np.ndarray:
    steps = as_float_array("steps", steps, np.dtype(np.float64))
    if steps.ndim != 1 or np.any(steps <= 0):
        raise ValueError("steps must be a flat list of positive step sizes h.")
    return steps


def error_vs_step(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float = 1e-5,
    steps: np.ndarray | None = None,
) -> StepSweep:
    """rel_error of dx (backward vs central differences) for every h in `steps`, per dtype.

    x: (D,), (N, D) or (B, L, D); gamma, beta: (D,); dout: x's shape. steps: (K,), default
    DEFAULT_STEPS (1e-1 down to 1e-12). Inputs are cast to float64 and to float32.
    """
    steps = DEFAULT_STEPS if steps is None else _check_steps(steps)
    x = check_input_x(x)
    return StepSweep(
        steps=steps,
        float64=_curve(x, gamma, beta, dout, eps, steps, np.float64),
        float32=_curve(x, gamma, beta, dout, eps, steps, np.float32),
    )
