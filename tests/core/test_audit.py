"""The derivation audit: every stated formula has an entry, each is judged in its document's own
model, and "cannot decide" appears exactly where the inputs cannot tell right from wrong."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from audit_expected import EXPECTED
from kit import teaching_case

from ln_core.audit import (
    DOCUMENTS,
    ENTRIES,
    FORMULA,
    ROUND_OFF,
    UNDERFLOW,
    Case,
    audit,
    audit_case,
    doc000,
    doc001,
    doc002,
    doc003,
    doc004,
)
from ln_core.audit.verdict import BEYOND_FLOAT64, UNDERFLOWED
from teaching.presets import make_example

UNDECIDED = "These inputs cannot decide"


def _by_id(results):
    return {r.id: r for r in results}


def test_every_entry_states_its_expected_verdict_here():
    assert [e.id for e in ENTRIES] == list(EXPECTED)
    assert {e.id: e.expected for e in ENTRIES} == EXPECTED


@pytest.mark.parametrize("module", [doc000, doc001, doc002, doc003, doc004])
def test_every_entry_quotes_its_line_and_names_its_model_and_claim(module):
    key = module.__name__[-3:]
    assert module.ENTRIES, f"document {key} has no entries"
    for entry in module.ENTRIES:
        assert entry.document == key and entry.id.startswith(key), entry.id
        assert entry.line and entry.step, entry.id
        assert entry.model.describe() and entry.quantity.text and entry.quantity.how
        if entry.correction is not None:
            c = entry.correction
            assert c.latex and c.mistake and c.agrees_when and c.exposed_by, entry.id
            assert c.latex != entry.line, entry.id


def test_documents_are_named_by_what_they_are_with_a_notation_key():
    assert sorted(DOCUMENTS) == ["000", "001", "002", "003", "004"]
    for doc in DOCUMENTS.values():
        assert doc.name.startswith("the ") and ".txt" not in doc.name
        assert len(doc.notation) >= 5
    assert "residual" in DOCUMENTS["000"].name
    assert "BatchNorm" in DOCUMENTS["004"].name


def test_references_never_use_autograd():
    for module in (doc000, doc001, doc002, doc003, doc004):
        assert "torch" not in inspect.getsource(module)


@pytest.mark.parametrize(("seed", "shape"), [(0, (4, 8)), (1, (3, 6)), (2, (2, 3, 5))])
def test_verdicts_on_inputs_that_can_decide(seed, shape):
    results = _by_id(audit(*teaching_case(seed, shape).args, eps=1e-5))
    for entry_id, expected in EXPECTED.items():
        result = results[entry_id]
        assert result.verdict == expected, (entry_id, result.reason)
        if expected == "wrong":
            assert result.error > 1e-3 and result.correction_error < 1e-9, result
            assert result.mistake and result.correction
        else:
            assert result.mistake is None and result.correction is None
            assert result.correction_error is None


def test_d2_without_eps_cannot_decide_dx_of_the_eps_free_documents():
    x, gamma, beta, dout = teaching_case(0, (3, 2)).args
    results = _by_id(audit(x, gamma, beta, dout, eps=0.0))
    for entry_id in ("001-dx-i", "001-dx-compact", "000-dz", "000-case1", "003-dx"):
        result = results[entry_id]
        assert result.verdict == "cannot decide", (entry_id, result.verdict)
        assert result.reason.startswith(UNDECIDED)
        assert "x̂ = ±1" in result.reason and "Try D ≥ 3" in result.reason
    # A wrong formula that does not vanish is still caught there.
    assert results["002-dx-expanded"].verdict == "wrong"
    assert results["000-dgamma-sum"].verdict == "wrong"


def test_all_ones_upstream_cannot_decide_the_scalar_dgamma():
    x, gamma, beta, _ = teaching_case(1).args
    results = _by_id(audit(x, gamma, beta, np.ones_like(x), eps=1e-5))
    # One γ for all features: ∂C/∂γ = Σ_k x̂_k = 0 for every vector.
    for entry_id in ("000-dgamma-product", "000-dgamma-sum", "000-dgamma-w"):
        assert results[entry_id].verdict == "cannot decide", entry_id
        assert "the same in every entry of a vector" in results[entry_id].reason
    # One γ per feature: ∂L/∂γ_i = Σ over vectors of x̂_i, which is not 0.
    assert results["002-dgamma"].verdict == "correct"
    assert results["000-dbeta-sum"].verdict == "wrong"  # Σ dy = D, so the 1/N shows


def test_000_is_judged_with_its_own_scalar_gamma_and_notes_the_per_feature_model():
    x, gamma, beta, dout = teaching_case(2).args
    dz = _by_id(audit(x, gamma, beta, dout))["000-dz"]
    assert dz.verdict == "correct"
    assert "one scalar γ" in dz.model
    assert "γ_k multiplies row k" in dz.note and "uniform" not in dz.note
    uniform = _by_id(audit(x, np.full_like(gamma, 1.7), beta, dout))["000-dz"]
    assert "both placements agree here" in uniform.note


def test_standardized_rows_cannot_expose_the_bracket_form():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(4, 8))
    x = (z - z.mean(-1, keepdims=True)) / z.std(-1, keepdims=True)
    results = _by_id(audit(x, rng.normal(1, 0.3, 8), np.zeros(8), rng.normal(size=(4, 8)), 0.0))
    bracket = results["002-dx-bracket"]
    assert bracket.verdict == "cannot decide"
    assert "standardized" in bracket.reason and "mean is away from 0" in bracket.reason
    assert bracket.mistake  # the mistake is still shown, under "cannot decide"


def test_one_vector_cannot_expose_the_missing_batch_sums_of_004():
    x, gamma, beta, dout = teaching_case(5, (8,)).args
    results = _by_id(audit(x, gamma, beta, dout, eps=1e-3))
    for entry_id in ("004-10-dbeta", "004-9-dgamma"):
        assert results[entry_id].verdict == "cannot decide", entry_id
        assert "one sample" in results[entry_id].reason
    undefined = _by_id(audit(x, gamma, beta, dout, eps=0.0))["004-chain"]
    assert undefined.verdict == "cannot decide" and "zero variance" in undefined.reason


def test_004_says_its_graph_is_batchnorms_and_shows_the_literal_numbers():
    x, gamma, beta, dout = teaching_case(6, (4, 8)).args
    for result in audit(x, gamma, beta, dout):
        if result.document == "004" and result.mistake:
            assert "BatchNorm" in result.mistake and "N samples" in result.mistake
            as_layernorm = result.id.endswith("-layernorm")
            model = "(LayerNorm)" if as_layernorm else "over the N vectors of the batch"
            assert model in result.model
            assert len(result.values) == 6 and result.values != result.reference_values


def test_004_averaging_axis_is_wrong_as_layernorm_and_right_as_batchnorm():
    """Issue 19 item 5: ① and ④ get a LayerNorm verdict beside their BatchNorm one."""
    x, gamma, beta, dout = teaching_case(6, (4, 8)).args
    results = _by_id(audit(x, gamma, beta, dout))
    for step in ("004-1", "004-4"):
        assert results[step].verdict == "correct"
        assert results[f"{step}-layernorm"].verdict == "wrong"
    square = teaching_case(6, (4, 4)).args  # N = D: dividing by N is dividing by D
    assert _by_id(audit(*square))["004-1-layernorm"].verdict == "cannot decide"


def test_003_combine_is_labelled_as_the_labs_own_line():
    results = _by_id(audit(*teaching_case(6, (3, 8)).args))
    assert results["003-combine"].written_by_lab
    assert "lab's own" in results["003-combine"].step
    assert not any(r.written_by_lab for k, r in results.items() if k != "003-combine")


def test_000_dy_residual_has_an_independent_reference():
    """Its reference is a central difference in the sublayer's output, not its own formula."""
    result = _by_id(audit(*teaching_case(6, (3, 8)).args))["000-dy-residual"]
    assert "central differences" in result.reference
    assert result.verdict == "correct"
    assert 0 < result.error < 1e-6  # a difference, not the formula itself


