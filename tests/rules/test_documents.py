"""The two documents a newcomer opens first stay short enough to read (issue 40): README.md
opens with its title, one paragraph and the two commands; the rest of what it once held lives
in docs/. BENCHMARKS.md is the table of figures against goals and how to run them; the runs
that led there live in git's history of the file.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README_MOST = 10_000
BENCHMARKS_MOST = 20_000


def test_the_readme_opens_with_its_title_a_paragraph_and_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text) < README_MOST, f"README.md has {len(text)} characters; move detail to docs/"
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    assert blocks[0].startswith("# ") and "\n" not in blocks[0].strip(), blocks[0]
    assert not blocks[1].startswith(("#", "```")), "a paragraph follows the title"
    commands = blocks[2].strip().splitlines()
    assert commands[0] == "```" and commands[-1] == "```", blocks[2]
    assert [line.split()[0] for line in commands[1:-1]] == ["./run.sh", "./test.sh"], commands


def test_the_benchmarks_are_a_table_of_goals_and_how_to_run_them():
    text = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert len(text) < BENCHMARKS_MOST, (
        f"BENCHMARKS.md has {len(text)} characters: keep the figures against their goals, "
        "let git keep the history"
    )
    assert "| figure | goal | now | met? | command |" in text
    assert "## Reproduce" in text
