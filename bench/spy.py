"""Where a loaded server spends its script runs: py-spy samples a fresh server from outside
while bench_load's `pages` scenario keeps it busy.

    python -m bench.spy --sessions 60 --seconds 20            # top 30 lines, also to results/

Prints the functions that were on the script threads' stacks in the largest share of samples
(inclusive: a function's callees count towards it), with Streamlit's own run loop left out;
only samples of the thread holding the GIL count, so the shares are shares of CPU.
Needs py-spy (requirements-bench.txt) and the right to trace the server (root, or
ptrace_scope 0).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench.bench_load import Options, Setup, run_phase
from bench.local_server import LocalServer
from bench.results import write_result

ROOT = Path(__file__).resolve().parents[1]
# Frames every script run passes through: they say nothing about where its time goes.
RUN_LOOP = (
    "threading.py", "script_runner.py", "exec_code.py", "navigation/page.py",
    "metrics_util.py", "<frozen",
)  # fmt: skip


def py_spy() -> str:
    # The venv's own first (pip installs it beside python), then PATH.
    found = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if found is None:
        raise SystemExit("py-spy not found: pip install -r requirements-bench.txt")
    return found


def frame_name(frame: str) -> str:
    """'f (/…/site-packages/plotly/x.py:12)' -> 'f (plotly/x.py)'; project files from the root."""
    function, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    for prefix in (f"{ROOT}/", "site-packages/"):
        if prefix in path:
            path = path.split(prefix, 1)[1]
    return f"{function} ({path})"


def top_frames(collapsed: str, count: int) -> tuple[int, list[tuple[str, float]]]:
    """Script-thread samples in py-spy's collapsed format, and the `count` frames on most.

    Each line is 'frame;frame;... samples'. Returns (samples, [(frame, share 0..1)]).
    """
    inclusive: Counter[str] = Counter()
    total = 0
    for line in collapsed.splitlines():
        stack, _, samples = line.rpartition(" ")
        if "script_runner.py" not in stack:
            continue  # not a script run: the server's event loop, websocket writes
        total += int(samples)
        names = {frame_name(f) for f in stack.split(";") if not any(r in f for r in RUN_LOOP)}
        for name in names:
            inclusive[name] += int(samples)
    return total, [(name, n / total) for name, n in inclusive.most_common(count)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--label", default="now", help="names the result (e.g. before, after)")
    args = parser.parse_args(argv)
    setup = Setup(replicas=0, sessions=args.sessions)
    options = Options((setup,), "pages", args.seconds, 2.0, 30.0)
    with LocalServer(launcher=True) as server, tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "profile.txt"
        spy = subprocess.Popen(
            # --gil: only the thread holding the GIL, i.e. where the server's CPU goes, not
            # script threads queueing for their turn.
            [py_spy(), "record", "--pid", str(server.pid), "--format", "raw", "--rate", "200",
             "--gil",
             "--duration", str(int(args.seconds + 6)), "--output", str(raw), "--nonblocking"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        phase = asyncio.run(run_phase(server.port, [server.pid], setup, options))
        spy.wait(timeout=args.seconds + 60)
        total, frames = top_frames(raw.read_text(), args.top)
    lines = [f"{share:6.1%}  {name}" for name, share in frames]
    block = f"script-thread samples: {total}\n" + "\n".join(lines)
    print(block)
    write_result(
        f"spy_{args.label}",
        f"5d. Profile of a loaded server ({args.label})",
        order=5.4,
        text=(
            f"`python -m bench.spy --sessions {args.sessions} --seconds {args.seconds:g} "
            f"--label {args.label}`: py-spy on the server while {args.sessions} sessions re-run "
            f"random pages every 2 s (steady p95 {phase.p95_ms:.0f} ms, {phase.errors} errors). "
            "Share of the script threads' GIL-holding samples with each function on the stack."
        ),
        tables=[],
        blocks=[block],
        raw={"samples": total, "frames": frames},
    )


if __name__ == "__main__":
    main()
