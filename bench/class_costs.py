"""What a live class costs its server per student: one poll, one followed step, one vote.

    python -m bench.class_costs [--polls 300] [--steps 20]

One fresh app process (one SQLite store in a temporary folder), an instructor on the Stepper and
one student, each a websocket session (bench/ws_client.py). Measured as the app process's own
CPU time (from /proc) over many repetitions, so other load on the machine changes little:
- a poll: the run the student's tab makes on its timer (ui/live/student.py), nothing new;
- a followed step: the instructor clicks Next and their tab's timer publishes the view (its CPU
  measured alone and subtracted), then the student's polls until their lab shows the step;
- a vote: choosing an option and clicking Vote (two runs of the bar, as a browser sends them),
  by 20 students.
These are the numbers bench_class.py's 100 students multiply: 100 students polling every
POLL_S seconds, and 100 catching up within a second of a step. The app process's CPU counts in
10 ms ticks (/proc), so each figure is an average over many runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile

from bench.bench_class import CODE, HEADING, Tally, Teacher, parse_options
from bench.bench_load import tree_cpu_seconds
from bench.results import table, write_result
from bench.ws_client import Session, widget_state
from deploy.replicas import Replicas


async def measure(port: int, pid: int, polls: int, steps: int) -> dict[str, float]:
    def cpu_ms() -> float:
        return tree_cpu_seconds([pid]) * 1000

    options = parse_options([])
    teacher, student = Teacher(port, options, Tally()), Session(port)
    await teacher.session.connect()
    await teacher.open("class")
    started = await teacher.click("Start a class")
    found = next(CODE.search(t) for t in started.texts if CODE.search(t))
    await teacher.open("stepper")
    (publisher,) = teacher.timers
    await student.connect()
    await student.rerun("", query_string=f"join={found.group(1)}{found.group(2)}")
    watcher = next(iter(student.auto_reruns))
    for _ in range(20):  # warm: the store's connections, the caches
        await student.rerun(fragment_id=watcher)
    before = cpu_ms()
    for _ in range(polls):
        await student.rerun(fragment_id=watcher)
    poll = (cpu_ms() - before) / polls

    instructor = follow = 0.0
    for number in range(steps):
        forward = number % 2 == 0  # step 1 to 2 and back: every step has the same cost
        before = cpu_ms()
        await teacher.click("Next" if forward else "Prev")
        await teacher.session.rerun(fragment_id=publisher)  # the tab's timer publishes it
        after_click = cpu_ms()
        instructor += after_click - before
        target = 2 if forward else 1
        for _ in range(10):
            result = await student.rerun(fragment_id=watcher)
            shown = next((m for m in map(HEADING.match, result.texts) if m), None)
            if shown is not None and int(shown.group(1)) == target:
                break
        else:
            raise RuntimeError(f"the student did not follow to step {target}")
        follow += cpu_ms() - after_click
    voters = [Session(port) for _ in range(20)]  # a vote each: one browser may send 6 in 10 s
    for voter in voters:
        await voter.connect()
        await voter.rerun("", query_string=f"join={found.group(1)}{found.group(2)}")
    await teacher.open("class")
    await teacher.click("Ask")
    await asyncio.sleep(0.2)
    for voter in voters:  # each tab's look finds the question and shows it
        await voter.rerun(fragment_id=next(iter(voter.auto_reruns)))
    before = cpu_ms()
    for voter in voters:
        radio = voter.shown["Your answer"]
        choice = widget_state(radio, radio.proto.options[0])
        await voter.rerun(fragment_id=radio.fragment_id, widget_states=[choice])
        button = voter.shown["Vote"]
        states = [choice, widget_state(button, True)]
        result = await voter.rerun(fragment_id=button.fragment_id, widget_states=states)
        if not any("Your vote is counted" in t for t in result.texts):
            raise RuntimeError("the vote was not acknowledged")
    vote = (cpu_ms() - before) / len(voters)
    for voter in voters:
        await voter.close()
    await teacher.session.close()
    await student.close()
    return {
        "poll": poll, "follow": follow / steps, "next": instructor / steps, "vote": vote
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--polls", type=int, default=300)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="lnlab-costs-") as folder:
        env = {"LNLAB_CLASS_DB": f"sqlite:///{folder}/classes.sqlite3"}
        with Replicas(1, env=env) as group:
            ms = asyncio.run(measure(group.port, group.app_pids[0], args.polls, args.steps))
    rows = [
        ["a poll (nothing changed)", f"{ms['poll']:.1f}"],
        ["a followed step (the student's runs until it shows)", f"{ms['follow']:.1f}"],
        ["the instructor's Next and its publishing (for scale)", f"{ms['next']:.1f}"],
        ["a vote (choose, then Vote)", f"{ms['vote']:.1f}"],
    ]
    for row in rows:
        print(" | ".join(row))
    write_result(
        "class_costs",
        "5f. What a live class costs the server per student",
        order=5.5,
        text=(
            f"`python -m bench.class_costs --polls {args.polls} --steps {args.steps}`: server "
            f"CPU ms (the app process's own, from /proc) per action of one student. Load "
            f"average at the start {load:.1f}."
        ),
        tables=[table(["action", "server CPU ms"], rows)],
        raw={"ms": ms, "polls": args.polls, "steps": args.steps},
    )


if __name__ == "__main__":
    main()
