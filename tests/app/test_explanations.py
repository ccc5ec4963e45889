"""Every number explains itself: quiz reveals cite ln_core's numbers, and every metric the app
shows carries what it checks, what is expected, and whether this one passes.

The quiz's numbers are recomputed here: each Fact's source is evaluated against a fresh ln_core
run on the same vector (independent of the app's caches) and must give the quoted value, and
every decimal number in a prompt or reveal must be one of the quoted facts.
"""

from __future__ import annotations

import dataclasses
import re
from types import SimpleNamespace

import numpy as np
import pytest

import ln_core
from ln_core.forward import NODE_NAMES
from ln_core.nodes import UNDO
from pages.export.report import html_report
from teaching.glossary import meaning
from teaching.presets import PRESETS, make_example
from teaching.quiz import PAGE_QUESTIONS, STEP_QUESTIONS, Question, vector
from ui.export.bundle import make_bundle

DECIMAL = re.compile(r"-?\d+\.\d+(?:e[+-]\d+)?|-?\d+e[+-]\d+")
CASES = [
    (preset, dtype, eps)
    for preset in PRESETS
    for dtype, eps in (("float64", 1e-5), ("float32", 1e-3))
]


def _numbers(x, gamma, beta, dout, eps) -> SimpleNamespace:
    """Every node, input and gradient of one vector by name, from ln_core, plus rerun()."""
    cache = ln_core.forward(x, gamma, beta, eps)
    grads = ln_core.backward(dout, cache)
    names = {f.name: getattr(cache, f.name) for f in dataclasses.fields(cache)}
    names |= {f.name: getattr(grads, f.name) for f in dataclasses.fields(grads)}

    def rerun(**changed):
        inputs = {"x": x, "gamma": gamma, "beta": beta, **changed}
        return _numbers(inputs["x"], inputs["gamma"], inputs["beta"], dout, eps)

    return SimpleNamespace(**names, D=x.shape[-1], np=np, rerun=rerun)


def _vector_inputs(preset: str, dtype: str, eps: float):
    example = make_example(preset, (3, 6), 0)
    x = example.x.reshape(-1, example.x.shape[-1])[0].astype(dtype)
    dout = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    return x, example.gamma.astype(dtype), example.beta.astype(dtype), dout, eps


def assert_cites_ln_core(question: Question, numbers: SimpleNamespace) -> None:
    """Each fact recomputes from its source; each decimal in the text is a fact."""
    # Decided, the answer is an option; undecided, every option that fits is one.
    assert question.fits and set(question.fits) <= set(question.options)
    assert question.answer in question.options or len(question.fits) > 1
    texts = {fact.text for fact in question.facts}
    shown = question.prompt + " " + question.explanation
    for fact in question.facts:
        expected = float(eval(fact.source, {}, vars(numbers)))  # sources are our own code
        np.testing.assert_allclose(fact.value, expected, rtol=1e-12, err_msg=fact.source)
        assert fact.text in shown, (fact.source, fact.text, shown)
    strays = [n for n in DECIMAL.findall(shown) if n not in texts]
    assert not strays, (strays, shown)


@pytest.mark.parametrize(("preset", "dtype", "eps"), CASES)
def test_every_question_cites_numbers_computed_by_ln_core(preset, dtype, eps):
    inputs = _vector_inputs(preset, dtype, eps)
    numbers = _numbers(*inputs)
    asked = vector(*inputs)
    for number, make in STEP_QUESTIONS.items():
        question = make(asked)
        assert question.explanation, number
        assert_cites_ln_core(question, numbers)
    for make in PAGE_QUESTIONS.values():
        assert_cites_ln_core(make(asked), numbers)


# The gradient each backward step asks about, where its reasoning rests on the line giving it.
UNDONE = {
    12: "dgx",
    13: "dnormalized_x",
    14: "dinv_sqrt_sve",
    15: "dsqrt_sve",
    16: "dsve",
    17: "dsample_var",
    19: "dx_sm",
}


def test_backward_questions_quote_the_lessons_table():
    """A question's derivative is the table's line, not its own copy of it."""
    asked = vector(*_vector_inputs("Random normal", "float64", 1e-5))
    for number, gradient in UNDONE.items():
        question = STEP_QUESTIONS[number](asked)
        line = f"`{gradient} = {UNDO[gradient]}`"
        assert line in question.prompt + question.explanation, (number, line)


def test_there_is_a_question_for_each_of_the_twenty_steps():
    assert sorted(STEP_QUESTIONS) == list(range(1, 21))


@pytest.mark.parametrize(
    ("number", "inputs", "answer"),
    [
        # dgamma does not depend on gamma; but where dout_0 = 0 makes dgamma_0 = 0, twice 0 is
        # 0 too, and the numbers cannot decide.
        (13, ([1.0, -1.0], [1.0, 1.0], [0.0, 0.0], [-2.0, 1.0]), "stay the same"),
        (13, ([1.0, -1.0], [1.0, 1.0], [0.0, 0.0], [0.0, 1.0]), "cannot decide"),
        # Every gamma doubled: dx doubles.
        (
            "gamma_doubling",
            ([1.0, 3.0, -2.0], [1.0, 2.0, 3.0], [0.0] * 3, [1.0, 0.0, 0.0]),
            "double",
        ),
        # dx sums to 0 whatever the numbers.
        (20, ([4.0, 0.0, 1.0], [2.0, -1.0, 3.0], [1.0] * 3, [5.0, 1.0, -2.0]), "zero"),
    ],
)
def test_answers_follow_from_the_reasoning(number, inputs, answer):
    arrays = [np.asarray(a) for a in inputs]
    make = STEP_QUESTIONS.get(number) or PAGE_QUESTIONS[number]
    assert make(vector(*arrays, 1e-5)).answer == answer


