"""The audit of the seed documents: wrong formulas are wrong, corrections and correct ones match."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from kit import teaching_case

from ln_core.audit import ENTRIES, audit

WRONG = {
    "000-dgamma",
    "000-dbeta",
    "000-dz",
    "002-dx-expanded",
    "002-dx-bracket",
    "004-dgamma",
    "004-dbeta",
    "004-dx",
}
MATCH = 1e-10


def _by_id(results):
    return {r.id: r for r in results}


@pytest.mark.parametrize(("seed", "shape"), [(0, (4, 8)), (1, (3, 6)), (2, (2, 3, 5))])
def test_verdicts_on_seeded_batches(seed, shape):
    results = _by_id(audit(*teaching_case(seed, shape).args, eps=1e-5))
    assert set(results) == {e.id for e in ENTRIES}
    for result in results.values():
        if result.id in WRONG:
            assert result.verdict == "wrong", result
            assert result.error > 1e-3, result
            assert result.mistake and result.correction
            assert result.correction_error < MATCH, result
        else:
            assert result.verdict == "correct", result
            assert result.error < MATCH, result
            assert result.mistake is None and result.correction is None
            assert result.correction_error is None


def test_documents_without_eps_are_compared_at_eps_zero():
    for result in audit(*teaching_case(3).args, eps=0.25):
        no_eps = result.document.startswith(("000", "001"))
        assert ("eps = 0 " in result.compared_with) == no_eps, result.compared_with
        assert ("eps = 0.25" in result.compared_with) == (not no_eps), result.compared_with


def test_gamma_placement_in_000_only_shows_with_non_uniform_gamma():
    x, _, beta, dout = teaching_case(4).args
    results = _by_id(audit(x, np.full(8, 1.7), beta, dout))
    assert results["000-dz"].verdict == "correct"


def test_missing_batch_sums_in_004_only_show_with_a_batch():
    case = teaching_case(5, (8,))
    results = _by_id(audit(*case.args))
    assert results["004-dgamma"].verdict == results["004-dbeta"].verdict == "correct"
    assert results["004-dx"].verdict == "wrong"


def test_float32_gives_the_same_verdicts():
    x, gamma, beta, dout = teaching_case(6).args
    as32 = _by_id(audit(x.astype(np.float32), gamma, beta, dout))
    as64 = _by_id(audit(x.astype(np.float32).astype(np.float64), gamma, beta, dout))
    assert {k: r.verdict for k, r in as32.items()} == {k: r.verdict for k, r in as64.items()}
    assert all(r.correction_error is None or r.correction_error < 1e-5 for r in as32.values())


def test_every_formula_names_its_document():
    for entry in ENTRIES:
        assert entry.document[:3] in inspect.getdoc(entry.written), entry.id
        assert entry.formula and "=" in entry.formula


def test_constant_vector_explains_the_eps_free_documents():
    x = np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]])
    with pytest.raises(ValueError, match="000 and 001 define σ without ε"):
        audit(x, np.ones(3), np.zeros(3), np.ones((2, 3)), eps=1e-5)
