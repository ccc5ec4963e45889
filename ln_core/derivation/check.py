"""Judging a student's formula for a gradient: read it, then judge it with the audit's judge
on the student's inputs and on the probes, and name the known mistake it makes.

One rule with the audit: the formula becomes an audit Entry (no correction) and
ln_core.audit.verdict.judge decides correct / wrong / cannot decide on each input, with the
same reference, natural size and round-off allowance as the documents' formulas.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ln_core.audit.model import AuditResult, Entry, Quantity, with_underflow
from ln_core.audit.setting import Case, Model, Setting
from ln_core.audit.symbols import (
    GRADIENT_NAMES,
    LAYERNORM,
    carries,
    functions,
    value_errors,
    values,
)
from ln_core.audit.verdict import judge
from ln_core.derivation import slips
from ln_core.derivation.mistakes import AUDIT_PAGE, Mistake, errata, known_mistakes
from ln_core.derivation.probes import PROBES, Probe
from ln_core.derivation.quantities import TARGETS, usable
from ln_core.formula import Bounded, FormulaError, Node, evaluate_bounded, parse, to_latex
from ln_core.formula.errors import FormulaFailure
from ln_core.formula.tree import Binary, Call, Name, Negate

SHOWN_DIFFERENCES = 6


@dataclass(frozen=True)
class ProbeResult:
    """The verdict on one probe; reason says why (or what stopped the formula there);
    error: the formula's relative error there (None where it could not be measured)."""

    label: str
    verdict: str
    reason: str
    error: float | None = None


@dataclass(frozen=True)
class Difference:
    """One entry where the formula and the true value differ: vector and entry (0-based)."""

    vector: int
    entry: int
    yours: float
    true: float


@dataclass(frozen=True)
class Counterexample:
    """The simplest probe that shows a formula wrong, as numbers a student can redo by hand:
    x and dy (V, D), gamma and beta (D,), eps, as the student's model has them (one γ
    repeated for a scalar γ; ε = 0 for a derivation without ε)."""

    label: str
    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    dy: np.ndarray
    eps: float

    def rows(self) -> dict[str, np.ndarray]:
        """The numbers as a table's rows, each (D,): x per vector, γ, β, dy per vector."""
        several = self.x.shape[0] > 1
        vectors = range(self.x.shape[0])
        return {
            **{f"x (vector {v + 1})" if several else "x": self.x[v] for v in vectors},
            "γ": self.gamma,
            "β": self.beta,
            **{f"dy (vector {v + 1})" if several else "dy": self.dy[v] for v in vectors},
        }


@dataclass(frozen=True)
class NamedMistake:
    """name: the mistake in plain words; explanation: why it is one; page: where the lab
    shows it; note: a document that makes the same mistake, and its words for it."""

    name: str
    explanation: str
    page: str
    note: str = ""


@dataclass(frozen=True)
class DerivationCheck:
    """A student's formula for `target`, judged. Plain data, so a page can cache it.

    error: why the formula could not be read or computed (then verdict is None).
    verdict: 'correct', 'wrong' or 'cannot decide', over the student's inputs and the probes.
    yours: the verdict on the student's inputs alone. probes: each probe's verdict.
    exposed_by: the simplest input where the formula is wrong, with the entries that differ
    most there. right_on: the probes where a wrong formula still gives the true value.
    mistake: the known mistake the formula makes, when it makes one. differs_most: for a
    wrong formula that makes none, the right term its gap lines up with, in plain words.
    """

    target: str
    text: str
    latex: str | None
    error: FormulaError | None
    verdict: str | None = None
    summary: str = ""
    yours: ProbeResult | None = None
    probes: tuple[ProbeResult, ...] = ()
    exposed_by: str | None = None
    differences: tuple[Difference, ...] = ()
    right_on: tuple[str, ...] = ()
    mistake: NamedMistake | None = None
    differs_most: str | None = None
    counterexample: Counterexample | None = None


def model_for(with_eps: bool, scalar_gamma: bool) -> Model:
    """The LayerNorm model the student derives in: ε or not, one γ per feature or one."""
    return Model(gamma="scalar" if scalar_gamma else "per-feature", eps=with_eps, axis="features")


def _first_name(node: Node, wanted: frozenset[str]) -> Name | None:
    if isinstance(node, Name):
        return node if node.name in wanted else None
    children: tuple[Node, ...] = ()
    if isinstance(node, Negate):
        children = (node.operand,)
    elif isinstance(node, Binary):
        children = (node.left, node.right)
    elif isinstance(node, Call):
        children = (node.argument,)
    for child in children:
        found = _first_name(child, wanted)
        if found is not None:
            return found
    return None


