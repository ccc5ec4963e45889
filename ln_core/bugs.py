"""Break the backward: five classic mistakes, each one change to the closed form's pieces.

The closed form dx = s * (g - mean(g) - xhat * mean(g * xhat)) is built from its ingredients
(g = dout * gamma, xhat, s = 1/sqrt(var + eps)) and split into three path terms
(`ln_core.closed_form.dx_path_terms`). A bug either swaps an ingredient or bends a term, so every
buggy backward is the correct one with exactly one thing changed. dgamma and dbeta stay correct:
only dx is broken.

The Jacobian helpers let the page compare any backward, row by row, with central differences.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

from ln_core.backward import Grads, times_gamma
from ln_core.closed_form import PathTerms, closed_form_backward, dx_path_terms
from ln_core.forward import Cache, forward
from ln_core.gradcheck import GradientCheck, default_h
from ln_core.jacobian import one_vector
from ln_core.numerical import check_h, perturbed_copies
from ln_core.validation import check_dout, numeric_guard, param_shape
from ln_core.verdict import CANNOT_RESOLVE, FAIL, Judgement, judge

CAUGHT, MISSED, CANNOT_TELL = "caught", "missed", "cannot tell here"
# The check passes a dx within its bound of central differences, which sit within the bound of
# the true dx: two values closer than twice the bound can both pass, so a bug is missed only
# where it moves dx by more than this many bounds.
SEPARATION = 2.0


class Bug(Enum):
    """A known mistake in LayerNorm's backward pass; `description` says it for students."""

    DROP_VARIANCE_PATH = "drop_variance_path"
    EPS_AFTER_SQRT = "eps_after_sqrt"
    UNBIASED_VARIANCE = "unbiased_variance"
    FORGET_GAMMA = "forget_gamma"
    MEAN_PATH_SIGN = "mean_path_sign"

    @property
    def description(self) -> str:
        return _RECIPES[self].description

    @property
    def caveat(self) -> str | None:
        """When the bug can hide from a gradient check, or None if it never does."""
        return _RECIPES[self].caveat


@dataclass(frozen=True)
class _Ingredients:
    """What the closed form is made of; each has x's shape except inv_sqrt_sve (reduced)."""

    dout: np.ndarray
    gamma: np.ndarray
    normalized_x: np.ndarray
    inv_sqrt_sve: np.ndarray


@dataclass(frozen=True)
class _Recipe:
    description: str
    ingredients: Callable[[_Ingredients, Cache], _Ingredients] = lambda parts, cache: parts
    terms: Callable[[PathTerms, Cache], PathTerms] = lambda terms, cache: terms
    caveat: str | None = None


def _unbiased_variance_terms(terms: PathTerms, cache: Cache) -> PathTerms:
    if cache.n < 2:
        raise ValueError(
            "The unbiased variance divides by D - 1, which is 0 for a single entry; "
            "use at least 2 entries to show this bug."
        )
    # d var / d x_i = 2 x_sm_i / D; dividing by D - 1 instead scales only this path.
    return replace(terms, through_variance=terms.through_variance * (cache.n / (cache.n - 1)))


_RECIPES: dict[Bug, _Recipe] = {
    Bug.DROP_VARIANCE_PATH: _Recipe(
        description="Forgets that the variance also depends on x: the path through var is "
        "left out of dx.",
        terms=lambda terms, cache: replace(
            terms, through_variance=np.zeros_like(terms.through_variance)
        ),
    ),
    Bug.EPS_AFTER_SQRT: _Recipe(
        description="Uses 1/(sqrt(var) + eps) in the backward while the forward used "
        "1/sqrt(var + eps).",
        ingredients=lambda parts, cache: replace(
            parts, inv_sqrt_sve=1.0 / (np.sqrt(cache.sample_var) + cache.eps)
        ),
        caveat="The two scales differ by about eps * |1/(2 sigma) - 1| / sigma relative to "
        "1/sigma, so with eps = 1e-5 and var near 1 the error is about 1e-6, right at the "
        "float64 pass line; use eps >= 1e-3 (or a small variance) to see it clearly.",
    ),
    Bug.UNBIASED_VARIANCE: _Recipe(
        description="Differentiates the unbiased variance (divide by D - 1) although the "
        "forward used the biased one (divide by D).",
        terms=_unbiased_variance_terms,
    ),
    Bug.FORGET_GAMMA: _Recipe(
        description="Passes dout straight to normalized_x, forgetting that out = gamma * "
        "normalized_x + beta multiplies it by gamma.",
        ingredients=lambda parts, cache: replace(parts, gamma=np.ones_like(parts.gamma)),
    ),
    Bug.MEAN_PATH_SIGN: _Recipe(
        description="Drops the minus sign of x_sm = x - mean, so the mean path is added "
        "instead of subtracted.",
        terms=lambda terms, cache: replace(terms, through_mean=-terms.through_mean),
    ),
}


def _as_bug(bug: Bug | str) -> Bug:
    """A Bug from itself or its value ("drop_variance_path", ...); ValueError if unknown."""
    if isinstance(bug, Bug):
        return bug
    try:
        return Bug(bug)
    except ValueError:
        known = ", ".join(b.value for b in Bug)
        raise ValueError(f"Unknown bug {bug!r}; the known bugs are {known}.") from None