@pytest.mark.parametrize(
    ("preset", "shape", "ids"),
    [
        ("Large common offset (about 2000)", (3, 128), ("000-dmu", "001-dmu", "002-dmu-dx")),
        ("One large outlier", (3, 2), ("002-chain", "003-combine", "003-dx", "003-table-dx")),
    ],
)
def test_the_issue_presets_are_judged_correct(preset, shape, ids):
    """Issue 19 item 1: the offset's round-off in the reference is accounted for, and a true dx
    of 1e-10 is not 0 in float64."""
    example = make_example(preset, shape, 0)
    dout = np.random.default_rng(1).standard_normal(shape)
    results = _by_id(audit(example.x, example.gamma, example.beta, dout, 1e-5))
    for entry_id in ids:
        assert results[entry_id].verdict == "correct", (entry_id, results[entry_id].reason)


def test_typos_read_generously_say_so():
    readings = {e.id: e.reading for e in ENTRIES}
    assert "w_i inside a sum over k is read as w_k" in readings["000-dgamma-w"]
    assert "dβq is read as dβ" in readings["004-10-dbeta"]
    assert "list dash" in readings["004-7"]
    assert "j = 1 … H" in readings["002-dvar-dx"]


def test_float32_is_judged_in_float64():
    x, gamma, beta, dout = teaching_case(7, (3, 1024)).args
    as32 = [a.astype(np.float32) for a in (x, gamma, beta, dout)]
    judged32 = _by_id(audit(*as32, eps=1e-5))
    judged64 = _by_id(audit(*[a.astype(np.float64) for a in as32], eps=1e-5))
    assert {k: r.verdict for k, r in judged32.items()} == {
        k: r.verdict for k, r in judged64.items()
    }
    assert judged32["002-dx-bracket"].verdict == "wrong"
    assert judged32["001-dx-compact"].error < 1e-12