def read(text: str, target: str) -> Node | FormulaError:
    """The tree of a formula for `target`, or why it cannot be read. A gradient the staged
    backward computes only after `target` (or `target` itself) is refused by name."""
    tree = parse(text, LAYERNORM)
    if isinstance(tree, FormulaError):
        return tree
    late = _first_name(tree, GRADIENT_NAMES - usable(target))
    if late is not None:
        allowed = ", ".join(sorted(usable(target))) or "none"
        return FormulaError(
            "not-here",
            f"A formula for {target} cannot use {late.name}: the backward pass computes it "
            f"from {target} or later. Gradients it may use: {allowed}.",
            late.position,
            late.end,
            text[late.position : late.end],
        )
    return tree


def _bounded(tree: Node, st: Setting) -> Bounded:
    """The formula's value on `st` and the bound on its own round-off."""
    result = evaluate_bounded(tree, values(st), functions(st), value_errors(st), carries(st))
    if isinstance(result, FormulaError):
        raise FormulaFailure(result)
    return result


@dataclass(frozen=True)
class _Computed:
    """The formula on one Setting (held, which keeps the Setting's identity unique): its value,
    the bound on its own round-off and whether a step of it underflowed."""

    setting: Setting
    value: np.ndarray
    round_off: np.ndarray
    underflowed: bool


@dataclass(frozen=True)
class _Typed:
    """The student's formula, its value kept per Setting: on each input it is compared with
    the reference and then with every known mistake, and is computed once for all of them.
    It bounds its own round-off (ln_core.audit.model.BoundsRoundOff), so the judge allows for
    the digits the formula as written loses, as mean(x²) − mean(x)² does at a large offset."""

    tree: Node
    computed: dict[int, _Computed] = field(default_factory=dict, repr=False, compare=False)

    def _on(self, st: Setting) -> _Computed:
        # Keyed by the Setting's identity.
        if id(st) not in self.computed:
            found: list[Bounded] = []

            def value() -> np.ndarray:
                # with_underflow watches the value's arithmetic; the bound comes along.
                found.append(_bounded(self.tree, st))
                return found[0].value

            computed, underflowed = with_underflow(value)
            self.computed[id(st)] = _Computed(st, computed, found[0].error, underflowed)
        return self.computed[id(st)]

    def __call__(self, st: Setting) -> np.ndarray:
        return self._on(st).value

    def underflowed(self, st: Setting) -> bool:
        """Whether computing the formula on `st` underflowed (ln_core.audit.model.KeepsValues)."""
        return self._on(st).underflowed

    def round_off(self, st: Setting) -> np.ndarray:
        """How far the formula's own round-off can move it on `st` (BoundsRoundOff)."""
        return self._on(st).round_off


def _entry(formula: _Typed, key: str, model: Model, quantity: Quantity) -> Entry:
    """The formula as an audit entry; `key` must differ between entries judged on one case,
    which keeps each entry's verdicts by its id."""
    return Entry(
        id=f"yours-{key}",
        document="yours",
        step=key,
        line="",
        model=model,
        quantity=quantity,
        formula=formula,
    )


def _case(probe: Probe) -> Case:
    return Case.of(probe.x, probe.gamma, probe.beta, probe.dout, probe.eps)


def _judged(entry: Entry, case: Case, label: str) -> ProbeResult:
    try:
        result: AuditResult = judge(entry, case)[0]
    except FormulaFailure as failure:
        return ProbeResult(
            label,
            "cannot decide",
            f"The formula cannot be computed here: {failure.error.describe()}.",
        )
    return ProbeResult(label, result.verdict, result.reason, result.error)


def _differences(formula: _Typed, entry: Entry, case: Case) -> tuple[Difference, ...]:
    """The entries where the formula is farthest from the true value on `case`."""
    st = case.setting(entry.model)
    reference, scale = st.reference(entry.quantity)
    yours, reference = np.broadcast_arrays(formula(st), reference)
    gap = np.abs(yours - reference)[0]
    order = np.argsort(gap, axis=None)[::-1][:SHOWN_DIFFERENCES]
    shown = []
    for flat in order:
        if gap.flat[flat] <= 1e-8 * scale[0]:
            break
        vector, entry_ = np.unravel_index(flat, gap.shape)
        shown.append(
            Difference(
                int(vector), int(entry_), float(yours[0].flat[flat]), float(reference[0].flat[flat])
            )
        )
    return tuple(shown)