@pytest.mark.parametrize("number", range(1, 21))
def test_the_stepper_reveal_is_the_question_on_the_students_own_numbers(lab, number):
    lab.set_sidebar("preset", "Classroom (D = 4, integers)").open("Stepper").step_to(number)
    lab.at.main.toggle(key="w_quiz_").set_value(True)
    lab.run()
    s = lab.state
    question = STEP_QUESTIONS[number](
        vector(s["x"][0], s["gamma"], s["beta"], s["dout_random"][0], s["eps"])
    )
    prompts = [m.value for m in lab.at.main.markdown if "Before you look" in m.value]
    assert prompts == [f"**{question.prompt}**"]
    lab.at.main.radio(key=f"guess_{number}").set_value(question.answer)
    lab.run()
    lab.click("Reveal")
    lab.assert_clean()
    (success,) = lab.at.main.success
    assert success.value == f"Right: {question.answer}."
    # The reasoning, one click away.
    assert question.explanation in [m.value for m in lab.at.main.markdown]


# -- every metric carries a verdict or an explanation -----------------------------------------

PAGES_WITH_METRICS = ("Stepper", "Jacobian", "Gradient check", "Residual block")
STATUS_WORDS = (
    "Pass:",
    "Fail:",
    "Cannot resolve:",
    "As expected:",
    "Caught:",
    "Missed:",
    "Cannot tell here:",
)


def _assert_every_metric_explains_itself(lab) -> None:
    metrics = list(lab.at.main.metric)
    captions = [c.value for c in lab.at.main.caption]
    verdicts = [c for c in captions if any(word in c for word in STATUS_WORDS)]
    for metric in metrics:
        assert metric.proto.help.strip(), f"metric {metric.label!r} has no explanation"
    checked = [m for m in metrics if "Expected:" in m.proto.help]
    assert len(verdicts) >= len(checked), (verdicts, [m.label for m in checked])


@pytest.mark.parametrize("page", [*PAGES_WITH_METRICS, "LayerNorm vs BatchNorm", "Overview"])
def test_every_metric_on_a_page_carries_a_verdict_or_an_explanation(lab, page):
    lab.open(page)
    if page == "Stepper":
        lab.step_to(20)
    lab.assert_no_exception()
    if page in PAGES_WITH_METRICS or page == "LayerNorm vs BatchNorm":
        assert lab.at.main.metric, f"{page} shows no metric"
    _assert_every_metric_explains_itself(lab)


def test_the_jacobian_says_j_xhat_is_eps_doing_and_j_1_passes(lab):
    lab.open("Jacobian")
    helps = {m.label: m.proto.help for m in lab.at.main.metric}
    assert "would be 0 at eps = 0" in helps["max |J @ x_hat|"]
    captions = [c.value for c in lab.at.main.caption]
    assert any("As expected:" in c and "eps's" in c for c in captions), captions
    assert any("Pass:" in c and "rounding" in c for c in captions), captions
    lab.set_sidebar("eps", 0.0)
    helps = {m.label: m.proto.help for m in lab.at.main.metric}
    assert "Expected: 0" in helps["max |J @ x_hat|"]


def test_the_stepper_ends_with_dx_dgamma_dbeta_and_their_closed_form_check(lab):
    lab.open("Stepper").step_to(20)
    lab.assert_clean()
    assert "The result: dx, dgamma, dbeta" in lab.subheaders()
    s = lab.state
    grads = ln_core.backward(
        s["dout_random"], ln_core.forward(s["x"], s["gamma"], s["beta"], s["eps"])
    )
    tables = [t.value.to_numpy() for t in lab.at.main.dataframe]
    assert any(t.shape == grads.dx.shape and np.array_equal(t, grads.dx) for t in tables)
    params = np.stack([grads.dgamma, grads.dbeta])
    assert any(t.shape == params.shape and np.array_equal(t, params) for t in tables)
    closed = lab.metrics()["staged vs closed form"]
    assert float(closed) < 1e-12


# -- node names spelled out ----------------------------------------------------------------------


def test_every_node_has_a_plain_meaning_on_the_stepper_and_in_the_report(lab):
    lab.open("Stepper")
    (glossary,) = [e for e in lab.at.main.expander if e.label == "What the names mean"]
    text = glossary.markdown[0].value
    for node in NODE_NAMES:
        assert f"`{node}`: {meaning(node)}" in text
    assert meaning("sq_xsm") == "squared deviation from the mean"
    assert meaning("sve") == "sample variance plus eps"
    for number, node in ((3, "sq_xsm"), (15, "sqrt_sve")):
        lab.step_to(number)
        assert meaning(node) in lab.shown_step()["meaning"], node
    report = html_report(
        make_bundle(np.ones((2, 3)) * [1, 2, 4], np.ones(3), np.zeros(3), np.ones((2, 3)))
    )
    assert "squared deviation from the mean" in report


@pytest.mark.parametrize(("preset", "dtype", "eps"), CASES)
def test_a_reveal_shows_enough_digits_for_its_words(preset, dtype, eps):
    # Step 8 says the mean of normalized_x² is below 1: the numbers it shows must be below 1.
    question = STEP_QUESTIONS[8](vector(*_vector_inputs(preset, dtype, eps)))
    facts = {fact.source.split("(")[0]: fact for fact in question.facts}
    ratio = next(f for f in question.facts if f.source == "sample_var[0] / sve[0]")
    mean_square = next(f for f in question.facts if f.source.startswith("np.mean"))
    if question.answer == "below 1":
        assert float(ratio.text) < 1 and float(mean_square.text) < 1, question.explanation
        assert "below 1 by" in question.explanation
    elif question.answer == "exactly 1":
        assert "up to this dtype's rounding" in question.explanation
    assert facts
