"""The guided path: the Overview lists every page in order, every page ends with what to try
and a link to the next page, the links lead where they say, and the predict-then-check answers
are the lab's own numbers."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import ln_core
from teaching.presets import PRESETS
from ui.lesson import guide
from ui.session import share

ROOT = Path(__file__).resolve().parents[2]
CHECK = "Check my prediction"
PATH = [stop.url_path for stop in guide.PATH]
NUMBER = r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"


def _links(lab) -> list:
    return [link.proto for link in lab.at.main.get("page_link")]


def _tries(lab) -> list[str]:
    """The bullet lines of the last list on the page (the guide's "What to try")."""
    bullets = [m.value for m in lab.at.main.markdown if m.value.startswith("- ")]
    assert bullets, "no list of things to try"
    return bullets[-1].splitlines()


def _script(url_path: str) -> str:
    name = url_path or "home"
    return f"pages/{name}/{name}.py"


def _go(lab, url_path: str):
    lab.at.switch_page(_script(url_path))
    return lab.run()


def _predict(lab, url_path: str):
    """Choose the first prediction offered: the answer is shown only after one."""
    assert lab.widget("button", CHECK).disabled, "the answer shows without a prediction"
    radio = lab.at.main.radio(key=f"guess_guide_{url_path or 'home'}")
    radio.set_value(radio.options[0])
    return lab.run()


def test_the_path_holds_every_page_script_once():
    # A lab page's script is the one its folder is named after (pages/<name>/<name>.py).
    scripts = sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*/*.py") if p.stem == p.parent.name
    )
    assert sorted(stop.script for stop in guide.PATH) == scripts
    assert len(set(PATH)) == len(PATH)


def test_a_link_hides_only_stops_of_the_path_and_never_the_overview():
    # app.py keeps a hidden page reachable through its stop's script (guide.out_of_lesson).
    assert set(share.LESSON_PAGES) == set(PATH) - {""}


def test_overview_lists_every_page_in_order_with_what_it_teaches(lab):
    listed = _links(lab)[: len(PATH)]
    assert [link.page for link in listed] == PATH
    assert all(link.label for link in listed), "a listed page has no title"
    # Said on each link (its tooltip), so the first screen holds the path itself.
    said = [c.value for c in lab.at.main.caption] + [link.help for link in listed]
    for stop in guide.PATH:
        assert stop.teaches in said, f"the Overview does not say what {stop.url_path!r} teaches"


def test_a_hidden_page_leaves_the_path(open_link):
    lab = open_link({"hide": "jacobian"})
    lab.assert_clean()
    # the Overview's join box links the Class page too, which is not on the path
    on_path = [link.page for link in _links(lab)[:-1] if link.page != "class"]
    assert on_path == [p for p in PATH if p != "jacobian"]
    _go(lab, "stepper")
    assert _links(lab)[-1].page == "gradcheck"


def test_overview_says_what_each_classroom_preset_demonstrates(lab):
    text = "\n".join(m.value for m in lab.at.main.markdown)
    for preset in PRESETS.values():
        assert "Demonstrates" in preset.description, preset.name
        assert f"**{preset.name}**: {preset.description}" in text


def test_following_the_next_links_tours_every_page_and_returns(lab):
    titles = {link.page: link.label for link in _links(lab)[: len(PATH)]}
    visited, here = [], ""
    for _ in PATH:
        visited.append(here)
        lab.assert_clean()
        assert "What to try" in lab.expanders(), f"no guide at the foot of {here!r}"
        assert _tries(lab) == [f"- {line}" for line in guide.STOPS[here].tries]
        link = _links(lab)[-1]
        if link.page == "":
            assert link.label.startswith("Back to the start")
            break
        assert link.label == f"Next: {titles[link.page]}", link.label
        assert link.help == guide.STOPS[link.page].teaches
        here = link.page
        _go(lab, here)
    assert visited == PATH


@pytest.mark.parametrize("url_path", ["", "inputs", "stepper", "jacobian", "gradcheck", "residual"])
def test_the_answer_appears_only_when_asked_for(lab, url_path):
    _go(lab, url_path)
    before = len(lab.at.main.info)
    _predict(lab, url_path).click(CHECK)
    lab.assert_clean()
    assert url_path in lab.state["guide_checked"]
    assert CHECK not in [b.label for b in lab.at.main.button]
    infos = [i.value for i in lab.at.main.info]
    assert len(infos) == before + 1
    assert re.search(NUMBER, infos[-1]), f"the answer quotes no number: {infos[-1]}"


def _answer(lab, url_path: str) -> str:
    _predict(_go(lab, url_path), url_path).click(CHECK)
    lab.assert_clean()
    return lab.at.main.info[-1].value


def test_stepper_answer_names_the_larger_path_of_dx_sm(lab):
    s = lab.state
    cache = ln_core.forward(s["x"], s["gamma"], s["beta"], float(s["eps"]))
    grads = ln_core.backward(s["dout_random"], cache)
    direct = float(np.abs(grads.dx_sm_via_normalized_x).sum())
    square = float(np.abs(grads.dx_sm_via_sq_xsm).sum())
    answer = _answer(lab, "stepper")
    assert answer.startswith("from normalized_x" if direct >= square else "from sq_xsm")
    assert f"{direct:.3g}" in answer and f"{square:.3g}" in answer


def test_overview_answer_is_the_labs_own_refusal_of_eps_zero(lab):
    answer = _answer(lab, "")
    assert "no defined output" in answer and "eps" in answer


def test_jacobian_answer_says_a_shift_moves_nothing(lab):
    answer = _answer(lab, "jacobian")
    assert answer.startswith("Not at all")
    ones = float(re.search(rf"max \|J @ 1\| = ({NUMBER})", answer).group(1))
    assert ones < 1e-12


def test_inputs_answer_counts_every_entry_of_the_vector(lab):
    d = lab.state["d"]
    assert _answer(lab, "inputs").startswith(f"{d} of the {d} inputs get a gradient")


def test_gradcheck_answer_follows_eps(lab):
    """At eps = 0 the eps-after-sqrt bug is the identical formula, so no check can tell it;
    at eps = 0.5 every bug is caught."""
    lab.set_sidebar("eps", 0.0)
    assert _answer(lab, "gradcheck").startswith("It does not catch: eps after sqrt (cannot tell")
    lab.set_sidebar("eps", 0.5)  # the answer stays open and follows the inputs
    lab.assert_clean()
    assert lab.at.main.info[-1].value.startswith("None: it catches all five.")