def _makes(
    formula: _Typed,
    key: str,
    mistake: Mistake,
    model: Model,
    quantity: Quantity,
    wrong: list[Case],
) -> bool:
    """True when the formula gives the mistake's numbers on every case where it is wrong."""
    as_mistake = Quantity(
        text=mistake.name, how=mistake.name, compute=mistake.value, scale=quantity.scale
    )
    entry = _entry(formula, f"mistake-{key}", mistake.model or model, as_mistake)
    seen = False
    for case in wrong:
        try:
            verdict = judge(entry, case)[0].verdict
        except (FormulaFailure, ValueError):
            return False
        if verdict == "wrong":
            return False
        seen = seen or verdict == "correct"
    return seen


# A slip's numbers and the student's agree to this fraction of the quantity's natural size,
# beyond the formula's own round-off: slips differ from each other by a sizeable factor.
SLIP_AGREEMENT = 1e-7
# The student's own inputs are compared with the slips on at most this many vectors: enough to
# tell the slips apart, and cheap at the page's cap.
SLIP_VECTORS = 16


def _compared(
    formula: _Typed, quantity: Quantity, model: Model, case: Case
) -> slips.Compared | None:
    """The formula on `case` as the slips are compared with it; None where it cannot be
    computed there."""
    try:
        st = case.setting(model)
        yours = formula(st)
        own = formula.round_off(st)
    except (FormulaFailure, ValueError):
        return None
    scale = st.reference(quantity)[1].reshape(-1, *[1] * (np.ndim(st.x) - 1))
    return slips.Compared(st, yours, SLIP_AGREEMENT * scale + own)


def _shortened(case: Case) -> Case:
    if case.x.shape[1] <= SLIP_VECTORS:
        return case
    return Case.stack(
        [(case.x[0, :SLIP_VECTORS], case.gamma[0], case.beta[0], case.dout[0, :SLIP_VECTORS])],
        case.eps,
    )


def _counterexample(st: Setting, label: str) -> Counterexample:
    return Counterexample(
        label, st.x[0], st.gamma[0, 0], st.beta[0, 0], st.dy[0], float(st.cache.eps)
    )


def _slip_name(slipped: slips.Slipped) -> NamedMistake:
    names = [slip.name for slip in slipped.slips]
    if len(names) == 1:
        first, _, rest = names[0].partition(" ")
        # A clause starting with a symbol (dμ, γ, x) keeps its case: Γ or Dμ is another name.
        if first.isascii() and first.isalpha() and len(first) > 1:
            first = first.capitalize()
        name = f"{first} {rest}."
    else:
        name = f"Two slips: {names[0]}; and {names[1]}."
    explanation = " ".join(slip.explanation for slip in slipped.slips)
    return NamedMistake(name, explanation, "Stepper")


def _named(
    formula: _Typed,
    target: str,
    model: Model,
    quantity: Quantity,
    wrong: list[Case],
    probes: list[Case],
    own: Case,
) -> tuple[NamedMistake | None, str | None]:
    """The mistake a wrong formula makes, in plain words first, with a document that makes
    the same one as its note; or, when it makes none the lab knows, the right term its gap
    lines up with."""

    def first(key: str, mistakes: tuple[Mistake, ...]) -> Mistake | None:
        return next(
            (
                m
                for i, m in enumerate(mistakes)
                if _makes(formula, f"{key}-{i}", m, model, quantity, wrong)
            ),
            None,
        )

    plain = first("plain", known_mistakes(target))
    mistake = None if plain is None else NamedMistake(plain.name, plain.explanation, plain.page)
    if mistake is None and target in slips.TERMS:
        compared = [_compared(formula, quantity, model, case) for case in probes]
        theirs = _compared(formula, quantity, model, _shortened(own))
        slipped = slips.made_by(target, [c for c in compared if c is not None], theirs)
        if slipped is not None:
            mistake = _slip_name(slipped)
    erratum = first("erratum", errata(target))
    if erratum is not None:
        if mistake is None:
            mistake = NamedMistake(erratum.name, erratum.explanation, AUDIT_PAGE)
        else:
            note = f"{erratum.name} {erratum.explanation}"
            mistake = NamedMistake(mistake.name, mistake.explanation, mistake.page, note)
    differs_most = None
    if mistake is None and (shown := _compared(formula, quantity, model, _shortened(wrong[0]))):
        term = slips.differs_most(target, shown.setting, shown.yours)
        if term is not None:
            differs_most = f"{term.name}, {term.shown}"
    return mistake, differs_most


