"""The one rule behind every verdict the lab shows: a measured gap against what round-off explains.

A candidate (an analytic gradient, a document's formula, a buggy backward) is compared with a
reference (a central difference, the staged backward, the closed form). Three numbers decide:

- gap: max |candidate - reference|, measured;
- bound: a careful absolute bound on what round-off and truncation can explain: the reference's
  own error (a central difference loses digits to a large common offset, to the step and to the
  dtype) plus the candidate's own rounding; one per entry, or one for all;
- size: how large the true value is.

The rule, in that order:

- a rounding in either computation underflowed (fell below the dtype's smallest normal number,
  ln_core.validation.underflowed): there round-off is no longer a small fraction of each value,
  so the bound, which is relative, does not hold: CANNOT RESOLVE, whatever the gap;
- some entry's gap is above its bound: FAIL, with certainty (no round-off explains it);
- otherwise, if the bound is not small against the size (above RESOLVE * size, or the true value
  is exactly 0), a value wrong by its whole size would fit within the bound just as well:
  CANNOT RESOLVE, right and wrong coincide on these inputs;
- otherwise PASS: the candidate matches to within round-off, and round-off is small.

Relative errors shown beside a verdict have no absolute floor (0 / 0 is 0), so they mean the
same at x ~ 1e15 or dout ~ 1e-19 as at x ~ 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PASS, FAIL, CANNOT_RESOLVE = "pass", "fail", "cannot resolve"
# A pass must pin the true value to at least one significant digit: a bound above a tenth of
# the true value's size cannot tell a right value from one that is off by its whole size.
RESOLVE = 0.1
# float64's 53 bits hold a little under 16 significant decimal digits: two values that agree
# exactly are said to agree to all of them.
DIGITS = 16


def rel_error(candidate: np.ndarray, reference: np.ndarray) -> float:
    """max |c - r| / max(|c| + |r|), one number per tensor; 0 when both are 0 everywhere.

    The denominator is the tensor's largest |c| + |r|, not each entry's own, so an entry whose
    true value is near 0 cannot blow the ratio up with pure round-off. No floor: the ratio is
    the same at every scale.
    """
    c = np.asarray(candidate, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    gap = float(np.max(np.abs(c - r), initial=0.0))
    both = float(np.max(np.abs(c) + np.abs(r), initial=0.0))
    return gap / both if gap > 0 else 0.0


def elementwise_rel_error(candidate: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """|c - r| / (|c| + |r|) per entry (0 where both are 0), same shape as the inputs."""
    c = np.asarray(candidate, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    gap = np.abs(c - r)
    both = np.abs(c) + np.abs(r)
    return np.divide(gap, both, out=np.zeros_like(gap), where=gap > 0)


def off_by(gap: float, size: float) -> float:
    """gap / size: how far a value is off, as a fraction of the true value's size (0.33 is
    "off by 33 %"). 0 when the gap is 0; inf when the true value is exactly 0 and the gap not."""
    if gap == 0:
        return 0.0
    if size == 0:
        return float("inf")
    with np.errstate(over="ignore"):
        return float(np.float64(gap) / np.float64(size))


def agreeing_digits(gap: float, size: float) -> int:
    """How many significant digits a value agrees to with the true one, `size` large, when they
    are `gap` apart: floor(-log10(gap / size)), from 0 (off by 10 % or more, or any gap on a
    true value of exactly 0) up to DIGITS (which a gap of exactly 0 gives)."""
    fraction = off_by(gap, size)
    if fraction == 0:
        return DIGITS
    with np.errstate(divide="ignore"):
        return int(np.clip(np.floor(-np.log10(fraction)), 0, DIGITS))


@dataclass(frozen=True)
class Judgement:
    """A verdict under the rule of the module docstring, with the numbers that made it.

    status: PASS, FAIL or CANNOT_RESOLVE. gap: max |candidate - reference|. bound: the largest
    per-entry bound (the one at the worst entry when it failed). size: the true value's size.
    excess: the largest gap / bound over the entries (above 1 exactly when it failed).
    relative: rel_error of candidate and reference. underflow: the working dtype when a
    rounding in either computation underflowed (then the status is CANNOT_RESOLVE), else None.
    """

    status: str
    gap: float
    bound: float
    size: float
    excess: float
    relative: float
    underflow: np.dtype | None = None

    @property
    def off_by(self) -> float:
        """gap / size: the relative error a student reads ("off by 33 %"), see `off_by`."""
        return off_by(self.gap, self.size)

    @property
    def digits(self) -> int:
        """The significant digits candidate and reference agree to, see `agreeing_digits`."""
        return agreeing_digits(self.gap, self.size)

    @property
    def resolution(self) -> float:
        """bound / size: the relative precision a pass certifies (inf when the size is 0)."""
        return self.bound / self.size if self.size > 0 else float("inf")


def decide(excess: float, bound: float, size: float, underflow: bool = False) -> str:
    """The rule itself: excess, the largest gap / bound over the entries; bound, the largest
    bound; size, the true value's size; underflow: a rounding of either computation
    underflowed, so the bound does not hold."""
    if underflow:
        return CANNOT_RESOLVE
    if excess > 1.0:
        return FAIL
    if bound > RESOLVE * size or size == 0:
        return CANNOT_RESOLVE
    return PASS


def judge(
    candidate: np.ndarray,
    reference: np.ndarray,
    bound: np.ndarray | float,
    size: float | None = None,
    underflow: np.dtype | None = None,
) -> Judgement:
    """The rule of the module docstring. candidate, reference: one shape; bound: an absolute
    bound per entry (broadcast to that shape) or one for all; size: the true value's size
    (default: max |reference|); underflow: the working dtype when a rounding of either
    computation underflowed (ln_core.validation.underflowed), else None."""
    c = np.asarray(candidate, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    gaps = np.abs(c - r)
    bounds = np.broadcast_to(np.asarray(bound, dtype=np.float64), gaps.shape)
    size = float(np.max(np.abs(r), initial=0.0)) if size is None else float(size)
    # gap / bound per entry; a nonzero gap against a zero bound is infinitely far off.
    ratios = np.divide(gaps, bounds, out=np.where(gaps > 0, np.inf, 0.0), where=bounds > 0)
    worst = int(np.argmax(ratios)) if ratios.size else 0
    excess = float(ratios.reshape(-1)[worst]) if ratios.size else 0.0
    largest_bound = float(np.max(bounds, initial=0.0))
    status = decide(excess, largest_bound, size, underflow is not None)
    shown_bound = float(bounds.reshape(-1)[worst]) if status == FAIL else largest_bound
    return Judgement(
        status=status,
        gap=float(np.max(gaps, initial=0.0)),
        bound=shown_bound,
        size=size,
        excess=excess,
        relative=rel_error(c, r),
        underflow=None if underflow is None else np.dtype(underflow),
    )
