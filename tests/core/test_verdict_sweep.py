"""Issue 19's sweep, reduced for CI (bench.verdict_sweep's QUICK grid; the full grid and its
counts are in BENCHMARKS.md): presets x D x dtypes x eps x upstream kinds x x scales.

No correct gradient, node gradient, closed form or audited formula is called fail/wrong; no
wrong one (each bug, each erratum) is called pass/correct; no bug that changes dx by 10x the
check's bound or more is missed. The grid must also meet every outcome, so the test can fail.
"""

from __future__ import annotations

import pytest

from bench.verdict_sweep import QUICK, Tally, run
from ln_core.bugs import CANNOT_TELL, CAUGHT

# The grid costs about 105 s of CPU, paid by the first test's setup; on a machine shared with
# other work that took 268 s, too near the suite's 300 s for every test.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def tally() -> Tally:
    return run(QUICK)


def test_no_correct_gradient_is_called_fail(tally):
    assert not tally.false_fails, tally.false_fails[:5]
    assert not tally.node_false_fails, tally.node_false_fails[:5]


def test_no_correct_formula_called_wrong_nor_wrong_one_correct(tally):
    assert not tally.audit_flips, tally.audit_flips[:5]
    assert tally.audit["correct"] and tally.audit["wrong"] and tally.audit["cannot decide"]


def test_no_bug_far_above_the_bound_is_missed(tally):
    assert not tally.big_misses, tally.big_misses[:5]
    assert not tally.node_big_misses, tally.node_big_misses[:5]


def test_the_bounds_hold_with_a_margin(tally):
    """The reference's real error stays well inside its bound (a bound that only just holds
    would fail somewhere off the grid), and the analytic gradient's far inside."""
    assert tally.reference_ratio < 0.5
    assert tally.node_ratio < 0.5
    assert tally.analytic_ratio < 0.1


def test_the_grid_meets_every_outcome(tally):
    statuses = {status for (_, status) in tally.statuses}
    assert statuses == {"pass", "cannot resolve"}
    outcomes = {outcome for (_, outcome) in tally.bugs}
    assert {CAUGHT, CANNOT_TELL} <= outcomes
    for bug in ("drop_variance_path", "mean_path_sign", "forget_gamma", "eps_after_sqrt"):
        assert tally.bugs[(bug, CAUGHT)] > 100, bug


def test_eps_after_sqrt_is_caught_in_float64_at_eps_1e3(tally):
    """On random inputs with D >= 2 in float64 the check catches it (float32's central
    differences keep too few digits to see a 1e-3 change at D >= 3)."""
    assert tally.eps_after_sqrt_default[True] >= 4


def test_a_zero_derivative_of_a_single_entry_is_not_called_wrong():
    """The full grid's one flip: D = 1 at scale 1e-5, where σ² is exactly 0 but not once the
    mean has moved, so the central difference carries round-off of the moved copies' size."""
    grid = {
        "d": (1,),
        "dtype": ("float64",),
        "eps": (1e-3,),
        "upstream": ("random", "ones"),
        "x": ("scale 1e-5",),
        "gamma": ("random",),
    }
    flips = run(grid, nodes=False).audit_flips
    assert not flips, flips[:3]