def _summary(
    verdict: str, yours: ProbeResult, exposed_by: str | None, right_on: tuple[str, ...]
) -> str:
    if verdict == "correct" and yours.verdict == "correct":
        return "Correct: your formula gives the true value on your inputs and on every probe."
    if verdict == "correct":
        return (
            "Correct: your formula gives the true value on the probes; your own inputs cannot "
            "decide (see below why), so the probes decide."
        )
    if verdict == "cannot decide":
        return (
            "Cannot decide: on every input the true value is 0 up to round-off, or the "
            "formula cannot be computed, so right and wrong coincide."
        )
    text = f"Wrong: the simplest input that shows it is “{exposed_by}”."
    if right_on and exposed_by != "your inputs":
        text += (
            " It is right only on special inputs (" + "; ".join(right_on) + "), where the "
            "mistake happens to vanish."
        )
    elif right_on:
        # Only the student's inputs expose it: the probes are not special inputs where the
        # mistake vanishes, they are inputs that miss it.
        text += " The probes give the true value: the mistake shows on inputs like yours."
    if yours.verdict == "correct":
        text += " Your own inputs cannot show it: there it gives the true value."
    return text


def check_formula(
    text: str,
    target: str,
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dout: np.ndarray,
    eps: float,
    with_eps: bool = True,
    scalar_gamma: bool = False,
) -> DerivationCheck:
    """Judge the formula `text` for the gradient `target` (a key of TARGETS).

    x: (D,), (N, D) or (B, L, D); gamma, beta: (D,); dout: x's shape; eps: the student's ε.
    Raises ValueError only for an unknown target or inputs that are not numbers of the right
    shapes; every problem of the formula itself is returned as `error`.
    """
    if target not in TARGETS:
        raise ValueError(f"Unknown quantity {target!r}; pick one of {', '.join(TARGETS)}.")
    tree = read(text, target)
    if isinstance(tree, FormulaError):
        return DerivationCheck(target, text, None, tree)
    latex = to_latex(tree, LAYERNORM)
    model = model_for(with_eps, scalar_gamma)
    quantity = TARGETS[target].quantity(model)
    formula = _Typed(tree)
    entry = _entry(formula, target, model, quantity)
    own = Case.of(x, gamma, beta, dout, eps)
    try:
        formula(own.setting(model))
    except FormulaFailure as failure:
        error = failure.error
        return DerivationCheck(
            target,
            text,
            latex,
            FormulaError(
                error.kind,
                error.problem + " (on your inputs)",
                error.position,
                error.end,
                text[error.position : error.end],
            ),
        )
    except ValueError:
        pass  # the model is undefined on these inputs: the judge says so below
    yours = _judged(entry, own, "your inputs")
    cases = [_case(probe) for probe in PROBES]
    # A derivation without ε is judged at ε = 0 on every input: the labels say so.
    labels = [p.label if with_eps else f"{p.label} (judged at ε = 0)" for p in PROBES]
    probes = tuple(_judged(entry, case, label) for case, label in zip(cases, labels, strict=True))
    wrong = [c for c, r in zip(cases, probes, strict=True) if r.verdict == "wrong"]
    everything = (yours, *probes)
    if wrong or yours.verdict == "wrong":
        verdict = "wrong"
    elif any(r.verdict == "correct" for r in everything):
        verdict = "correct"
    else:
        verdict = "cannot decide"
    exposed_by, differences, right_on, mistake, differs_most = None, (), (), None, None
    counterexample = None
    if verdict == "wrong":
        exposing = wrong[0] if wrong else own
        exposed_by = next((r.label for r in probes if r.verdict == "wrong"), "your inputs")
        if wrong:
            counterexample = _counterexample(exposing.setting(model), exposed_by)
        differences = _differences(formula, entry, exposing)
        right_on = tuple(r.label for r in probes if r.verdict == "correct")
        if not wrong:
            wrong = [own]
        mistake, differs_most = _named(formula, target, model, quantity, wrong, cases, own)
    return DerivationCheck(
        target=target,
        text=text,
        latex=latex,
        error=None,
        verdict=verdict,
        summary=_summary(verdict, yours, exposed_by, right_on),
        yours=yours,
        probes=probes,
        exposed_by=exposed_by,
        differences=differences,
        right_on=right_on,
        mistake=mistake,
        differs_most=differs_most,
        counterexample=counterexample,
    )
