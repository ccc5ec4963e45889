"""Inputs page past its table cap: the tables give way to a note, the rest of the page works."""

from __future__ import annotations


def test_tables_past_the_cap_are_replaced_by_a_note(lab):
    lab.set_sidebar("d", 256).open("Inputs")
    lab.assert_clean()
    editors = [e.key for e in lab.at.data_editor]
    hidden = ("editor_x_", "editor_dout_", "phone_editor_x_", "phone_editor_dout_")
    assert not any(key.startswith(hidden) for key in editors), editors
    notes = [i.value for i in lab.at.main.info]
    assert any("table of x" in n and "D up to 128" in n and "D = 256" in n for n in notes), notes
    buttons = lab.at.main.get("download_button")
    assert len(buttons) == 3  # x, gamma and beta, dout
    assert all(b.proto.ignore_rerun for b in buttons)  # fetching a file reruns nothing


def test_tables_within_the_cap_are_editable(lab):
    lab.set_sidebar("d", 128).open("Inputs")
    lab.assert_clean()
    assert lab.editor("x").shape == lab.state["x"].shape
    assert not lab.at.main.info
