"""The facts the Jacobian page states about J = d out / d x for one vector, computed.

With s = 1/sqrt(var + eps), J[i, j] = gamma_i s (delta_ij - 1/D - xhat_i xhat_j / D):
- J @ 1 = 0: adding a constant to x changes nothing (the mean removes it);
- J @ xhat = gamma * xhat * s eps / (var + eps): 0 only when eps = 0 (scale invariance);
- for uniform gamma J is symmetric, with eigenvalue gamma s on the D - 2 directions orthogonal
  to 1 and xhat, 0 on 1, and gamma s eps / (var + eps) on xhat;
- dx = dout @ J: the backward pass is a vector-Jacobian product.

Each fact is judged by ln_core.verdict's rule against a careful bound on the rounding of the
computed J (`jacobian_bound`), which counts the rounding of x - mean under a large common offset
as gradcheck's and agreement's bounds do. J x̂ in float32, where eps's part is about 1e-5 of J's
scale, is judged against the rounding a correct float32 J carries on the vector, measured
against the float64 J of the same inputs (`_measured_xhat`), as the gradient check measures
against float64 differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ln_core.agreement import ROUNDINGS, rounding_bounds
from ln_core.backward import backward, times_gamma
from ln_core.forward import Cache, forward
from ln_core.gradcheck import reference_cache
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
    uniform. dx_error: rel_error of dout @ J against the backward pass's dx.
    xhat_response_expected: max |gamma * xhat * s eps / (var + eps)|, what J @ xhat is in exact
    arithmetic (0 when eps = 0).
    bound: (D, D), per entry how far the computed J may sit from the exact one
    (`jacobian_bound`). offset: s * max|x|, how many standard deviations a common offset puts
    x from 0 (it widens the bound).
    Judgements, each by ln_core.verdict's rule with a bound built from `bound`:
    ones_judgement: J @ 1 against 0, sized by each row's sum |J| (what a wrong J would leave);
    xhat_judgement: J @ xhat against gamma xhat s eps / (var + eps), sized by that value, or
    with eps = 0 against 0, sized by each row's sum |J xhat|; symmetry_judgement: J against
    J^T (meaningful only when gamma is uniform); dx_judgement: dout @ J against backward's dx.
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
    xhat_response_expected: float
    bound: np.ndarray
    offset: float
    ones_judgement: Judgement
    xhat_judgement: Judgement
    symmetry_judgement: Judgement
    dx_judgement: Judgement

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


def xhat_response_vector(cache: Cache) -> np.ndarray:
    """J @ xhat in exact arithmetic, (D,): gamma xhat s eps / (var + eps), for one vector."""
    gamma = 1.0 if cache.gamma is None else cache.gamma
    return gamma * cache.normalized_x * cache.inv_sqrt_sve * (cache.eps / cache.sve)


def xhat_response_expected(cache: Cache) -> float:
    """max |J @ xhat| in exact arithmetic: gamma xhat s eps / (var + eps), for one vector."""
    return float(np.max(np.abs(xhat_response_vector(cache))))


def _chain(cache: Cache) -> float:
    """ROUNDINGS * machine_eps * (2 + log2 D): a careful unit of rounding for a chain of
    operations that includes a sum (or mean) of D terms, as in ln_core.agreement."""
    return ROUNDINGS * float(np.finfo(cache.dtype).eps) * (2.0 + np.log2(cache.n))


def _offset(cache: Cache) -> float:
    """s * M, M = max|x|: the mean's rounding (a few ulp of M) in units of the deviation."""
    return float(cache.inv_sqrt_sve[0]) * float(np.max(np.abs(cache.x.astype(np.float64))))


def _arithmetic_bound(cache: Cache) -> np.ndarray:
    """(D, D): the rounding of J's own arithmetic given xhat and s, per entry.

    J[i, j] = gamma_i s (delta_ij - 1/D - xhat_i xhat_j / D) is three terms (jacobian.py), each
    a chain of a few roundings (the means are sums of D terms): at most that chain times the
    size of the terms, gamma_i s (delta_ij + 1/D + |xhat_i xhat_j| / D).
    """
    s = float(cache.inv_sqrt_sve[0])
    gamma = np.abs(times_gamma(np.ones_like(cache.x), cache).astype(np.float64))
    xhat = np.abs(cache.normalized_x.astype(np.float64))
    terms = np.eye(cache.n) + (1.0 + np.outer(xhat, xhat)) / cache.n
    return _chain(cache) * s * gamma[:, None] * terms