def test_a_constant_vector_leaves_the_eps_free_documents_undecided_and_the_rest_judged():
    x = np.array([[1.0, 2.0, 4.0], [5.0, 5.0, 5.0]])
    results = audit(x, np.array([1.0, 0.5, 2.0]), np.zeros(3), np.ones((2, 3)) * [1, -2, 3], 1e-5)
    for result in results:
        if result.document in ("000", "001"):
            assert result.verdict == "cannot decide", result.id
            assert "no ε, so it is judged at ε = 0" in result.reason
    assert _by_id(results)["002-dx-expanded"].verdict == "wrong"


def test_stacked_cases_are_judged_as_each_alone():
    cases = [teaching_case(seed, (3, 6)).args for seed in (8, 9)]
    x, gamma, beta, _ = teaching_case(10, (3, 6)).args
    cases.append((x, np.full_like(gamma, 0.8), beta, np.ones_like(x)))
    stacked = audit_case(Case.stack(cases, eps=1e-3))
    for args, together in zip(cases, stacked, strict=True):
        alone = audit(*args, eps=1e-3)
        assert [r.verdict for r in together] == [r.verdict for r in alone]
        assert [r.note for r in together] == [r.note for r in alone]
        for a, b in zip(together, alone, strict=True):
            assert a.values == pytest.approx(b.values, rel=1e-12, abs=1e-15), a.id
            if a.error is not None:
                assert a.error == pytest.approx(b.error, rel=1e-6, abs=1e-15), a.id


NON_FINITE = ("inf", "nan")


def _numbers_and_words(result) -> list[object]:
    return [
        result.error,
        result.correction_error,
        *result.values,
        *result.reference_values,
        *result.reason.lower().replace(",", " ").replace("(", " ").replace(")", " ").split(),
    ]


@pytest.mark.parametrize(
    "spread, d",
    [(1e-150, 3), (1e-150, 24), (1e-153, 5), (1e154, 3), (5.6e153, 8)],
    ids=["tiny D=3", "tiny D=24", "tinier D=5", "huge D=3", "huge D=8"],
)
def test_near_float64s_limits_no_verdict_rests_on_an_infinite_size(spread, d):
    """At eps = 0, a variance of 1e-300 makes s³ overflow though the terms it sizes (s² Σ|x̂ dx̂|)
    do not; entries of 1e153 make the central differences' round-off overflow. A size that
    overflows is never shown, and a verdict is not measured against it."""
    rng = np.random.default_rng(0)
    x = spread * rng.standard_normal((2, d))
    results = audit(x, np.ones(d), np.zeros(d), rng.standard_normal((2, d)), 0.0)
    shown = [v for r in results for v in _numbers_and_words(r) if v is not None]
    assert not [v for v in shown if isinstance(v, float) and not np.isfinite(v)]
    assert not [v for v in shown if isinstance(v, str) and v.strip(".;") in NON_FINITE]
    if spread > 1:
        beyond = [r for r in results if r.reason == BEYOND_FLOAT64]
        assert beyond and all(r.verdict == "cannot decide" for r in beyond)


def test_the_sizes_of_the_variance_gradients_do_not_overflow_where_they_are_finite():
    # s = 1e150: s³ alone overflows; s³ Σ|(x - μ) dx̂| is about 1e300.
    x = np.array([[1e-150, -1e-150, 0.0]])
    results = audit(x, np.ones(3), np.zeros(3), np.array([[0.3, -1.2, 0.8]]), 0.0)
    # Averaging over the wrong axis is exposed: its gap (about 1e300) is measured against the
    # round-off of terms of about 1e300, not against an infinite size.
    (axis,) = [r for r in results if r.step == "④ dsq_xsm, read as LayerNorm"]
    assert axis.verdict == "wrong" and np.isfinite(axis.error), axis.reason


