"""A cluster rehearsal on one machine: a live class across hosts, one of them cut off mid-vote.

Hosts are network namespaces joined by one switch (netns_kit.py, addresses 10.231.0.x that exist
only inside them): `lb` runs HAProxy with the configuration `./run.sh --replicas` writes
(deploy.replicas.haproxy_config: cookie affinity, health checks); `app0` and `app1` each run one
`python -m ui.server.launch`, with the same cookie secret and LNLAB_CLASS_DB naming the database
on `db`, which runs Debian's PostgreSQL 15. An instructor and 30 students speak Streamlit's
websocket protocol (bench/ws_client.py, keeping cookies as a browser does) from host `lb`,
through HAProxy, with bench/bench_class.py's Student: they join, follow three steps and vote.

Mid-vote, the cable of the app host without the instructor is pulled: a third of its students
have voted, a third click Vote at that moment, a third vote later. HAProxy's health check marks
the host down and closes its websockets; each of its students reconnects (its cookies keep its
browser and class), lands on the other host and shows its vote still counted, or votes there.
Every vote a student saw acknowledged must be in the store, for that student's browser, and no
other. Then PostgreSQL restarts: meanwhile the Class page says the class server cannot be
reached; once it is back, the instructor reveals the answer and every student sees it.

Needs root (namespaces), haproxy and PostgreSQL: without them it skips, except in CI
(LNLAB_REQUIRE_POSTGRES=1 / LNLAB_REQUIRE_BROWSER=1, set by .ci/run), where it fails.
Everything it starts is stopped, and every namespace deleted, even when it fails.
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from netns_kit import Network, run_inside
from pg_kit import Postgres, require_postgres

from bench.bench_class import (
    Options,
    Student,
    Tally,
    ask,
    counted_votes,
    join_class,
    next_step,
    start_class,
    teacher_click,
)
from bench.ws_client import ProtocolError, Session
from deploy.processes import healthy, stop
from deploy.replicas import COOKIE, HAPROXY, app_command, app_env, haproxy_config
from ui.live.connect import UNAVAILABLE

STUDENTS = 30
STEPS = (2, 3, 4)  # the Stepper's steps the instructor moves to, from step 1
APP_PORT = 8510  # on each app host's own address
FRONT_PORT = 8080  # HAProxy, on host lb's loopback
PG_PORT = 5432  # on host db's address
HOSTS = {"lb": 1, "app0": 11, "app1": 12, "db": 20}
APPS = ("app0", "app1")
# What the Class page says while the store cannot be reached (ui/live/connect.py).
UNREACHABLE = UNAVAILABLE.split("(")[0].strip()
OPTIONS = Options(students=STUDENTS, replicas=len(APPS), steps=len(STEPS), step_every=0.0,
                  join_window=5.0, vote_window=4.0, timeout=30.0)  # fmt: skip


def _require_root() -> None:
    if os.geteuid() == 0 and shutil.which("ip"):
        return
    reason = "the cluster rehearsal makes network namespaces: it needs root and iproute2's ip"
    # iproute2 is in .ci/apt-packages; CI runs as root.
    if os.environ.get("LNLAB_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"{reason} (CI runs as root)", pytrace=False)
    pytest.skip(reason)


def _require_haproxy() -> None:
    if os.access(HAPROXY, os.X_OK):
        return
    if os.environ.get("LNLAB_REQUIRE_BROWSER") == "1":
        pytest.fail("no haproxy; CI installs it", pytrace=False)
    pytest.skip("no haproxy (apt-get install haproxy)")


@dataclass(frozen=True)
class Cluster:
    net: Network
    db: Postgres
    db_url: str
    logs: Path  # each host's processes' output, <host>.log
    processes: list[subprocess.Popen]  # stopped by the fixture

    def spawn(self, host: str, command: list[str], env: dict[str, str]) -> None:
        with (self.logs / f"{host}.log").open("a") as log:
            self.processes.append(subprocess.Popen(
                [*self.net.inside(host), *command], stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, env={**os.environ, **env},
            ))  # fmt: skip

    def tails(self) -> str:
        return "\n".join(f"== {p.name}\n{p.read_text(errors='replace')[-1500:]}"
                         for p in sorted(self.logs.glob("*.log")))  # fmt: skip


def _wait_healthy(made: Cluster, places: list[tuple[str, int]], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    waiting = list(places)
    while waiting:
        exited = [p.args for p in made.processes if p.poll() is not None]
        if exited or time.monotonic() > deadline:
            raise AssertionError(f"not healthy: {waiting}; exited: {exited}\n{made.tails()}")
        waiting = [(host, port) for host, port in waiting if not healthy(port, host)]
        time.sleep(0.3)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    _require_root()
    require_postgres()
    _require_haproxy()
    net = Network(f"lnlab{os.getpid()}", HOSTS)
    folder = Path(tempfile.mkdtemp(prefix="lnlab-cluster-pg-"))  # PostgreSQL's user must enter
    db = Postgres(folder, PG_PORT, net.address("db"), tuple(net.inside("db")))
    processes: list[subprocess.Popen] = []
    try:
        net.create()
        db.create()
        db.start()
        made = Cluster(net, db, db.create_database("lnlab"), tmp_path, processes)
        env = app_env(secrets.token_hex(16), {"LNLAB_CLASS_DB": made.db_url})
        for host in APPS:
            made.spawn(host, app_command(net.address(host), APP_PORT), env)
        apps = [(net.address(host), APP_PORT) for host in APPS]
        run_inside(net.namespace("lb"), _wait_healthy, made, apps, 120.0)
        config = tmp_path / "haproxy.cfg"
        config.write_text(haproxy_config("127.0.0.1", FRONT_PORT, [f"{h}:{p}" for h, p in apps]))
        made.spawn("lb", [HAPROXY, "-db", "-f", str(config)], {})
        run_inside(net.namespace("lb"), _wait_healthy, made, [("127.0.0.1", FRONT_PORT)], 30.0)
        yield made
    finally:
        for proc in processes:
            stop(proc)
        try:
            db.stop()
        finally:
            net.delete()
            shutil.rmtree(folder, ignore_errors=True)
        assert not net.exists(), f"namespaces left behind: {net.exists()}"


async def _until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:.0f} s")
        await asyncio.sleep(0.2)


@dataclass(frozen=True)
class Outcome:
    """What the class showed, for the assertions (made on the test's own thread)."""

    students: list[Student]
    cut: str  # the app host whose link was cut
    on_cut: list[Student]
    before_cut: dict[int, int | None]  # index in students -> vote acknowledged before the cut
    counted: dict[str, int]  # browser -> option, in the store after the votes
    counted_after_restart: dict[str, int]
    unreachable_shown: list[str]  # the Class page's alerts while PostgreSQL was down
    back_alerts: list[str]  # and once it was back
    tally: Tally


async def _rehearse(made: Cluster) -> Outcome:
    tally = Tally()
    teacher = Session(FRONT_PORT, timeout=OPTIONS.timeout)
    students = [Student(FRONT_PORT, random.Random(i), OPTIONS, tally) for i in range(STUDENTS)]
    stop_listening = asyncio.Event()
    listeners: list[asyncio.Task] = []
    try:
        code = await start_class(teacher)
        cut = next(host for host in APPS if host != teacher.cookies.get(COOKIE))
        joined = await join_class(students, code, OPTIONS.join_window)
        assert len(joined) == STUDENTS, f"joined {len(joined)}: {tally.first_errors}"
        published: dict[int, float] = {}
        listeners = [asyncio.create_task(s.listen_until(stop_listening, published))
                     for s in students]  # fmt: skip
        for step in STEPS:
            await next_step(teacher, step, published)
            await _until(lambda step=step: all(step in s.seen_steps for s in students), 30,
                         f"every student's lab on step {step}")  # fmt: skip
        on_cut = [s for s in students if s.session.cookies.get(COOKIE) == cut]
        early, at_cut, late = on_cut[0::3], on_cut[1::3], on_cut[2::3]
        await ask(teacher, students, OPTIONS.vote_window)
        for s in at_cut + late:
            s.vote_at = None  # told below
        await _until(lambda: all(s.voted for s in early), 30, "the first third of votes")
        now = time.monotonic()
        for s in at_cut:
            s.vote_at = now  # clicking Vote as the cable is pulled
        await asyncio.sleep(0.05)
        before_cut = {students.index(s): s.acknowledged for s in on_cut}
        await asyncio.to_thread(made.net.set_link, cut, False)
        for s in late:
            s.vote_at = time.monotonic() + s.rng.uniform(0, 3)
        await _until(
            lambda: all(s.voted for s in students) and all(s.shown_on_reconnect for s in on_cut),
            90, "every student voted, those of the cut host reconnected",
        )  # fmt: skip
        counted = await asyncio.to_thread(counted_votes, made.db_url, code)

        await asyncio.to_thread(made.db.stop)
        down = await teacher.rerun("class", query_string="")
        await asyncio.to_thread(made.db.start)
        back = await teacher.rerun("class", query_string="")
        for _ in range(20):  # the pool's dead connections are found by their pre-ping
            if not any(UNREACHABLE in a for a in back.alerts):
                break
            await asyncio.sleep(0.5)
            back = await teacher.rerun("class", query_string="")
        await teacher_click(teacher, "Reveal")
        await _until(lambda: all(s.revealed for s in students), 30, "every student saw the answer")
        after = await asyncio.to_thread(counted_votes, made.db_url, code)
        return Outcome(students, cut, on_cut, before_cut, counted, after, down.alerts,
                       back.alerts, tally)  # fmt: skip
    finally:
        stop_listening.set()
        await asyncio.gather(*listeners, return_exceptions=True)
        await asyncio.gather(teacher.close(), *(s.session.close() for s in students))


def _rehearsal(made: Cluster) -> Outcome:
    # Every wait inside is bounded; the whole, too, so a hang fails instead of holding CI.
    return asyncio.run(asyncio.wait_for(_rehearse(made), 240))


def test_a_class_survives_a_cut_host_and_a_database_restart(cluster: Cluster) -> None:
    try:
        out = run_inside(cluster.net.namespace("lb"), _rehearsal, cluster)
    except (AssertionError, ProtocolError, TimeoutError) as err:
        raise AssertionError(f"{err}\n{cluster.tails()}") from err
    students, tally = out.students, out.tally
    browsers = [s.session.cookies["lnlab_browser"] for s in students]
    acknowledged = {b: s.acknowledged for b, s in zip(browsers, students, strict=True)}
    print(
        f"cut {out.cut} with {len(out.on_cut)} students; votes acknowledged "
        f"{sum(v is not None for v in acknowledged.values())}, counted {len(out.counted)}, "
        f"after the restart {len(out.counted_after_restart)}; per option "
        f"{dict(sorted(Counter(out.counted.values()).items()))}; reconnects {tally.reconnects}; "
        f"errors {dict(tally.errors)}"
    )
    # Every vote a student saw acknowledged is counted, for that browser, and nothing else.
    assert all(v is not None for v in acknowledged.values())
    assert out.counted == acknowledged
    assert out.counted_after_restart == acknowledged
    # The cut host's students are on the other host now, with the votes they had.
    other = next(host for host in APPS if host != out.cut)
    assert len(out.on_cut) >= STUDENTS // 4
    assert all(s.session.cookies[COOKIE] == other for s in out.on_cut)
    for index, vote in out.before_cut.items():
        shown = students[index].shown_on_reconnect
        assert vote is None or shown[0] == vote, f"student {index} voted {vote}, shown {shown}"
    # Only the cut host's students lost their connection; the others saw nothing go wrong.
    untouched = [s for s in students if s not in out.on_cut]
    assert all(s.session.connects == 1 for s in untouched)
    # A vote whose row the cut host's open transaction still holds is refused as unreachable
    # until PostgreSQL ends that transaction (ui/live/store.py): the student votes again.
    assert set(tally.errors) <= {"disconnect", "vote_not_acknowledged"}, tally.first_errors
    # The Class page said the store was unreachable, then carried on.
    assert any(UNREACHABLE in a for a in out.unreachable_shown), out.unreachable_shown
    assert not any(UNREACHABLE in a for a in out.back_alerts), out.back_alerts