def jacobian_bound(cache: Cache) -> np.ndarray:
    """(D, D): per entry, how far the computed J (ln_core.jacobian) may sit from the exact J.

    Two parts, with s = 1/sqrt(var + eps), M = max|x| and the rounding chain of `_chain`:
    - J's own arithmetic (`_arithmetic_bound`), including s's relative rounding;
    - the rounding of xhat, which J carries twice in xhat_i xhat_j / D: each xhat_j is off by
      its own chain of roundings of |xhat_j| and by the mean's rounding, a few ulp of M, which
      is s * M in units of xhat once x - mean has cancelled M's leading digits (a large common
      offset). This is the term a bound of machine_eps * max|J| misses: with x about 2000 and
      sigma about 1 in float32, J @ 1 is about 3e-4, not a few ulp of J.
    """
    s = float(cache.inv_sqrt_sve[0])
    gamma = np.abs(times_gamma(np.ones_like(cache.x), cache).astype(np.float64))
    xhat = np.abs(cache.normalized_x.astype(np.float64))
    error = xhat + _offset(cache)  # per xhat_j, in units of the chain
    carried = (np.outer(xhat, error) + np.outer(error, xhat)) / cache.n
    return _arithmetic_bound(cache) + _chain(cache) * s * gamma[:, None] * carried


