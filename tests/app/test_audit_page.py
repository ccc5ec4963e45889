"""Derivation audit page: the summary counts what the table shows and follows the inputs."""

from __future__ import annotations

import numpy as np


def test_audit_summary_counts_its_wrong_formulas_and_follows_the_seed(lab):
    lab.open("Derivation audit")
    frame = lab.at.main.dataframe[0].value
    heading = lab.subheaders()[0]
    wrong = int((frame["verdict"] == "wrong").sum())
    assert heading == f"{len(frame)} formulas checked: {wrong} wrong on these inputs"
    assert len(lab.at.main.expander) == len(frame)
    assert len(frame) > 0 and set(frame["verdict"]) <= {"correct", "wrong"}

    lab.set_sidebar("seed", 5)
    lab.assert_clean()
    after = lab.at.main.dataframe[0].value
    assert not np.array_equal(frame["error"].to_numpy(), after["error"].to_numpy())
