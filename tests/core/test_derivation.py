"""Checking a student's derivation: the documents' formulas typed as a student would get the
audit's verdict, the bugs and errata typed as formulas are named, and right formulas written
many ways are all right."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ln_core.audit import ENTRIES, audit
from ln_core.audit import quantities as q
from ln_core.audit.model import Entry
from ln_core.audit.setting import Case
from ln_core.audit.verdict import UNDERFLOWED, judge
from ln_core.bugs import Bug
from ln_core.derivation import check_formula, model_for

RNG = np.random.default_rng(7)
X = RNG.normal(0.0, 2.0, (3, 5))
GAMMA = np.array([1.5, 0.5, 2.0, 0.8, 1.2])
BETA = np.array([0.1, -0.2, 0.0, 0.3, 0.5])
DOUT = RNG.normal(0.0, 1.0, (3, 5))
EPS = 1e-3
BY_ID = {entry.id: entry for entry in ENTRIES}
AUDIT = {result.id: result for result in audit(X, GAMMA, BETA, DOUT, EPS)}

DZ_000 = "γ/(Nσ) (N dy − Σ dy − x̂ Σ dy x̂)"
THREE_001 = "dxhat/σ − 1/(Nσ) Σ dxhat − x̂/(Nσ) Σ dxhat x̂"
THREE_003 = "1/N (σ²+ε)^(-1/2) (N dxhat − Σ dxhat − x̂ Σ dxhat x̂)"
CHAIN_004 = (
    "(inv_sqrt_sve*dnormalized_x + 2*x_sm*(1/N*(0.5/sqrt(sve)*(-1/sqrt_sve^2*"
    "(x_sm*dnormalized_x)))))"
)
# entry id -> (target, the line typed as a student would, the document has ε, one scalar γ)
TYPED = {
    "000-dgamma-product": ("dgamma", "sum_batch(Σ dy (x − μ)/σ)", False, True),
    "000-dgamma-sum": ("dgamma", "sum_batch(1/N Σ dy (x − μ)/σ)", False, True),
    "000-dbeta-product": ("dbeta", "sum_batch(Σ dy)", False, True),
    "000-dbeta-sum": ("dbeta", "sum_batch(1/N Σ dy)", False, True),
    "000-dz-chain": ("dx", DZ_000, False, True),
    "000-dz": ("dx", DZ_000, False, True),
    "000-dgamma-w": ("dgamma", "sum_batch(1/N Σ dy x̂)", False, True),
    "000-dbeta-w": ("dbeta", "sum_batch((1/N) Σ dy)", False, True),
    "000-dz-w": ("dx", "γ/(N σ) (N dy - Σ dy - x̂ Σ(dy x̂))", False, True),
    "001-dxhat": ("dnormalized_x", "dy γ", False, False),
    "001-chain": ("dx", THREE_001, False, False),
    "001-dx-i": ("dx", THREE_001, False, False),
    "001-dx-vector": ("dx", THREE_001, False, False),
    "001-dx-substituted": ("dx", "dy γ/σ − 1/(Nσ) Σ dy γ − x̂/(Nσ) Σ dy γ x̂", False, False),
    "001-dx-compact": ("dx", "(dy γ − mean(dy γ x̂) x̂ − mean(dy γ))/σ", False, False),
    "002-dgamma": ("dgamma", "sum_batch(dy x̂)", True, False),
    "002-dbeta": ("dbeta", "sum_batch(dy)", True, False),
    "002-chain": ("dx", "dxhat (σ²+ε)^(-1/2) + dmu/N + dvar 2 (x−μ)/N", True, False),
    "002-dxhat": ("dnormalized_x", "dy ⊙ γ", True, False),
    "002-dmu-chain": (
        "dsample_mean",
        "-(σ²+ε)^(-1/2) Σ dxhat + dvar (-2/N) Σ (x−μ)",
        True,
        False,
    ),
    "002-dmu": ("dsample_mean", "-(σ²+ε)^(-1/2) Σ dxhat", True, False),
    "002-dvar": ("dsample_var", "-1/2 (σ²+ε)^(-3/2) Σ dxhat (x − μ)", True, False),
    "002-dx-expanded": (
        "dx",
        "dxhat (σ²+ε)^(-1/2) - dxhat (σ²+ε)^(-1/2) 1/N Σ dxhat "
        "- 1/2 (σ²+ε)^(-3/2) (x − μ) Σ dxhat (x − μ)",
        True,
        False,
    ),
    "002-dx-bracket": ("dx", "(σ²+ε)^(-1/2)/N (N dxhat - Σ dxhat - x̂ Σ dxhat x)", True, False),
    "003-dxhat": ("dnormalized_x", "dy γ", True, False),
    "003-dvar": ("dsample_var", "Σ dxhat (x−μ) (-1/2) (σ²+ε)^(-3/2)", True, False),
    "003-dmu": ("dsample_mean", "Σ dxhat (-1/√(σ²+ε))", True, False),
    "003-combine": ("dx", "dxhat/√(σ²+ε) + dvar 2(x−μ)/N + dmu/N", True, False),
    "003-dx": ("dx", THREE_003, True, False),
    "003-table-dbeta": ("dbeta", "sum_batch(dy)", True, False),
    "003-table-dgamma": ("dgamma", "sum_batch(dy x̂)", True, False),
    "003-table-dx": ("dx", THREE_003, True, False),
    "004-10-dgx": ("dgx", "1 * dout", True, False),
    "004-10-dbeta": ("dbeta", "1 * dout", True, False),
    "004-9-dgamma": ("dgamma", "normalized_x * dgx", True, False),
    "004-9-dxhat": ("dnormalized_x", "gamma * dgx", True, False),
    "004-8-dxsm1": ("dx_sm_via_normalized_x", "inv_sqrt_sve * dnormalized_x", True, False),
    "004-8-dinv": ("dinv_sqrt_sve", "x_sm * dnormalized_x", True, False),
    "004-7": ("dsqrt_sve", "-1/sqrt_sve**2 * dinv_sqrt_sve", True, False),
    "004-6": ("dsve", "0.5/sqrt(sve) * dsqrt_sve", True, False),
    "004-5": ("dsample_var", "1 * dsve", True, False),
    "004-4": ("dsq_xsm", "1/N * dsample_var", True, False),
    # The document's N counts the vectors; a student writes that count as sum_batch(1).
    "004-4-layernorm": ("dsq_xsm", "1/sum_batch(1) * dsample_var", True, False),
    "004-3": ("dx_sm_via_sq_xsm", "2 * x_sm * dsq_xsm", True, False),
    "004-merge-xsm": ("dx_sm", "dx_sm_via_normalized_x + dx_sm_via_sq_xsm", True, False),
    "004-2-dx1": ("dx_via_x_sm", "1 * dx_sm", True, False),
    "004-2-dmean": ("dsample_mean", "-1 * dx_sm", True, False),
    "004-1": ("dx_via_sample_mean", "1/N * dsample_mean", True, False),
    "004-1-layernorm": ("dx_via_sample_mean", "1/sum_batch(1) * dsample_mean", True, False),
    "004-merge-x": ("dx", "dx_via_x_sm + dx_via_sample_mean", True, False),
    "004-chain": ("dx", f"{CHAIN_004} + 1/N * (-1 * {CHAIN_004})", True, False),
}


def _check(text: str, target: str, with_eps: bool = True, scalar: bool = False):
    return check_formula(text, target, X, GAMMA, BETA, DOUT, EPS, with_eps, scalar)


def test_every_gradient_line_of_the_documents_is_typed():
    # Lines about Jacobian entries or partial derivatives (not a loss gradient) are the
    # audit's alone; every line claiming a gradient the page offers is typed above.
    from ln_core.derivation.quantities import TARGETS

    hows = {t.per_feature.how for t in TARGETS.values()} | {t.scalar.how for t in TARGETS.values()}
    claimed = {e.id for e in ENTRIES if e.quantity.how in hows and e.where is None}
    assert claimed == set(TYPED)


@pytest.mark.parametrize("entry_id", sorted(TYPED))
def test_a_documents_line_typed_by_a_student_gets_the_audits_verdict(entry_id):
    target, text, with_eps, scalar = TYPED[entry_id]
    result = _check(text, target, with_eps, scalar)
    assert result.error is None, result.error
    assert AUDIT[entry_id].verdict == BY_ID[entry_id].expected  # these inputs decide
    assert result.verdict == BY_ID[entry_id].expected, result.summary
    if result.verdict == "wrong":
        # An erratum typed as a formula is named, in plain words where the lab has them,
        # with the document's own words for it as a note.
        assert result.mistake is not None
        said = f"{result.mistake.explanation} {result.mistake.note}"
        assert BY_ID[entry_id].correction.mistake in said


@pytest.mark.parametrize(
    ("entry_id", "name"),
    [
        ("004-10-dbeta", "Leaves out the sum over the vectors."),
        ("000-dbeta-sum", "A 1/N too many."),
        ("002-dx-bracket", "x where x̂ belongs inside the variance term's mean"),
    ],
)
def test_an_erratum_is_named_plainly_with_the_document_as_a_note(entry_id, name):
    target, text, with_eps, scalar = TYPED[entry_id]
    mistake = _check(text, target, with_eps, scalar).mistake
    assert mistake.name.startswith(name)
    assert "Document" not in mistake.name
    assert mistake.note.startswith("The same mistake as ")


BUGS = {
    Bug.DROP_VARIANCE_PATH: "rstd (dxhat - mean(dxhat))",
    Bug.EPS_AFTER_SQRT: "1/(σ+ε) (dxhat - mean(dxhat) - x̂ mean(dxhat x̂))",
    Bug.UNBIASED_VARIANCE: "rstd (dxhat - mean(dxhat) - x̂ Σ(dxhat x̂)/(N-1))",
    Bug.FORGET_GAMMA: "rstd (dy - mean(dy) - x̂ mean(dy x̂))",
    Bug.MEAN_PATH_SIGN: "rstd (dxhat + mean(dxhat) - x̂ mean(dxhat x̂))",
}


@pytest.mark.parametrize("bug", list(Bug))
def test_each_break_the_backward_bug_typed_is_named(bug):
    result = _check(BUGS[bug], "dx")
    assert result.verdict == "wrong"
    assert result.mistake is not None and result.mistake.name == bug.description
    assert result.differences and result.exposed_by


SLIPS = {
    "the mean path dropped": ("dx", "rstd (dxhat - x̂ mean(dxhat x̂))", "path through the mean"),
    "x for x̂": ("dx", "rstd (dxhat - mean(dxhat) - x mean(dxhat x))", "x where x̂"),
    "a 1/N too many": ("dx", "rstd/N (dxhat - mean(dxhat) - x̂ mean(dxhat x̂))", "1/N too many"),
    "the wrong axis": ("dgamma", "sum(dy x̂)", "wrong axis"),
    "ε outside the root": (
        "dx",
        "(dxhat − mean(dxhat) − x_sm/(σ+ε) mean(dxhat x_sm/(σ+ε)))/(σ+ε)",
        "outside the root",
    ),
    "ε left out": ("dx", "(dxhat - mean(dxhat) - xhat mean(dxhat xhat))/σ", "Leaves ε out"),
    "γ forgotten": ("dsample_var", "-1/2 sve^(-3/2) Σ dy x_sm", "Forgets γ"),
}


@pytest.mark.parametrize("slip", sorted(SLIPS))
def test_common_slips_are_named(slip):
    target, text, words = SLIPS[slip]
    result = _check(text, target)
    assert result.verdict == "wrong" and result.mistake is not None
    assert words in result.mistake.name


CORRECT_DX = (
    "rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))",
    "inv_sqrt_sve * (dnormalized_x - mean(dnormalized_x)"
    " - normalized_x * mean(dnormalized_x * normalized_x))",
    "1/sqrt(var + eps) * (dy*gamma - mean(dy*gamma) - xhat*mean(dy*gamma*xhat))",
    "(σ²+ε)^(-1/2) (dxhat − mean(dxhat) − x̂ mean(dxhat x̂))",
    "1/(D √(σ²+ε)) (D dxhat − Σ dxhat − x̂ Σ dxhat x̂)",
    "(D dxhat − Σ dxhat − x̂ Σ dxhat x̂) / (D sqrt_sve)",
    "dxhat/sqrt_sve − Σ dxhat/(D sqrt_sve) − x̂ Σ(dxhat x̂)/(D sqrt_sve)",
    "dxhat rstd − rstd mean(dxhat) − rstd x̂ mean(dxhat x̂)",
    "rstd (dxhat − mean(dxhat)) − (x − μ) rstd³ mean(dxhat (x − μ))",
    "dxhat/√(σ²+ε) − mean(dxhat)/√(σ²+ε) − (x−μ)/(σ²+ε)^(3/2) · mean(dxhat·(x−μ))",
    "rstd*dxhat - rstd*sum(dxhat)/D - x_sm*sum(dxhat*x_sm)*rstd**3/D",
    "dxhat*inv_sqrt_sve + dsample_var*2*x_sm/D + dsample_mean/D",
    "dx_via_x_sm + dx_via_sample_mean",
    "dx_sm - mean(dx_sm)",
    "dx_sm - Σ dx_sm / N",
    "γ dy rstd - rstd mean(γ dy) - rstd x̂ mean(γ dy x̂)",
    "rstd/D * (D*γ*dy - sum(γ*dy) - x̂*sum(γ*dy*x̂))",
    "[D dxhat - Σ dxhat - x̂ Σ dxhat x̂] / {D sqrt(sve)}",
    "rstd (dxhat - mean(dxhat)) - x̂ rstd mean(dxhat x̂)",
    "rstd (dxhat - mean(dxhat) - x_sm rstd² mean(dxhat x_sm))",
    "dxhat rstd - mean(dxhat rstd) - x̂ mean(dxhat x̂ rstd)",
    "(1/sqrt_sve) (dxhat - mean(dxhat)) - x_sm (1/sqrt_sve)^3 mean(dxhat x_sm)",
)


@pytest.mark.parametrize("text", CORRECT_DX)
def test_right_dx_written_many_ways_is_correct(text):
    result = _check(text, "dx")
    assert result.error is None, result.error
    assert result.verdict == "correct", (result.summary, result.probes)


def test_right_only_on_special_inputs_says_so():
    # γ outside the sums is right while γ is uniform (the probe with γ = 1 hides it).
    result = _check("γ rstd (dy - mean(dy) - x̂ mean(dy x̂))", "dx")
    assert result.verdict == "wrong"
    assert result.right_on and "γ = 1" in result.right_on[0]
    assert "right only on special inputs" in result.summary


def test_d2_without_eps_cannot_decide_on_the_students_inputs():
    x, dout = np.array([[1.0, 3.0]]), np.array([[1.0, -2.0]])
    result = check_formula("0 * x", "dx", x, np.ones(2), np.zeros(2), dout, 0.0)
    assert result.yours.verdict == "cannot decide"
    assert result.verdict == "wrong"  # the probes decide it


def test_a_formula_problem_comes_back_with_its_place():
    result = _check("rstd * (dxhat - foo)", "dx")
    assert result.verdict is None and result.error.kind == "unknown-name"
    assert (result.error.position, result.error.found) == (16, "foo")
    later = _check("dsample_mean / D", "dsample_var")
    assert later.error.kind == "not-here" and later.error.found == "dsample_mean"


def test_an_unknown_quantity_is_refused():
    with pytest.raises(ValueError, match="Unknown quantity"):
        _check("x", "dy")


@settings(max_examples=25, deadline=None)
@given(
    d=st.integers(1, 7),
    vectors=st.integers(1, 3),
    seed=st.integers(0, 2**16),
    eps=st.sampled_from([0.0, 1e-5, 0.3]),
)
def test_on_any_inputs_a_right_formula_is_never_wrong_and_a_slip_never_right(d, vectors, seed, eps):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 3.0, (vectors, d))
    gamma, beta = rng.uniform(0.2, 3.0, d), rng.normal(0.0, 1.0, d)
    dout = rng.normal(0.0, 1.0, (vectors, d))
    if eps == 0.0 and d > 1:
        x[:, 0] += 1.0  # a zero variance without ε leaves LayerNorm undefined
    right = check_formula(CORRECT_DX[0], "dx", x, gamma, beta, dout, eps)
    assert right.yours.verdict in ("correct", "cannot decide")
    assert right.verdict == "correct"
    slip = check_formula(f"1.001 * ({CORRECT_DX[0]})", "dx", x, gamma, beta, dout, eps)
    assert slip.yours.verdict in ("wrong", "cannot decide") and slip.verdict == "wrong"


SPECIAL = {
    "D = 2 without ε": (
        np.array([[1.0, 3.0], [0.5, -1.0]]),
        np.array([2.0, 0.5]),
        np.zeros(2),
        np.array([[1.0, -2.0], [0.3, 0.1]]),
        0.0,
    ),
    "all-ones upstream": (X, GAMMA, BETA, np.ones_like(X), EPS),
    "one vector": (X[:1], GAMMA, BETA, DOUT[:1], EPS),
    "uniform γ": (X, np.full(5, 1.3), BETA, DOUT, EPS),
}


@pytest.mark.parametrize("inputs", sorted(SPECIAL))
def test_on_the_students_own_inputs_a_typed_line_gets_the_audits_verdict(inputs):
    # One judge: on inputs where the audit cannot decide, neither can the student's check
    # (document 004's lines are left out: the audit judges them in BatchNorm's model, and
    # reads ① and ④ as LayerNorm knowing the document's N counts vectors, which on a square
    # batch is D: the audit cannot decide there, while the typed count is simply right).
    x, gamma, beta, dout, eps = SPECIAL[inputs]
    judged = {result.id: result.verdict for result in audit(x, gamma, beta, dout, eps)}
    for entry_id, (target, text, with_eps, scalar) in TYPED.items():
        if entry_id.startswith("004"):
            continue
        yours = check_formula(text, target, x, gamma, beta, dout, eps, with_eps, scalar).yours
        assert yours.verdict == judged[entry_id], (entry_id, yours.reason)


def test_a_right_formula_that_underflows_on_your_inputs_is_not_called_wrong():
    """At σ = 1e150 a typed σ⁻³ is 0 in float64: the student's own inputs cannot decide, and
    say why; the probes still judge the formula, which is right."""
    text = "-1/2 (σ²+ε)^(-3/2) Σ dxhat (x − μ)"
    rng = np.random.default_rng(1)
    x = 1e150 * rng.standard_normal((2, 3))
    result = check_formula(text, "dsample_var", x, GAMMA[:3], BETA[:3], DOUT[:2, :3], 0.0)
    assert result.yours.verdict == "cannot decide" and result.yours.reason == UNDERFLOWED
    assert result.verdict == "correct", result.summary
    # The same formula with a slip is still caught, by the probes.
    slipped = check_formula(
        f"2 * ({text})", "dsample_var", x, GAMMA[:3], BETA[:3], DOUT[:2, :3], 0.0
    )
    assert slipped.verdict == "wrong", slipped.summary


# -- a right formula that loses digits as written --------------------------------------------

# dx with the variance written mean(x²) − mean(x)², which loses 2 log10(offset / spread) digits.
CANCELLING_VAR = "(mean(x^2) - mean(x)^2 + eps)"
CANCELLING_DX = (
    f"(dxhat - mean(dxhat) - (x - mean(x))/sqrt{CANCELLING_VAR} * "
    f"mean(dxhat*(x-mean(x))/sqrt{CANCELLING_VAR}))/sqrt{CANCELLING_VAR}"
)


def _offset_inputs(offset: float):
    """The auditor's inputs: x = offset + N(0, 1), (2, 8), with γ, β, dy from one seed."""
    rng = np.random.default_rng(0)
    x = offset + rng.standard_normal((2, 8))
    gamma, beta = 1 + 0.5 * rng.standard_normal(8), rng.standard_normal(8)
    return x, gamma, beta, rng.standard_normal((2, 8)), 1e-5


