"""The address a class can open: the one the instructor's browser used, unless that is this
computer's own (127.0.0.1); then the machine's network address when the server listens on the
network, and a clear warning when it does not."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import streamlit as st

from deploy.replicas import BALANCER_ENV

LOOPBACK = ("127.0.0.1", "localhost", "::1")
EVERY_INTERFACE = ("", "0.0.0.0", "::")
NOT_ON_THE_NETWORK = (
    "Only this computer can open this link ({listen}). To teach a class, restart the lab on a "
    "network you trust: `{command}` (see the README)."
)
NO_NETWORK = (
    "The server listens on the network, but this computer has no network address right now: "
    "connect it to the class's network, then reload this page."
)


@dataclass(frozen=True)
class Address:
    """base: scheme and host (and port) of the links to share; warning: why students cannot
    open them, or None."""

    base: str
    warning: str | None = None


@dataclass(frozen=True)
class Listening:
    """Where browsers reach the lab: this server's own address and port, or those of the
    HAProxy in front of its `replicas` processes (./run.sh --replicas)."""

    address: str
    port: int
    replicas: int = 0

    def command(self, address: str) -> str:
        """The command that starts the lab this way again, listening on `address`."""
        if self.replicas:
            return f"./run.sh --replicas {self.replicas} --port {self.port} --address {address}"
        return f"./run.sh --server.port {self.port} --server.address {address}"

    @property
    def said(self) -> str:
        option = "--address" if self.replicas else "server.address ="
        return f"{option} {self.address}"


def listening() -> Listening:
    """Where this process is reached: HAProxy's address when replicas.py started it."""
    balancer = os.environ.get(BALANCER_ENV, "").split()
    if len(balancer) == 3 and balancer[0].isdigit() and balancer[2].isdigit():
        return Listening(balancer[1], int(balancer[2]), int(balancer[0]))
    return Listening(str(st.get_option("server.address") or ""), int(st.get_option("server.port")))


def class_address(browser_url: str, listen: Listening, lan: str | None) -> Address:
    """Where students reach this server. browser_url: the URL the instructor's browser shows;
    listen: where the lab listens; lan: this machine's network address."""
    port = listen.port
    parts = urlsplit(browser_url)
    here = f"{parts.scheme or 'http'}://{parts.netloc or f'localhost:{port}'}"
    if parts.hostname and parts.hostname not in LOOPBACK:
        return Address(here)  # students reach what the instructor reached
    if listen.address in EVERY_INTERFACE:
        return Address(f"http://{lan}:{port}") if lan else Address(here, NO_NETWORK)
    if listen.address in LOOPBACK:
        command = listen.command(EVERY_INTERFACE[1])
        return Address(here, NOT_ON_THE_NETWORK.format(listen=listen.said, command=command))
    return Address(f"http://{listen.address}:{port}")


def lan_address() -> str | None:
    """This machine's address on its network, or None. A UDP socket "connected" to a private
    address picks the outgoing interface without sending anything."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def current() -> Address:
    """The class's address for this server and this browser."""
    browser_url = st.context.url or ""
    # The network probe (a socket, on every run that shows a link) only matters when the
    # browser used this computer's own address; a student's browser never does.
    host = urlsplit(browser_url).hostname
    lan = lan_address() if not host or host in LOOPBACK else None
    return class_address(browser_url, listening(), lan)
