"""Hosts on one machine: Linux network namespaces joined by one switch, for a cluster rehearsal.

    net = Network(f"lnlab{os.getpid()}", {"lb": 1, "app0": 11, "db": 20})
    net.create()                      # a namespace per host, and one holding the switch
    net.address("db")                 # "10.231.0.20", an address only inside these namespaces
    subprocess.Popen([*net.inside("db"), "cmd"])   # a process on a host (`ip netns exec`)
    net.set_link("app0", up=False)    # pull app0's cable out of the switch
    run_inside(net.namespace("lb"), function, *args)   # this process's own code on host lb
    net.delete()                      # every namespace (stop their processes first)

Each host has one interface, eth0, whose other end is a port of a bridge in the switch's
namespace: a cut link takes the host off the network (the balancer, the database) at once, the
way a dead machine or cable does, with no connection told. Addresses are 10.231.0.0/24, inside
these namespaces only: nothing outside them can reach them, nor is reached from them.
Needs root (`ip netns` and setns); CI runs as root.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

SUBNET = "10.231.0"
SWITCH = "switch"
CLONE_NEWNET = 0x40000000  # <sched.h>: setns's flag for a network namespace
T = TypeVar("T")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@dataclass(frozen=True)
class Network:
    """Hosts named in `hosts` (name -> last byte of its address), their namespaces named
    `<prefix>-<host>`, and the switch's `<prefix>-switch`."""

    prefix: str
    hosts: dict[str, int]

    def namespace(self, host: str) -> str:
        return f"{self.prefix}-{host}"

    def address(self, host: str) -> str:
        return f"{SUBNET}.{self.hosts[host]}"

    def inside(self, host: str) -> list[str]:
        """The command prefix that runs a command on `host`."""
        return ["ip", "netns", "exec", self.namespace(host)]

    def create(self) -> None:
        switch = self.namespace(SWITCH)
        _ip("netns", "add", switch)
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        for host in self.hosts:
            name = self.namespace(host)
            _ip("netns", "add", name)
            # The switch's port is named for its host; the host's end is its eth0.
            _ip("-n", switch, "link", "add", host, "type", "veth", "peer", "name", "eth0",
                "netns", name)  # fmt: skip
            _ip("-n", switch, "link", "set", host, "master", "br0", "up")
            _ip("-n", name, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
            _ip("-n", name, "link", "set", "eth0", "up")
            _ip("-n", name, "link", "set", "lo", "up")

    def set_link(self, host: str, up: bool) -> None:
        """Plug `host`'s cable into the switch, or pull it out."""
        _ip("-n", self.namespace(SWITCH), "link", "set", host, "up" if up else "down")

    def delete(self) -> None:
        """Remove every namespace of this network that exists (their links go with them)."""
        for host in [*self.hosts, SWITCH]:
            with contextlib.suppress(subprocess.CalledProcessError):
                _ip("netns", "delete", self.namespace(host))

    def exists(self) -> list[str]:
        """The namespaces of this network still there."""
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        names = {line.split()[0] for line in listed.splitlines() if line.strip()}
        return sorted(names & {self.namespace(h) for h in [*self.hosts, SWITCH]})


def _enter(namespace: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    descriptor = os.open(f"/run/netns/{namespace}", os.O_RDONLY)
    try:
        # The network namespace is per thread: only this worker thread moves (and the threads
        # it starts), the test's own thread stays where it was.
        if libc.setns(descriptor, CLONE_NEWNET) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"setns into {namespace}: {os.strerror(errno)}")
    finally:
        os.close(descriptor)


def run_inside(namespace: str, function: Callable[..., T], *args: object) -> T:
    """function(*args) on a thread inside `namespace`, as a process on that host would run it:
    its connections go to that host's addresses and loopback. The function must end by itself
    (bounded waits): the thread is not waited for if the caller is interrupted."""
    pool = ThreadPoolExecutor(max_workers=1, initializer=_enter, initargs=(namespace,))
    try:
        return pool.submit(function, *args).result()
    finally:
        pool.shutdown(wait=False)
