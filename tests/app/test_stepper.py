"""The stepper: twenty steps in order, and how a step the browser moved to reaches the session.

The browser steps through the twenty steps the page wrote out (pages/stepper/walk.py); its
buttons, keys and slider are tested in tests/browser/test_stepper.py.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

# The ten nodes' order is pinned by tests/core/test_forward.py.
from ln_core.forward import NODE_NAMES

# Step n computes NODE_NAMES[n - 1] forward for n <= 10, then the gradients from out back.
FORWARD = [("forward", name) for name in NODE_NAMES]
EXPECTED = FORWARD + [("backward", name) for name in reversed(NODE_NAMES)]


def _named(text: str, prefix: str) -> set[str]:
    """The node names that appear in `text` as whole words, each written prefix + name."""
    return {name for name in NODE_NAMES if re.search(rf"(?<![\w]){prefix}{name}(?![\w])", text)}


def _assert_heading(lab, number: int) -> None:
    """The step the page opens on is `number`, and its heading names its node and direction."""
    direction, node = EXPECTED[number - 1]
    walked = lab.walk()
    assert walked["step"] == number, walked["step"]
    heading = walked["steps"][number - 1]["heading"]
    assert f"Step {number} of 20" in heading, heading
    assert direction in heading, heading
    if direction == "forward":
        assert _named(heading, "") == {node}, heading
    else:
        assert _named(heading, "d") == {node}, heading


def _numbers_shown(entry: dict) -> bool:
    return bool(entry.get("blocks")) and all(block["shown"] for block in entry["blocks"])


def test_the_browser_gets_all_twenty_steps_in_order(lab):
    lab.open("Stepper")
    lab.assert_clean()
    _assert_heading(lab, 1)
    walked = lab.walk()["steps"]
    assert [entry["number"] for entry in walked] == list(range(1, 21))
    for number, entry in enumerate(walked, start=1):
        direction, node = EXPECTED[number - 1]
        assert entry["node"] == node and entry["backward"] == (direction == "backward")
        assert _numbers_shown(entry), f"step {number} shows no numbers"
        assert entry["heading"].startswith(f"Step {number} of 20")
    assert re.search(r"(?<!\w)dx(?!\w)", walked[-1]["heading"]), walked[-1]["heading"]


def test_the_twenty_steps_go_to_the_browser_as_one_text_written_once_per_run(lab):
    # A class's step reruns the walk alone with the same data for each of a hundred students:
    # as a dict, Streamlit wrote its 80 kB out anew each time (two thirds of the run).
    lab.open("Stepper")
    (component,) = [
        e for e in lab.at.main.get("bidi_component") if e.proto.id.endswith("stepper_walk")
    ]
    sent = json.loads(component.proto.json)
    assert set(sent) == {"version", "sync", "presenter", "step", "walk"}
    assert isinstance(sent["walk"], str) and len(json.loads(sent["walk"])["steps"]) == 20


def test_a_step_the_browser_moved_to_is_the_sessions_on_the_next_run(lab):
    lab.open("Stepper")
    for number in (2, 12, 11, 10, 20, 1):
        lab.move_to(number)
        lab.assert_clean()
        assert lab.state["step"] == number
        _assert_heading(lab, number)
    assert lab.link()["step"] == "1"


def test_last_step_checks_dsample_mean_and_dx(lab):
    lab.open("Stepper").step_to(20)
    lab.assert_clean()
    checks = lab.shown_step()["checks"]
    lines = [check["line"] for check in checks]
    assert len(lines) == 2 and " dsample_mean:" in lines[0] and " dx:" in lines[1], lines
    assert all(check["status"] != "fail" for check in checks)
    assert all(check["table"]["rows"] for check in checks)


def test_every_backward_step_has_a_one_line_verdict_and_forward_steps_none(lab):
    lab.open("Stepper")
    for entry in lab.walk()["steps"]:
        assert bool(entry["checks"]) == entry["backward"], entry["number"]
        for check in entry["checks"]:
            assert "\n" not in check["line"] and check["line"].split(": ")[1] in (
                "Pass",
                "Fail",
                "Cannot resolve",
            ), check["line"]
            assert check["why"].startswith("Why we can say so")


def test_step_survives_a_page_switch(lab):
    lab.open("Stepper")
    lab.move_to(13)
    _assert_heading(lab, 13)
    lab.open("Inputs")
    lab.assert_clean()
    lab.open("Stepper")
    lab.assert_clean()
    assert lab.state["step"] == 13
    _assert_heading(lab, 13)


def test_a_step_moved_to_just_before_a_page_switch_is_kept(lab):
    """The hidden control's value arrives with the page switch itself (app.py adopts it)."""
    lab.open("Stepper")
    lab.state["w_step_browser"] = 9
    lab.open("Inputs")
    assert lab.state["step"] == 9
    assert lab.link()["step"] == "9"