def test_a_large_common_offset_is_named_where_it_leaves_a_true_zero_undecided():
    # Nothing in the shape (D = 6, random dout, eps > 0) forces a 0; the offset's round-off does.
    rng = np.random.default_rng(0)
    x = 1e12 + rng.standard_normal((2, 6))
    results = audit(x, np.ones(6), np.zeros(6), rng.standard_normal((2, 6)), 1e-5)
    undecided = [r for r in results if "up to round-off" in r.reason]
    assert undecided
    assert all("large common offset" in r.reason for r in undecided)
    assert not [r for r in undecided if "D ≥ 3" in r.reason]


def test_a_formula_whose_steps_underflow_is_not_called_wrong_and_each_case_says_so_alone():
    """At σ = 1e150, (σ² + ε)^(-3/2) is 1e-450: 0 in float64. The documents' right dσ² is
    then 0 against a true 1e-300; that gap is float64's. Stacked with ordinary inputs, the
    ordinary case keeps its own verdicts."""
    rng = np.random.default_rng(1)
    x, gamma, beta, dout = (rng.standard_normal(shape) for shape in ((2, 3), 3, 3, (2, 3)))
    ordinary, extreme = audit_case(
        Case.stack([(x, gamma, beta, dout), (1e150 * x, gamma, beta, dout)], 0.0)
    )
    ordinary, extreme = _by_id(ordinary), _by_id(extreme)
    for right in ("002-dvar", "003-dvar", "003-combine"):
        assert ordinary[right].verdict == "correct", right
        assert extreme[right].verdict == "cannot decide" and extreme[right].reason == UNDERFLOWED
    assert ordinary["002-dx-expanded"].verdict == "wrong"
    assert extreme["002-dx-expanded"].reason == UNDERFLOWED
    # Where nothing underflows, nothing is said of it.
    assert not [r for r in ordinary.values() if r.reason == UNDERFLOWED]


def _degenerate_and_ordinary() -> tuple[dict, dict]:
    """The same random x and dout at D = 2 without ε (every dx is 0 up to round-off), and at
    D = 3 with ε, judged together."""
    rng = np.random.default_rng(2)
    two, three = (
        (
            rng.standard_normal((2, d)),
            rng.standard_normal(d),
            np.zeros(d),
            rng.standard_normal((2, d)),
        )
        for d in (2, 3)
    )
    degenerate = _by_id(audit(*two, eps=0.0))
    ordinary = _by_id(audit(*three, eps=1e-5))
    return degenerate, ordinary


def test_an_error_of_two_round_offs_is_never_shown_as_the_formulas():
    """Where the true value is 0 up to round-off, max|a - n| / max(|a| + |n|) of a right formula
    is the ratio of two round-offs, anything up to 1: the lab's own correction of document 002's
    three-part dx showed "error 1.0e+00" at D = 2 without ε. Such an error is marked, for the
    formula and for its correction alike, and a correction whose error is a number is right."""
    degenerate, ordinary = _degenerate_and_ordinary()
    for results in (degenerate, ordinary):
        for result in results.values():
            zero = result.reason.startswith("These inputs cannot decide: the true value is 0")
            assert (result.error_measures == ROUND_OFF) == zero, result.id
            if result.correction is not None:
                assert result.correction_error_measures in (FORMULA, ROUND_OFF), result.id
                if result.correction_error_measures == FORMULA:
                    assert result.correction_error < 1e-9, result.id
    for step in ("002-dx-expanded", "002-dx-bracket"):
        assert degenerate[step].verdict == "wrong"
        assert degenerate[step].correction_error_measures == ROUND_OFF
        assert ordinary[step].correction_error_measures == FORMULA
    assert all(r.error_measures != UNDERFLOW for r in ordinary.values())


def test_an_error_after_an_underflow_is_marked_as_float64s():
    rng = np.random.default_rng(1)
    x, gamma, beta, dout = (rng.standard_normal(shape) for shape in ((2, 3), 3, 3, (2, 3)))
    results = _by_id(audit(1e150 * x, gamma, beta, dout, eps=0.0))
    for result in results.values():
        assert (result.error_measures == UNDERFLOW) == (result.reason == UNDERFLOWED), result.id
    assert results["002-dvar"].error_measures == UNDERFLOW