@pytest.mark.parametrize("offset", [1e4, 1e6, 1e7])
def test_a_right_formula_that_cancels_is_never_called_wrong(offset):
    """The formula is an identity (in 50 digits it equals dx exactly); float64 loses digits
    in mean(x²) − mean(x)². Its own round-off is allowed for: where that still pins the value
    it is correct on the student's inputs, where it does not they cannot decide, and say why;
    the probes judge it correct either way."""
    result = check_formula(CANCELLING_DX, "dx", *_offset_inputs(offset))
    assert result.error is None, result.error
    assert result.verdict == "correct", (result.summary, result.yours)
    assert "right only on special inputs" not in result.summary
    if offset >= 1e7:
        assert result.yours.verdict == "cannot decide"
        assert "loses digits to cancellation" in result.yours.reason
        assert "the probes decide" in result.summary
    else:
        assert result.yours.verdict == "correct", result.yours.reason


@pytest.mark.parametrize(
    "text", [f"1.001 * ({CANCELLING_DX})", f"(dxhat - mean(dxhat))/sqrt{CANCELLING_VAR}"]
)
def test_a_wrong_formula_that_cancels_is_still_wrong(text):
    """A slip written with the same cancelling variance, at the offset where the student's
    inputs cannot decide: the probes still call it wrong."""
    result = check_formula(text, "dx", *_offset_inputs(1e7))
    assert result.yours.verdict in ("wrong", "cannot decide")
    assert result.verdict == "wrong", result.summary


