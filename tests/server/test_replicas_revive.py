"""`python -m deploy.replicas 2` starts again a process that dies, and HAProxy sends browsers
to it again (real processes, real HAProxy)."""

from __future__ import annotations

import os
import signal

from replica_kit import alive, app_ports, health_reply, require_haproxy, supervisor, wait

from deploy.processes import free_port, healthy, stop

BACK_WITHIN_S = 120  # a cold start of one app process on a busy 2-core machine, with margin


def test_a_replica_that_dies_is_started_again_and_rejoins_the_balancer():
    require_haproxy()
    port = free_port()
    group = supervisor("2", "--port", str(port))
    try:
        # Its first line comes once every process answers and the balancer is up: a process
        # killed before then fails the start itself, not the supervision this test is about.
        ready = group.stdout.readline() if group.stdout else ""
        assert "processes behind HAProxy" in ready, ready
        wait(lambda: all(healthy(p) for p in app_ports(group.pid).values()), 180, "apps")
        (victim, victim_port), _ = sorted(app_ports(group.pid).items(), key=lambda i: i[1])
        os.killpg(victim, signal.SIGKILL)  # a crash: no clean shutdown

        def back() -> bool:
            ports = app_ports(group.pid)
            return victim not in ports and victim_port in ports.values() and healthy(victim_port)

        try:
            took = wait(back, BACK_WITHIN_S, "the dead replica started again")
            # The balancer's health check takes it back: both cookies reach a working process.
            wait(
                lambda: all(health_reply(port, f"app{i}")[0] == 200 for i in (0, 1)),
                30,
                "rejoined",
            )
        except AssertionError as err:
            stop(group)
            said = group.stdout.read() if group.stdout else ""
            raise AssertionError(f"{err}; the supervisor said:\n{said}") from err
        print(f"replica back and healthy after {took:.1f} s")
        running = list(app_ports(group.pid))
    finally:
        stop(group)
    # Stopping the replicas stops the process started again too (none is left serving).
    wait(lambda: not any(alive(pid) for pid in running), 30, "all stopped")
    output = group.stdout.read() if group.stdout else ""
    assert "had stopped: started again on its port" in output, output
