"""Check your derivation page: a typed formula is read back, judged, and carried by the link;
bad input of every kind gets a message and the page keeps working."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest

from ui.entry.limits import LINK_FORMULA_CHARS

TYPED = "Your formula"


def _type(lab, text: str):
    lab.widget("text_input", TYPED).set_value(text)
    return lab.run()


def _verdict(lab) -> str | None:
    """The verdict heading, or None when the formula was not judged."""
    shown = [h.value for h in lab.at.main.header]
    return next((h for h in shown if h in ("Correct", "Wrong", "Cannot decide")), None)


def _said(lab) -> str:
    parts = [e.value for e in lab.at.main.error] + [s.value for s in lab.at.main.success]
    parts += [w.value for w in lab.at.main.warning] + [m.value for m in lab.at.main.markdown]
    return "\n".join(parts)


def test_the_page_starts_empty_with_three_examples_to_load(lab):
    lab.open("Check your derivation")
    lab.assert_clean()
    assert lab.widget("text_input", TYPED).value == ""
    assert _verdict(lab) is None and not lab.at.main.error and not lab.at.main.latex
    assert any("`dx =`, or load an example" in i.value for i in lab.at.main.info)
    labels = [b.label for b in lab.at.main.button]
    assert {"A correct compact dx", "A broken dx"} <= set(labels)
    assert any(label.startswith("A document's line") for label in labels)
    lab.click(next(label for label in labels if label.startswith("A document's line")))
    assert _verdict(lab) == "Wrong"


def test_right_then_wrong_then_unparsable(lab):
    lab.open("Check your derivation")
    _type(lab, "rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))")
    assert _verdict(lab) == "Correct"
    assert r"\mathrm{d}x = \frac{1}{\sqrt{" in lab.at.main.latex[0].value
    assert "**On your inputs:** right, agrees to" in _said(lab)

    _type(lab, "rstd (dxhat - mean(dxhat))")
    lab.assert_no_exception()
    assert _verdict(lab) == "Wrong"
    said = _said(lab)
    assert "The mistake:" in said and "variance" in said
    assert lab.table(1).shape[1] == 4  # the entries that differ on the exposing input

    _type(lab, "rstd * (dxhat - [x + 1)")
    lab.assert_no_exception()
    assert _verdict(lab) is None
    assert "does not match the [" in lab.at.main.error[0].value


def test_examples_and_quantity_change_the_verdict(lab):
    lab.open("Check your derivation")
    lab.click("A broken dx")
    assert _verdict(lab) == "Wrong"
    lab.click("A correct compact dx")
    assert _verdict(lab) == "Correct"
    lab.widget("selectbox", "Gradient").set_value("dgamma")
    lab.run()
    _type(lab, "sum_batch(dy x̂)")
    assert _verdict(lab) == "Correct"


def test_the_link_carries_the_formula(lab):
    lab.open("Check your derivation")
    _type(lab, "rstd (dy - mean(dy))")
    link = lab.link()
    assert (link["formula"], link["quantity"]) == ("rstd (dy - mean(dy))", "dx")


def test_a_link_poses_a_formula(open_link):
    lab = open_link({"formula": "sum(dy x̂)", "quantity": "dgamma"}).open("Check your derivation")
    lab.assert_no_exception()
    assert lab.widget("text_input", TYPED).value == "sum(dy x̂)"
    assert _verdict(lab) == "Wrong"
    assert "wrong axis" in _said(lab)


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({"formula": "x" * (LINK_FORMULA_CHARS + 1)}, f"a link may carry {LINK_FORMULA_CHARS}"),
        ({"formula": "x\u0007"}, "not printable"),
        ({"quantity": "dfoo"}, "must be one of"),
        ({"feps": "2"}, "must be 0 or 1"),
    ],
)
def test_a_bad_derivation_link_is_refused_and_named(params, problem, open_link):
    lab = open_link(params)
    lab.assert_no_exception()
    assert any(problem in w.value for w in lab.at.warning)
    assert lab.state["derive_formula"] == ""
    assert lab.state["derive_target"] == "dx"


BAD = [
    ("foo", "not one the lab knows"),
    ("(x", "never closed"),
    ("x)", "closes no bracket"),
    ("x.__class__", "names with a point"),
    ("np.mean(x, axis=-1)", "write mean(…)"),
    ("\\frac{x}", "type (a)/(b)"),
    ("dx = x", "right-hand side"),
    ("x / (x - x)", "divides by 0"),
    ("x ^ 99", "exponent"),
    ("1e-400 * dxhat", "too small"),
    ("1e-320 * dxhat", "too small"),
    ("1e10 ^ 16 * 1e10 ^ 16 * x", "overflows"),
    ("dx", "cannot use dx"),
    ("<script>alert(1)</script>", "not part of the formula language"),
    ("[link](http://example.com)", "not part of the formula language"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_input_matrix(lab, text, message):
    lab.open("Check your derivation")
    _type(lab, text)
    lab.assert_no_exception()
    errors = [e.value for e in lab.at.main.error]
    assert errors and message in errors[0]
    # The typed text only appears quoted and escaped, never as Markdown.
    assert "<script>" not in errors[0] and "](http" not in errors[0]
    _type(lab, "rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))")
    assert _verdict(lab) == "Correct"  # the page keeps working


def test_a_text_longer_than_the_grammar_reads_never_reaches_the_state(lab):
    lab.open("Check your derivation")
    _type(lab, "rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))")
    kept = lab.state["derive_formula"]
    _type(lab, "x + " * 600 + "x")
    lab.assert_no_exception()
    assert any("longer than 2,000 characters" in e.value for e in lab.at.main.error)
    assert lab.state["derive_formula"] == kept
    assert lab.link()["formula"] == kept
    assert _verdict(lab) == "Correct"  # the kept formula is still judged


@pytest.mark.parametrize(
    "text",
    ["rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))", "rstd (dxhat - mean(dxhat))"],
)
def test_every_probe_is_listed_with_its_whole_reason(lab, text):
    """The probes were a table whose one-line rows cut every reason mid-sentence: each is now a
    line of the list under "Every input it was tried on", verdict and reason whole."""
    from ln_core.derivation import check_formula
    from pages.derive.derivation_view import outcome

    lab.open("Check your derivation")
    _type(lab, text)
    (fold,) = [e for e in lab.at.main.expander if e.label == "Every input it was tried on"]
    listed = "\n".join(m.value for m in fold.markdown).replace("\\", "")
    assert not fold.get("arrow_data_frame")
    s = lab.state
    assert s["upstream"] == "random"
    check = check_formula(text, "dx", s["x"], s["gamma"], s["beta"], s["dout_random"], s["eps"])
    assert len(check.probes) >= 5
    for probe in check.probes:
        # The outcome in plain words first ("wrong, off by 50 %"), then the whole reason.
        assert f"**{probe.label}**: {outcome(probe)}. {probe.reason}" in listed, probe
        assert outcome(probe).startswith(
            {"correct": "right", "wrong": "wrong, off by"}[probe.verdict]
        )


def test_a_right_formula_that_cancels_at_a_large_offset_is_not_wrong(open_link):
    """x = 1e4 + N(0, 1) and dx with the variance written mean(x²) − mean(x)²: the formula is
    right (an identity), float64 only loses digits in it. The page must not call it wrong,
    nor say it is right only on special inputs."""
    rng = np.random.default_rng(0)
    x = 1e4 + rng.standard_normal((2, 8))
    var = "(mean(x^2) - mean(x)^2 + eps)"
    formula = (
        f"(dxhat - mean(dxhat) - (x - mean(x))/sqrt{var} * "
        f"mean(dxhat*(x-mean(x))/sqrt{var}))/sqrt{var}"
    )
    lab = open_link(
        {
            "shape": "rows",
            "n": "2",
            "d": "8",
            "x": ",".join(repr(float(v)) for v in x.ravel()),
            "quantity": "dx",
            "formula": formula,
            "feps": "1",
        }
    ).open("Check your derivation")
    lab.assert_no_exception()
    assert lab.widget("text_input", TYPED).value == formula
    assert _verdict(lab) == "Correct", _said(lab)
    said = _said(lab)
    assert "misses the true value" not in said
    assert "right only on special inputs" not in said


def test_a_slip_of_one_term_is_named_and_an_unknown_one_points_at_its_term(lab):
    lab.open("Check your derivation")
    _type(lab, "dxhat rstd + dvar (x−μ)/N + dmu/N")
    assert "The mistake:** The 2 of 2(x − μ)/N is lost." in _said(lab)
    _type(lab, "rstd (dxhat - mean(dxhat) - 1.3 x̂ mean(dxhat x̂))")
    shown = [i.value for i in lab.at.main.info]
    assert any("The part that differs is the variance term" in i for i in shown), shown


def test_a_documents_mistake_is_a_note_under_its_plain_name(lab):
    lab.open("Check your derivation")
    lab.widget("selectbox", "Gradient").set_value("dbeta")
    lab.run()
    _type(lab, "1 * dout")
    assert "Leaves out the sum over the vectors." in _said(lab)
    assert any(c.value.startswith("Note: The same mistake as") for c in lab.at.main.caption)


def test_n_has_one_meaning_the_formulas_and_the_sidebar_agree(lab):
    lab.open("Check your derivation")
    labels = [t.label for t in lab.at.sidebar.text_input]
    assert "Vectors (rows)" in labels
    assert not any(label.startswith("N ") for label in labels)
    names = "\n".join(m.value for m in lab.at.main.markdown)
    assert "N is D too" in names


def test_the_counterexample_is_shown_as_numbers_and_opens_in_the_stepper(lab, open_link):
    lab.open("Check your derivation")
    _type(lab, "rstd (dxhat - mean(dxhat) + x̂ mean(dxhat x̂))")
    said = _said(lab)
    assert "**Redo it by hand.** The input “D = 3, γ = 1, one-hot upstream gradient, ε = 0”" in said
    inputs = next(t.value for t in lab.at.main.dataframe if "entry 1" in t.value.columns)
    assert list(inputs.index) == ["x", "γ", "β", "dy"]
    assert inputs.loc["x"].tolist() == ["1", "2", "4"]
    assert inputs.loc["dy"].tolist() == ["1", "0", "0"]
    link = next(b.url for b in lab.at.main.get("link_button"))
    assert "/stepper?" in link
    params = dict(parse_qsl(urlsplit(link).query))
    stepper = open_link(params).open("Stepper")
    stepper.assert_no_exception()
    assert not [w.value for w in stepper.at.warning if "link" in w.value.lower()]
    np.testing.assert_array_equal(stepper.state["x"], [[1.0, 2.0, 4.0]])
    np.testing.assert_array_equal(stepper.state["gamma"], [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(stepper.state["dout_edited"], [[1.0, 0.0, 0.0]])
    assert (stepper.state["eps"], stepper.state["upstream"]) == (0.0, "edited")
    # The Stepper's first step shows the mean of that x: (1 + 2 + 4)/3.
    (shown,) = stepper.shown_step()["blocks"][0]["full"]
    assert shown.startswith("2.33333"), shown
