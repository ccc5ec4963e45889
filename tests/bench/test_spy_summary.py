"""bench/spy.py's reading of py-spy's collapsed stacks: script runs only, inclusive shares."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.spy import frame_name, top_frames  # noqa: E402

RUN = "_run_script (/v/site-packages/streamlit/runtime/scriptrunner/script_runner.py:600)"
APP = f"<module> ({ROOT}/app.py:33)"
DRAW = f"draw ({ROOT}/ui/session/sidebar.py:40)"
PLOT = "to_json (/v/site-packages/plotly/io/_json.py:10)"


def test_frame_names_drop_line_numbers_and_install_paths():
    assert frame_name(DRAW) == "draw (ui/session/sidebar.py)"
    assert frame_name(PLOT) == "to_json (plotly/io/_json.py)"


def test_shares_are_inclusive_over_script_runs_only():
    collapsed = "\n".join(
        [
            f"{RUN};{APP};{DRAW} 30",
            f"{RUN};{APP};{PLOT} 10",
            f"{RUN};{APP};{DRAW};{DRAW} 10",  # recursion counts once
            "select (/usr/lib/python3.11/selectors.py:468) 500",  # the event loop: not a run
        ]
    )
    total, frames = top_frames(collapsed, 10)
    shares = dict(frames)
    assert total == 50
    assert shares["<module> (app.py)"] == 1.0
    assert shares["draw (ui/session/sidebar.py)"] == 0.8
    assert shares["to_json (plotly/io/_json.py)"] == 0.2
    assert not any("script_runner" in name for name in shares)  # the run loop is left out