def _product_bound(cache: Cache, jac: np.ndarray, bound: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(D,): how far the computed J @ v may sit from the exact J times the same v: J's own
    error carried through (bound @ |v|) plus the rounding of the D-term sums."""
    size = np.abs(jac.astype(np.float64)) @ np.abs(v.astype(np.float64))
    return bound @ np.abs(v.astype(np.float64)) + _chain(cache) * size


def _expected_bound(cache: Cache) -> np.ndarray:
    """(D,): the rounding of `xhat_response_vector`: its own chain on xhat's rounding and the
    mean's (s * M in units of xhat)."""
    gamma = np.abs(times_gamma(np.ones_like(cache.x), cache).astype(np.float64))
    scale = gamma * float(cache.inv_sqrt_sve[0]) * float(cache.eps / cache.sve[0])
    return _chain(cache) * scale * (np.abs(cache.normalized_x.astype(np.float64)) + _offset(cache))


def _entry_rounding(cache: Cache) -> np.ndarray:
    """(D, D): the rounding of J's own arithmetic given its xhat and s, entry by entry, counted
    operation by operation in units of u (half the machine epsilon): gamma_i s delta_ij rounds
    once, gamma_i s / D twice, gamma_i s xhat_i xhat_j / D four times, and their sum twice
    more on what it adds. Another order of the same arithmetic stays within it."""
    unit = 0.5 * float(np.finfo(cache.dtype).eps)
    s = float(cache.inv_sqrt_sve[0])
    gamma = np.abs(times_gamma(np.ones_like(cache.x), cache).astype(np.float64))
    xhat = np.abs(cache.normalized_x.astype(np.float64))
    terms = 3.0 * np.eye(cache.n) + (4.0 + 5.0 * np.outer(xhat, xhat)) / cache.n
    return unit * s * gamma[:, None] * terms


def _measured_xhat(cache: Cache, jac: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a working dtype narrower than float64: (J @ xhat, its exact value, the bound), (D,)
    each, float64. eps's part is about eps / var of J's scale, which float32's rounding of J's
    entries (a few 1e-8 of it) leaves one or two digits of: a worst case of every rounding
    would leave none. So the rounding a correct J of the working dtype carries on these inputs
    is measured, as PyTorch's gradcheck measures against float64: ln_core's own J against the
    float64 J of the same inputs (`ln_core.gradcheck.reference_cache`), entry by entry and
    carried by |xhat|; plus the float64 J times how far the working xhat sits from the
    float64 one (the mean's common shift drops out, J 1 being 0), and how far the float64
    J @ xhat sits from its expected value; plus the float64 values' own rounding bounds. The
    product is taken in float64, so the check's own arithmetic adds no float32 rounding. The
    bound reads the correct J only: a candidate `jac` is judged against it."""
    wide = reference_cache(cache)
    exact = jacobian(wide.x, wide.gamma, wide.eps)
    own = jacobian(cache.x, cache.gamma, cache.eps).astype(np.float64)
    xhat = cache.normalized_x.astype(np.float64)
    expected = xhat_response_vector(wide)
    measured = (
        (np.abs(own - exact) + _entry_rounding(cache)) @ np.abs(xhat)
        + np.abs(exact @ (xhat - wide.normalized_x))
        + np.abs(exact @ wide.normalized_x - expected)
    )
    wide_own = _product_bound(wide, exact, jacobian_bound(wide), xhat) + _expected_bound(wide)
    return jac.astype(np.float64) @ xhat, expected, measured + wide_own


def _judge_xhat(
    cache: Cache, jac: np.ndarray, bound: np.ndarray, product: np.ndarray
) -> tuple[Judgement, np.ndarray]:
    """J @ xhat against its exact value gamma xhat s eps / (var + eps); returns the judgement
    and the product it judged (float64 for a narrower working dtype, `_measured_xhat`).

    In float64: xhat itself is off from the exact xhat by the mean's rounding, the same for
    every entry (J times the ones vector is 0, so that part drops out), and by each entry's own
    rounding, which J carries like the product's: hence twice the product's rounding. The
    expected value carries xhat's rounding and its own chain. With eps = 0 it is 0, and the
    size is what a wrong J would leave (each row's sum |J xhat|); otherwise the size is the
    value itself, so a pass certifies eps's part and not just "small".
    """
    xhat = np.abs(cache.normalized_x.astype(np.float64))
    if cache.dtype == np.float64:
        expected = xhat_response_vector(cache)
        carried = _product_bound(cache, jac, bound, cache.normalized_x)
        own = _chain(cache) * (np.abs(jac.astype(np.float64)) @ xhat)
        total = carried + own + _expected_bound(cache)
    else:
        product, expected, total = _measured_xhat(cache, jac)
    if cache.eps == 0:
        size = np.abs(jac.astype(np.float64)) @ xhat
        return judge(product, np.zeros_like(product), total, size=float(np.max(size))), product
    return judge(product, expected, total), product


def jacobian_facts(
    x: np.ndarray, gamma: np.ndarray | None, dout: np.ndarray, eps: float = 1e-5
) -> JacobianFacts:
    """The Jacobian page's facts for one vector. x, gamma, dout: (D,); gamma None means 1."""
    x = one_vector(x)
    cache = forward(x, gamma, None, eps)
    return facts_of(jacobian(cache.x, cache.gamma, eps), cache, dout)


def facts_of(jac: np.ndarray, cache: Cache, dout: np.ndarray) -> JacobianFacts:
    """The facts of a given J (D, D), judged as if it were the computed Jacobian of the vector
    whose forward pass is `cache` (gamma set, beta skipped); dout: (D,). jacobian_facts passes
    ln_core's J; a test may pass a wrong one (ln_core.bugs) to see it caught."""
    grads = backward(dout, cache)
    uniform = cache.gamma is None or bool(np.all(cache.gamma == cache.gamma[0]))
    what = "The Jacobian facts"
    ones_product = checked_product(jac, np.ones_like(cache.x), what)
    xhat_product = checked_product(jac, cache.normalized_x, what)
    dout_product = checked_product(grads.dout, jac, what)
    # The bounds are float64 products of sizes, judged by their values: one that overflows is
    # inf, which the rule reads as "cannot resolve", so no flag needs to refuse it (and a
    # product inside numeric_guard could be refused by a spurious BLAS flag).
    with np.errstate(all="ignore"):
        bound = jacobian_bound(cache)
        rows = np.sum(np.abs(jac.astype(np.float64)), axis=1)
        ones_judgement = judge(
            ones_product,
            np.zeros_like(ones_product),
            _product_bound(cache, jac, bound, np.ones_like(cache.x)),
            size=float(np.max(rows)),
        )
        xhat_judgement, xhat_product = _judge_xhat(cache, jac, bound, xhat_product)
        # Exact J is symmetric for uniform gamma whatever xhat is, so only J's own arithmetic
        # (on either side) can break it: not the offset's rounding of xhat.
        arithmetic = _arithmetic_bound(cache)
        symmetry_judgement = judge(jac, jac.T, arithmetic + arithmetic.T)
        # dout @ J carries J's error column by column; backward's dx its own rounding.
        upstream = np.abs(grads.dout.astype(np.float64))
        dx_bound = (
            upstream @ bound
            + _chain(cache) * (upstream @ np.abs(jac.astype(np.float64)))
            + rounding_bounds(cache, grads.dout)["dx"]
        )
        dx_judgement = judge(dout_product, grads.dx, dx_bound)
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
            xhat_response_expected=xhat_response_expected(cache),
            bound=bound,
            offset=_offset(cache),
            ones_judgement=ones_judgement,
            xhat_judgement=xhat_judgement,
            symmetry_judgement=symmetry_judgement,
            dx_judgement=dx_judgement,
        )
