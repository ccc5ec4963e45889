"""A hand-built message larger than the cap in .streamlit/config.toml (server.maxWidgetStateSize,
4 MB) closes only its own connection: the server does not hold it, and others go on."""

from __future__ import annotations

from streamlit.proto.BackMsg_pb2 import BackMsg

from bench.local_server import LocalServer
from bench.ws_client import ProtocolError, RunResult, Session, run_blocking


async def _oversized_then_normal(port: int) -> tuple[BaseException | RunResult, RunResult]:
    async with Session(port, timeout=120.0) as attacker, Session(port, timeout=120.0) as other:
        message = BackMsg()
        message.rerun_script.query_string = "x=" + "1," * (3 * 2**20)  # about 6 MB
        await attacker.ws.send(message.SerializeToString())
        try:
            outcome: BaseException | RunResult = await attacker.rerun("")
        except ProtocolError as error:
            outcome = error
        return outcome, await other.rerun("")


def test_a_message_over_the_cap_closes_only_its_own_connection() -> None:
    with LocalServer() as server:
        outcome, other = run_blocking(_oversized_then_normal(server.port))
    assert isinstance(outcome, ProtocolError) and outcome.kind == "disconnect", outcome
    assert other.texts, "the other session got an empty page"
