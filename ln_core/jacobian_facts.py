"""The facts the Jacobian page states about J = d out / d x for one vector, computed.

With s = 1/sqrt(var + eps), J[i, j] = gamma_i s (delta_ij - 1/D - xhat_i xhat_j / D):
- J @ 1 = 0: adding a constant to x changes nothing (the mean removes it);
- J @ xhat = gamma * xhat * s eps / (var + eps): 0 only when eps = 0 (scale invariance);
- for uniform gamma J is symmetric, with eigenvalue gamma s on the D - 2 directions orthogonal
  to 1 and xhat, 0 on 1, and gamma s eps / (var + eps) on xhat;
- dx = dout @ J: the backward pass is a vector-Jacobian product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.agreement import rounding_bounds
from ln_core.backward import backward
from ln_core.forward import Cache, forward
from ln_core.jacobian import jacobian, one_vector
from ln_core.validation import checked_product, numeric_guard
from ln_core.verdict import Judgement, judge, rel_error


@dataclass(frozen=True)
class JacobianFacts:
    """Each fact as a number. D is the length of the vector.

    jacobian: J, (D, D). ones_response, xhat_response: max |J @ 1| and max |J @ xhat|.
    symmetry_error: max |J - J^T|. eigenvalues: (D,) real parts, ascending (exact eigvalsh when
    gamma is uniform, since J is then symmetric); max_imag_eigenvalue: the largest |imaginary
    part| that eigvals dropped. predicted_eigenvalues: (D,) ascending, or None unless gamma is
    uniform. dx_error: rel_error of dout @ J against the backward pass's dx; dx_judgement: the
    two judged against their rounding (ln_core.verdict's rule): J's entries each carry the
    rounding of the closed form's dx (ln_core.agreement) per unit of dout, and the product sums
    D of them, so the bound is that rounding of dx for |dout| times D.
    xhat_response_expected: max |gamma * xhat * s eps / (var + eps)|, what J @ xhat is in exact
    arithmetic (0 when eps = 0). rounding: machine epsilon * D * max |J|, the size rounding
    leaves in a product of J with a vector of entries about 1 (J @ 1 and J @ xhat).
    """

    jacobian: np.ndarray
    ones_response: float
    gamma_uniform: bool
    xhat_response: float
    symmetry_error: float
    eigenvalues: np.ndarray
    max_imag_eigenvalue: float
    predicted_eigenvalues: np.ndarray | None
    dx_error: float
    dx_judgement: Judgement
    xhat_response_expected: float
    rounding: float

    @property
    def eigenvalue_error(self) -> float | None:
        """max |eigenvalue - predicted| (both ascending), or None without a prediction."""
        if self.predicted_eigenvalues is None:
            return None
        return float(np.max(np.abs(self.eigenvalues - self.predicted_eigenvalues)))


def predicted_eigenvalues(cache: Cache) -> np.ndarray:
    """J's eigenvalues for uniform gamma, ascending; cache is one vector's forward pass.

    D - 2 copies of gamma s, 0 for the ones vector and gamma s eps / (var + eps) for xhat (which
    only exists as a separate direction when D >= 2).
    """
    d = cache.n
    scale = float((1.0 if cache.gamma is None else cache.gamma[0]) * cache.inv_sqrt_sve[0])
    on_xhat = [scale * cache.eps / float(cache.sve[0])] if d >= 2 else []
    values = [scale] * (d - 2) + [0.0] + on_xhat
    return np.sort(np.asarray(values, dtype=cache.dtype))


def xhat_response_expected(cache: Cache) -> float:
    """max |J @ xhat| in exact arithmetic: gamma xhat s eps / (var + eps), for one vector."""
    gamma = 1.0 if cache.gamma is None else cache.gamma
    scaled = gamma * cache.normalized_x * cache.inv_sqrt_sve * (cache.eps / cache.sve)
    return float(np.max(np.abs(scaled)))


def jacobian_facts(
    x: np.ndarray, gamma: np.ndarray | None, dout: np.ndarray, eps: float = 1e-5
) -> JacobianFacts:
    """The Jacobian page's facts for one vector. x, gamma, dout: (D,); gamma None means 1."""
    x = one_vector(x)
    cache = forward(x, gamma, None, eps)
    jac = jacobian(cache.x, cache.gamma, eps)
    grads = backward(dout, cache)
    uniform = cache.gamma is None or bool(np.all(cache.gamma == cache.gamma[0]))
    what = "The Jacobian facts"
    ones_product = checked_product(jac, np.ones_like(cache.x), what)
    xhat_product = checked_product(jac, cache.normalized_x, what)
    dout_product = checked_product(grads.dout, jac, what)
    with numeric_guard(what):
        if uniform:
            # Symmetric in exact arithmetic; averaging removes rounding so eigvalsh applies.
            eigenvalues, imag = np.linalg.eigvalsh((jac + jac.T) / 2), 0.0
        else:
            values = np.linalg.eigvals(jac)
            eigenvalues, imag = np.sort(values.real), float(np.max(np.abs(values.imag)))
        return JacobianFacts(
            jacobian=jac,
            ones_response=float(np.max(np.abs(ones_product))),
            gamma_uniform=uniform,
            xhat_response=float(np.max(np.abs(xhat_product))),
            symmetry_error=float(np.max(np.abs(jac - jac.T))),
            eigenvalues=eigenvalues,
            max_imag_eigenvalue=imag,
            predicted_eigenvalues=predicted_eigenvalues(cache) if uniform else None,
            dx_error=rel_error(dout_product, grads.dx),
            dx_judgement=judge(
                dout_product,
                grads.dx,
                cache.n * rounding_bounds(cache, np.abs(grads.dout))["dx"],
            ),
            xhat_response_expected=xhat_response_expected(cache),
            rounding=float(np.finfo(cache.dtype).eps * cache.n * np.max(np.abs(jac))),
        )