@dataclass(frozen=True)
class _Claims:
    """A formula for dx that gives the true value times 1 + `moved` and says its own round-off
    can reach `own` times the true value's size (ln_core.audit.model.BoundsRoundOff)."""

    moved: float
    own: float

    def __call__(self, st):
        return st.reference(q.DX)[0] * (1.0 + self.moved)

    def round_off(self, st):
        return self.own * np.max(np.abs(st.reference(q.DX)[0]))


@pytest.mark.parametrize(
    ("moved", "own", "verdict"),
    [
        (1e-2, 0.0, "wrong"),  # no round-off of its own: a 1 % gap is far beyond the chain's
        (1e-2, 1e-2, "correct"),  # within its own round-off, which still pins the value
        (1e-2, 0.2, "cannot decide"),  # its own round-off is as large as the value
        (0.5, 1e-2, "wrong"),  # beyond even its own round-off
    ],
)
def test_the_judge_adds_a_formulas_own_round_off(moved, own, verdict):
    entry = Entry(
        id=f"claims-{moved}-{own}",
        document="yours",
        step="dx",
        line="",
        model=model_for(True, False),
        quantity=q.DX,
        formula=_Claims(moved, own),
    )
    result = judge(entry, Case.of(X, GAMMA, BETA, DOUT, EPS))[0]
    assert result.verdict == verdict, result.reason
    if verdict == "cannot decide":
        assert "loses digits to cancellation" in result.reason


