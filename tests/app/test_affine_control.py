"""The layer options (ui/session/affine_control.py): gamma and beta / gamma only / neither, and per
token / per sequence, on the Stepper and the Gradient check, carried by the share link."""

from __future__ import annotations

import numpy as np

AFFINE = "Affine parameters"
PER = "Normalize"


def _choose(lab, label: str, value: str):
    lab.widget("selectbox", label).set_value(value)
    return lab.run()


def _infos(lab) -> list[str]:
    return [i.value for i in lab.at.main.info]


def test_skipping_gamma_changes_the_stepper_and_says_so(lab):
    lab.open("Stepper").step_to(9)  # forward: gx
    with_gamma = lab.step_numbers()
    assert "skipped" not in lab.shown_step()
    _choose(lab, AFFINE, "neither")
    lab.assert_clean()
    without = lab.step_numbers()
    assert lab.differ(with_gamma, without)
    assert "gx = normalized_x  (no gamma)" in lab.shown_step()["skipped"]
    lab.step_to(8)  # forward: normalized_x, which gx now equals
    np.testing.assert_array_equal(lab.step_numbers(), without)


def test_without_beta_the_stepper_shows_no_dbeta(lab):
    lab.open("Stepper").step_to(12)  # backward: dgx, with dbeta beside it
    blocks = len(lab.shown_step()["blocks"])
    _choose(lab, AFFINE, "gamma")
    lab.assert_clean()
    assert len(lab.shown_step()["blocks"]) == blocks - 1
    lab.step_to(10)  # forward: out = gx, without beta
    assert "out = gx  (no beta)" in lab.shown_step()["skipped"]


def test_per_sequence_only_for_tokens_and_it_changes_the_statistics(lab):
    lab.open("Stepper").step_to(1)  # forward: sample_mean
    assert not [r for r in lab.at.main.selectbox if r.label == PER]
    lab.set_sidebar("shape_kind", "tokens")
    lab.open("Stepper").step_to(1)
    per_token = lab.step_numbers()
    _choose(lab, PER, "sequence")
    lab.assert_clean()
    per_sequence = lab.step_numbers()
    # One mean on screen either way: the token's, then its whole sequence's (every digit).
    assert per_token.shape == (1,) and per_sequence.shape == (1,)
    assert lab.differ(per_token, per_sequence)
    lab.step_to(2)  # x_sm: the whole sequence (L, D) is shown
    assert lab.step_numbers().shape == (lab.state["l"] * lab.state["d"],)


def test_the_gradient_check_follows_the_options(lab):
    lab.open("Gradient check")
    assert {"dx", "dgamma", "dbeta"} == {k.split(":")[0] for k in lab.metrics() if ":" in k}
    _choose(lab, AFFINE, "neither")
    lab.assert_clean()
    assert [k.split(":")[0] for k in lab.metrics() if ":" in k] == ["dx"]
    lab.set_sidebar("shape_kind", "tokens").open("Gradient check")
    before = lab.table(0)
    _choose(lab, PER, "sequence")
    lab.assert_clean()
    assert lab.differ(before, lab.table(0))
    assert lab.subheaders()[0].startswith("The staged backward passes")


def test_the_gradient_check_says_when_it_cannot_resolve(lab):
    lab.set_sidebar("d", 2).set_sidebar("eps", 0.0).open("Gradient check")  # dx is 0 exactly
    lab.assert_clean()
    assert lab.subheaders()[0].startswith("The staged backward does not fail; dx: cannot resolve")
    (advice,) = [text for text in _infos(lab) if "Cannot resolve" in text]
    assert advice.startswith("dx: Cannot resolve: ")
    assert "Try D ≥ 3" in advice
    assert "dx: cannot resolve" in lab.metrics()


def test_the_options_travel_in_the_link(lab, open_link):
    lab.set_sidebar("shape_kind", "tokens").open("Stepper").step_to(2)
    _choose(lab, AFFINE, "gamma")
    _choose(lab, PER, "sequence")
    link = lab.link()
    assert link["affine"] == "gamma" and link["per"] == "sequence"
    fresh = open_link(link)
    fresh.assert_clean()
    assert fresh.state["affine"] == "gamma" and fresh.state["per"] == "sequence"
    fresh.open("Stepper")
    assert fresh.widget("selectbox", AFFINE).value == "gamma"
    assert fresh.widget("selectbox", PER).value == "sequence"
    np.testing.assert_array_equal(fresh.table(0), lab.table(0))


def test_a_tampered_option_falls_back_with_a_warning(open_link):
    fresh = open_link({"affine": "<b>none</b>", "per": "batch"})
    fresh.assert_no_exception()
    assert fresh.state["affine"] == "both" and fresh.state["per"] == "token"
    (warning,) = [w for w in fresh.warnings() if "not usable" in w]
    assert "must be one of both, gamma, neither" in warning
    assert "must be one of token, sequence" in warning


def test_per_sequence_too_long_for_the_gradient_check_is_refused_visibly(lab):
    lab.set_sidebar("shape_kind", "tokens").set_sidebar("l", 16).set_sidebar("d", 64)
    lab.open("Gradient check")
    per_token = lab.table(0)
    _choose(lab, PER, "sequence")
    lab.assert_no_exception()
    (warning,) = [w for w in lab.warnings() if "Per sequence" in w]
    assert "L x D = 1024" in warning and "at most 512" in warning
    np.testing.assert_array_equal(lab.table(0), per_token)
    lab.open("Stepper").step_to(1)  # the Stepper takes it: one value per sequence
    assert lab.step_numbers().shape == (1,)
    assert lab.table(0).shape == (lab.state["b"], 1)
    assert not [w for w in lab.warnings() if "Per sequence" in w]


def test_the_sidebar_check_follows_the_pages_per_sequence_choice(open_link):
    # eps = 0 and a constant first token: no output per token, one per sequence.
    link = {"shape": "tokens", "b": "1", "l": "2", "d": "2", "eps": "0", "x": "1,1,2,3"}
    lab = open_link({**link, "per": "sequence"})
    lab.open("Stepper")
    assert not lab.errors("sidebar"), lab.errors("sidebar")
    lab.assert_clean()
    lab.open("Jacobian")  # a page that always normalizes per token
    assert lab.errors("sidebar"), "the per-token page's check should refuse the constant token"


def test_per_sequence_too_long_for_the_export_says_its_files_are_per_token(open_link):
    # A sequence of L x D = 4096 numbers is one group: the bundle's gradient check would take
    # about a second; the Export page takes groups of up to its D, and says so.
    lab = open_link({"shape": "tokens", "b": "1", "l": "4", "d": "1024", "per": "sequence"})
    lab.open("Export and share")
    lab.assert_no_exception()
    (warning,) = [w for w in lab.warnings() if "Per sequence" in w]
    assert "L x D = 4096" in warning and "at most 1024" in warning
    # A sequence that fits keeps per sequence, with no warning.
    small = open_link({"shape": "tokens", "b": "2", "l": "3", "d": "8", "per": "sequence"})
    small.open("Export and share")
    small.assert_clean()
    assert not [w for w in small.warnings() if "Per sequence" in w]