def test_one_vector_walks_all_twenty_steps(lab):
    lab.set_sidebar("shape_kind", "vector")
    lab.open("Stepper")
    lab.assert_clean()
    assert all(_numbers_shown(entry) for entry in lab.walk()["steps"])
    for number in (1, 11, 20):
        lab.move_to(number)
        lab.assert_clean()
        _assert_heading(lab, number)


def test_token_batch_walks_all_twenty_steps(lab):
    lab.set_sidebar("shape_kind", "tokens")
    assert lab.state["x"].ndim == 3
    lab.open("Stepper")
    lab.assert_clean()
    assert all(_numbers_shown(entry) for entry in lab.walk()["steps"])
    for number in (1, 11, 20):
        lab.move_to(number)
        lab.assert_clean()
        _assert_heading(lab, number)


def _current(entry: dict) -> list[str]:
    """The boxes the step lights as its own (and x where the last step finishes dx)."""
    return [n for n, status in entry["status"].items() if status in ("current", "finished")]


@pytest.mark.parametrize("number", [1, 5, 10, 11, 19])
def test_stepper_graph_highlights_the_current_node(lab, number):
    lab.open("Stepper")
    entry = lab.walk()["steps"][number - 1]
    node = NODE_NAMES[number - 1] if number <= 10 else NODE_NAMES[20 - number]
    assert _current(entry) == [node]


def test_stepper_graph_changes_with_the_step(lab):
    lab.open("Stepper")
    first, second = lab.walk()["steps"][:2]
    assert _current(first) == ["sample_mean"] and _current(second) == ["x_sm"]
    assert first["active"] != second["active"]


def test_stepper_last_step_also_highlights_x(lab):
    lab.open("Stepper")
    assert _current(lab.walk()["steps"][19]) == ["sample_mean", "x"]


def _frame_formats(frame) -> dict:
    columns = json.loads(frame.proto.columns)
    return {name: column["type_config"].get("format") for name, column in columns.items()}


def test_the_last_step_shows_why_dx_adds_up_to_zero_with_the_quiz_off(lab):
    lab.open("Stepper").step_to(20)
    lab.assert_clean()
    assert lab.state["quiz"] is False
    (sums,) = [f for f in lab.at.main.dataframe if list(f.value.columns) == ["Σ dx"]]
    assert len(sums.value) == lab.state["x"].shape[0]  # one sum per row
    assert float(abs(sums.value.to_numpy()).max()) < 1e-12
    assert "largest |Σ dx| / Σ |dx|" in lab.metrics()
    text = " ".join(m.value for m in lab.at.main.markdown)
    assert "Why the entries of dx add up to 0" in text and "sample_mean" in text
    links = [link.proto for link in lab.at.main.get("page_link")]
    assert any(link.page == "jacobian" and "J · 1 = 0" in link.label for link in links)


def test_a_hidden_jacobian_page_is_not_linked_from_the_last_step(open_link):
    lab = open_link({"hide": "jacobian", "step": "20"}).open("Stepper")
    lab.assert_clean()
    assert not [link for link in lab.at.main.get("page_link") if "J · 1" in link.proto.label]


def test_result_tables_round_numbers_for_display_and_keep_every_digit(lab):
    lab.open("Stepper").step_to(20)
    frames = [f for f in lab.at.main.dataframe if len(f.value.columns) == lab.state["d"]]
    assert frames
    for frame in frames:
        assert set(_frame_formats(frame).values()) == {"%.4g"}, _frame_formats(frame)
    dx = frames[-2].value.to_numpy()  # dx's table, then dgamma and dbeta
    assert dx.dtype == np.float64 and np.any(dx != np.round(dx, 6))  # the exact values stay