def test_wrong_only_on_the_students_inputs_does_not_call_the_probes_special():
    # Right for the probes' D = 2, 3, 4, 6 and wrong at the student's D = 5.
    text = f"({CORRECT_DX[0]}) * (1 + (D - 2)*(D - 3)*(D - 4)*(D - 6)/100)"
    result = _check(text, "dx")
    assert result.yours.verdict == "wrong" and result.verdict == "wrong"
    assert all(p.verdict != "wrong" for p in result.probes)
    assert "right only on special inputs" not in result.summary
    assert "The probes give the true value" in result.summary


# -- the slips of one term, each written three ways or more ------------------------------------

# slip -> (words its name holds, the slip written as students do: (quantity, formula)).
TERM_SLIPS = {
    "a sign flipped inside one term": (
        "sign of the",
        [
            ("dx", "rstd (dxhat - mean(dxhat) + x̂ mean(dxhat x̂))"),
            ("dx", "dxhat rstd - dvar 2(x−μ)/N + dmu/N"),
            ("dx", "-dxhat rstd + dvar 2 (x-μ)/N + dmu/N"),
            ("dx", "rstd/N (N dxhat − Σ dxhat + x̂ Σ dxhat x̂)"),
        ],
    ),
    "the variance where its square root belongs": (
        "σ² + ε where its square root belongs",
        [
            ("dx", "1/(σ²+ε) (dxhat - mean(dxhat) - x̂ mean(dxhat x̂))"),
            ("dx", "dxhat/(σ²+ε) + dvar 2(x−μ)/N + dmu/N"),
            ("dx", "rstd (dxhat - mean(dxhat)) - (x−μ)/(σ²+ε) rstd mean(dxhat x̂)"),
            ("dx", "(N dxhat − Σ dxhat − x̂ Σ dxhat x̂)/(N (σ²+ε))"),
        ],
    ),
    "1/N too many in one term": (
        "1/N too many in",
        [
            ("dx", "rstd (dxhat - mean(dxhat)/N - x̂ mean(dxhat x̂))"),
            ("dx", "dxhat rstd + dvar 2(x−μ)/N + dmu/N²"),
            ("dx", "rstd (dxhat - mean(dxhat) - x̂ mean(dxhat x̂)/N)"),
            ("dx", "rstd (dxhat - 1/N mean(dxhat) - x̂ mean(dxhat x̂))"),
        ],
    ),
    "sums where means belong": (
        "Sums where means belong",
        [
            ("dx", "rstd (dxhat - Σ dxhat - x̂ Σ dxhat x̂)"),
            ("dx", "rstd (dxhat − sum(dxhat) − x̂ sum(dxhat x̂))"),
            ("dx", "dxhat/√(σ²+ε) − Σ dxhat/√(σ²+ε) − x̂ Σ(dxhat x̂)/√(σ²+ε)"),
        ],
    ),
    "dμ not divided by N": (
        "dμ is not divided by N",
        [
            ("dx", "dxhat rstd + dvar 2(x−μ)/N + dmu"),
            ("dx", "rstd (dxhat - Σ dxhat - x̂ mean(dxhat x̂))"),
            ("dx", "dxhat/√(σ²+ε) + dvar·2(x−μ)/N − Σ dxhat/√(σ²+ε)"),
        ],
    ),
    "the 2 of 2(x−μ)/N lost": (
        "2 of 2(x − μ)/N is lost",
        [
            ("dx", "dxhat rstd + dvar (x−μ)/N + dmu/N"),
            ("dx", "dxhat/√(σ²+ε) + dvar (x−μ)/N − mean(dxhat)/√(σ²+ε)"),
            ("dx", "rstd (dxhat - mean(dxhat) - 1/2 x̂ mean(dxhat x̂))"),
        ],
    ),
    "a factor 2 too many": (
        "factor 2 too many",
        [
            ("dx", "dxhat rstd + 2 dvar 2(x−μ)/N + dmu/N"),
            ("dx", "rstd (dxhat - mean(dxhat) - 2 x̂ mean(dxhat x̂))"),
            ("dx", "2 dxhat rstd + dvar 2(x−μ)/N + dmu/N"),
        ],
    ),
    "the ½ of dσ² dropped": (
        "½ of dσ²",
        [
            ("dx", "dxhat rstd - Σ(dxhat (x−μ)) (σ²+ε)^(-3/2) 2(x−μ)/N + dmu/N"),
            ("dx", "dxhat rstd + (−(σ²+ε)^(−3/2) Σ dxhat (x − μ)) · 2(x − μ)/N − mean(dxhat) rstd"),
            ("dsample_var", "-(σ²+ε)^(-3/2) Σ dxhat (x − μ)"),
        ],
    ),
    "γ forgotten in one term only": (
        "is forgotten in the",
        [
            ("dx", "rstd (dxhat - mean(dy) - x̂ mean(dxhat x̂))"),
            ("dx", "rstd (dy γ - mean(dy γ) - x̂ mean(dy x̂))"),
            ("dx", "dy/√(σ²+ε) + dvar 2(x−μ)/N + dmu/N"),
        ],
    ),
    "ε outside the root in dσ²": (
        "ε is outside the root",
        [
            ("dx", "dxhat rstd − ½ Σ(dxhat (x−μ)) (σ+ε)^(-3) 2(x−μ)/N + dmu/N"),
            ("dx", "rstd (dxhat - mean(dxhat)) - (x−μ)/(σ+ε)³ mean(dxhat (x−μ))"),
            ("dsample_var", "-1/2 (σ+ε)^(-3) Σ dxhat (x − μ)"),
        ],
    ),
    "μ and σ² treated as constants": (
        "treated as constants",
        [
            ("dx", "dxhat/σ"),
            ("dx", "dxhat rstd"),
            ("dx", "dy γ / √(σ²+ε)"),
        ],
    ),
    "x where x − μ belongs": (
        "x where x − μ belongs",
        [
            ("dx", "dxhat rstd + dvar 2x/N + dmu/N"),
            ("dx", "rstd (dxhat - mean(dxhat)) - x rstd³ mean(dxhat x)"),
            ("dx", "dxhat rstd - 1/2 Σ(dxhat x) (σ²+ε)^(-3/2) 2(x−μ)/N + dmu/N"),
            ("dsample_var", "-1/2 (σ²+ε)^(-3/2) Σ dxhat x"),
        ],
    ),
    "two slips at once": (
        "Two slips: ",
        [
            ("dx", "dxhat rstd + dvar (x−μ)/N + dmu"),
            ("dx", "rstd (dxhat + mean(dxhat) + x̂ mean(dxhat x̂))"),
            ("dx", "rstd (dy - mean(dxhat) - x̂ Σ dxhat x̂)"),
        ],
    ),
}
WRITTEN = [(slip, *form) for slip, (_, forms) in TERM_SLIPS.items() for form in forms]


@pytest.mark.parametrize(("slip", "target", "text"), WRITTEN)
def test_each_slip_of_one_term_is_named_however_it_is_written(slip, target, text):
    result = _check(text, target)
    assert result.error is None, result.error
    assert result.verdict == "wrong" and result.mistake is not None, result.differs_most
    assert TERM_SLIPS[slip][0] in result.mistake.name


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("rstd (dxhat - mean(dxhat) - 1.3 x̂ mean(dxhat x̂))", "the variance term"),
        ("rstd (1.2 dxhat - mean(dxhat) - x̂ mean(dxhat x̂))", "the direct term"),
        ("rstd (dxhat - mean(dxhat) - x̂ mean(dxhat x̂)) + 0.3 x", None),
    ],
)
def test_a_wrong_formula_that_makes_no_known_slip_names_the_term_that_differs(text, part):
    result = _check(text, "dx")
    assert result.verdict == "wrong" and result.mistake is None
    assert result.differs_most == part or result.differs_most.startswith(part)
