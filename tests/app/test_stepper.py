"""The stepper: twenty steps in order, and every way of moving between them."""

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
    direction, node = EXPECTED[number - 1]
    heading = lab.subheaders()[0]
    assert f"Step {number} of 20" in heading, heading
    assert direction in heading, heading
    if direction == "forward":
        assert _named(heading, "") == {node}, heading
    else:
        assert _named(heading, "d") == {node}, heading


def _buttons(lab) -> dict[str, bool]:
    """Prev and Next, label -> disabled."""
    return {b.label: b.disabled for b in lab.at.main.button if b.label in ("Prev", "Next")}


def test_next_walks_all_twenty_steps_in_order(lab):
    lab.open("Stepper")
    lab.assert_clean()
    _assert_heading(lab, 1)
    assert _buttons(lab) == {"Prev": True, "Next": False}
    for number in range(2, 21):
        lab.click("Next")
        lab.assert_clean()
        assert lab.state["step"] == number
        _assert_heading(lab, number)
        assert lab.at.main.dataframe, f"step {number} shows no table"
    heading = lab.subheaders()[0]
    assert re.search(r"(?<!\w)dx(?!\w)", heading), heading
    assert _buttons(lab) == {"Prev": False, "Next": True}


def test_last_step_checks_dsample_mean_and_dx(lab):
    lab.open("Stepper").step_to(20)
    lab.assert_clean()
    checks = [m.label for m in lab.at.main.metric if "analytic vs numerical" in m.label]
    assert checks == [
        "dsample_mean: analytic vs numerical",
        "dx: analytic vs numerical",
    ]
    assert all(m.value != "wrong" for m in lab.at.main.metric)


def test_prev_goes_back(lab):
    lab.open("Stepper").step_to(12)
    lab.click("Prev")
    lab.assert_clean()
    assert lab.state["step"] == 11
    _assert_heading(lab, 11)
    lab.click("Prev")
    assert lab.state["step"] == 10
    _assert_heading(lab, 10)


def test_next_then_prev_returns_to_the_first_step(lab):
    lab.open("Stepper")
    lab.click("Next")
    assert _buttons(lab)["Prev"] is False
    lab.click("Prev")
    lab.assert_clean()
    _assert_heading(lab, 1)
    assert _buttons(lab)["Prev"] is True


def test_slider_moves_the_step(lab):
    lab.open("Stepper")
    lab.widget("slider", "Step").set_value(7)
    lab.run()
    lab.assert_clean()
    assert lab.state["step"] == 7
    _assert_heading(lab, 7)
    assert lab.widget("selectbox", "Jump to").value == 7


def test_jump_to_moves_the_step(lab):
    lab.open("Stepper")
    lab.widget("selectbox", "Jump to").set_value(15)
    lab.run()
    lab.assert_clean()
    assert lab.state["step"] == 15
    _assert_heading(lab, 15)
    assert lab.widget("slider", "Step").value == 15
    # The buttons move on from where the jump landed.
    lab.click("Next")
    _assert_heading(lab, 16)


def test_step_survives_a_page_switch(lab):
    lab.open("Stepper")
    for _ in range(3):
        lab.click("Next")
    lab.widget("slider", "Step").set_value(13)
    lab.run()
    _assert_heading(lab, 13)
    lab.open("Inputs")
    lab.assert_clean()
    lab.open("Stepper")
    lab.assert_clean()
    assert lab.state["step"] == 13
    _assert_heading(lab, 13)
    assert lab.widget("slider", "Step").value == 13
    assert lab.widget("selectbox", "Jump to").value == 13


def test_one_vector_walks_all_twenty_steps(lab):
    lab.set_sidebar("shape_kind", "vector")
    lab.open("Stepper")
    for number in range(1, 21):
        lab.step_to(number)
        lab.assert_clean()
        _assert_heading(lab, number)


def test_token_batch_walks_all_twenty_steps(lab):
    lab.set_sidebar("shape_kind", "tokens")
    assert lab.state["x"].ndim == 3
    lab.open("Stepper")
    for number in range(1, 21):
        lab.step_to(number)
        lab.assert_clean()
        _assert_heading(lab, number)


def _current_lines(dot: str) -> list[str]:
    """The node statements drawn with the thick border of the current step."""
    return [line.strip() for line in dot.splitlines() if "penwidth=3" in line]


@pytest.mark.parametrize("number", [1, 5, 10, 11, 19])
def test_stepper_graph_highlights_the_current_node(lab, number):
    lab.open("Stepper").step_to(number)
    lab.assert_clean()
    dot = lab.graph()
    node = NODE_NAMES[number - 1] if number <= 10 else NODE_NAMES[20 - number]
    lines = _current_lines(dot)
    assert len(lines) == 1, lines
    assert re.match(rf"{node} \[", lines[0]), (node, lines)
    assert 'fillcolor="#ffe066"' in lines[0]
    assert dot.count('fillcolor="#ffe066"') == 1


def test_stepper_graph_changes_with_the_step(lab):
    lab.open("Stepper")
    first = lab.graph()
    lab.click("Next")
    second = lab.graph()
    assert first != second
    assert _current_lines(first)[0].startswith("sample_mean [")
    assert _current_lines(second)[0].startswith("x_sm [")


def test_stepper_last_step_also_highlights_x(lab):
    lab.open("Stepper").step_to(20)
    lab.assert_clean()
    lines = _current_lines(lab.graph())
    assert [line.split(" ")[0] for line in lines] == ["sample_mean", "x"]


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