def buggy_backward(dout: np.ndarray, cache: Cache, bug: Bug | str) -> Grads:
    """LayerNorm's backward with one known mistake in dx (dgamma and dbeta stay correct).

    dout: x's shape. Returns Grads: dx (x's shape), dgamma and dbeta (D,), in x's dtype.
    """
    recipe = _RECIPES[_as_bug(bug)]
    dout = check_dout(dout, cache.x.shape, cache.dtype)
    correct = closed_form_backward(dout, cache)
    with numeric_guard("The buggy backward"):
        # A skipped gamma is a gamma of ones (which FORGET_GAMMA then cannot change).
        gamma = times_gamma(np.ones(param_shape(cache.x.shape, cache.axis), cache.dtype), cache)
        parts = recipe.ingredients(
            _Ingredients(dout, gamma, cache.normalized_x, cache.inv_sqrt_sve), cache
        )
        terms = dx_path_terms(
            parts.dout * parts.gamma, parts.normalized_x, parts.inv_sqrt_sve, cache.axis
        )
        return replace(correct, dx=recipe.terms(terms, cache).total)


@dataclass(frozen=True)
class BugCheck:
    """A buggy dx put through a gradient check, judged by the check's own rule and bounds.

    dx: the buggy dx; true_dx: the correct backward's; numerical_dx: central differences;
    bound: the check's bound per entry (all x's shape). judgement: the buggy dx against the
    central difference (the check's verdict on it); change: the buggy dx against the correct
    one, judged with the same bounds (its excess above SEPARATION means the check could tell
    the two apart somewhere).
    """

    bug: Bug
    dx: np.ndarray
    true_dx: np.ndarray
    numerical_dx: np.ndarray
    bound: np.ndarray
    judgement: Judgement
    change: Judgement

    @property
    def gaps(self) -> np.ndarray:
        """|buggy dx - numerical dx| per entry, float64 (x's shape)."""
        return np.abs(self.dx.astype(np.float64) - self.numerical_dx)

    @property
    def separable(self) -> bool:
        """Whether the bug moves dx by more than SEPARATION bounds somewhere: only then could
        the check have told the buggy dx from the right one."""
        return self.change.excess > SEPARATION

    @property
    def outcome(self) -> str:
        """CAUGHT when the check fails the buggy dx; CANNOT_TELL when the bug changes dx by
        no more than SEPARATION times the check's bound everywhere (the check cannot separate
        the two), or when the check cannot resolve dx at all; MISSED otherwise (a change the
        check could separate, which it passes)."""
        if self.judgement.status == FAIL:
            return CAUGHT
        if not self.separable or self.judgement.status == CANNOT_RESOLVE:
            return CANNOT_TELL
        return MISSED


def check_bug(check: GradientCheck, dout: np.ndarray, cache: Cache, bug: Bug | str) -> BugCheck:
    """The buggy backward on the inputs of `check` (cache: their forward pass, dout: x's
    shape), judged against the same central differences with the same bounds."""
    bug = _as_bug(bug)
    buggy = buggy_backward(dout, cache, bug).dx
    return BugCheck(
        bug=bug,
        dx=buggy,
        true_dx=check.analytic.dx,
        numerical_dx=check.numerical.dx,
        bound=check.bounds["dx"],
        judgement=check.judgement("backward", "dx", buggy),
        change=judge(buggy, check.analytic.dx, check.bounds["dx"]),
    )


BackwardFn = Callable[[np.ndarray, Cache], Grads]


def jacobian_from_backward(
    backward_fn: BackwardFn, x: np.ndarray, gamma: np.ndarray, eps: float = 1e-5
) -> np.ndarray:
    """J[i, j] = d out_i / d x_j as a backward pass sees it: row i is dx for dout = e_i.

    x: one vector (D,); gamma: (D,). backward_fn(dout, cache) -> Grads, e.g. `backward` or
    `lambda d, c: buggy_backward(d, c, bug)`. All D one-hot douts run at once as a (D, D)
    batch of copies of x. Returns (D, D) in x's dtype.
    """
    x = one_vector(x)
    d = x.shape[0]
    copies = forward(np.tile(x, (d, 1)), gamma, np.zeros(d), eps)
    return backward_fn(np.eye(d, dtype=copies.dtype), copies).dx


def numerical_jacobian(
    x: np.ndarray, gamma: np.ndarray, eps: float = 1e-5, h: float | None = None
) -> np.ndarray:
    """J[i, j] = d out_i / d x_j by central differences, all D columns in one batched pass.

    x: one vector (D,); gamma: (D,). h=None uses `default_h`. Returns (D, D) in x's dtype.
    """
    x = one_vector(x)
    cache = forward(x, gamma, np.zeros(x.shape[0]), eps)
    step = default_h(cache) if h is None else check_h(h)
    # plus[0, j] is x with x_j moved by +h; its forward pass is output column j of J.
    plus, minus, taken = perturbed_copies(cache.x[None, :], step)
    out_plus = forward(plus[0], cache.gamma, cache.beta, eps).out
    out_minus = forward(minus[0], cache.gamma, cache.beta, eps).out
    with numeric_guard("The numerical Jacobian"):
        return ((out_plus - out_minus) / taken[0][:, None]).T
