"""The delivery watch on its own: when a success is reported lost, and why, for each way an exchange ends.

The official client over real HTTP is in test_mcp_serving.py; here a stand-in ASGI app
and connection pin the order of events: nothing is reported while the client is there,
a loss is reported (and the last part not sent) once it left, and one is reported when
the app sends nothing or fails.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from toolsmith.mcp.delivery import (
    CLIENT_LEFT,
    NOT_SENT,
    SCOPE_KEY,
    DeliveryWatch,
    Receipt,
    SessionEndRace,
    receipt_of,
)


class Connection:
    """An ASGI server's side of one request: the body once, then a wait until the client leaves."""

    def __init__(self, *, client_left: bool = False) -> None:
        self.left = anyio.Event()
        if client_left:
            self.left.set()
        self.body_read = False
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if not self.body_read:
            self.body_read = True
            return {"type": "http.request", "body": b"{}", "more_body": False}
        if not self.left.is_set():  # as uvicorn: a known disconnect is told without waiting
            await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


class Request:
    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope


def app_holding(settled: list[str], *, respond: bool = True) -> Any:
    """An app whose handler watches one success, then answers in two parts (or not at all)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        receipt = receipt_of(Request(scope))
        assert receipt is not None and receipt.watch(settled.append)
        if respond:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{", "more_body": True})
            assert settled == []  # nothing is decided before the last part
            await send({"type": "http.response.body", "body": b"}"})

    return app


def run(app: Any, connection: Connection, method: str = "POST") -> dict[str, Any]:
    scope: dict[str, Any] = {"type": "http", "method": method, "path": "/mcp"}
    anyio.run(DeliveryWatch(app), scope, connection.receive, connection.send)
    return scope


def test_nothing_is_lost_when_the_client_is_still_there() -> None:
    settled: list[str] = []
    connection = Connection()
    run(app_holding(settled), connection)
    assert settled == []
    assert [m.get("body") for m in connection.sent[1:]] == [b"{", b"}"]


def test_a_success_is_lost_when_the_client_left_and_the_last_part_is_not_sent() -> None:
    settled: list[str] = []
    connection = Connection(client_left=True)
    run(app_holding(settled), connection)
    assert settled == [CLIENT_LEFT]
    assert [m.get("body") for m in connection.sent[1:]] == [b"{"]


def test_a_success_whose_response_never_went_out_is_lost() -> None:
    settled: list[str] = []
    run(app_holding(settled, respond=False), Connection())
    assert settled == [NOT_SENT]


def test_a_success_is_lost_when_the_app_fails() -> None:
    settled: list[str] = []

    async def failing(scope: dict[str, Any], receive: Any, send: Any) -> None:
        receipt = receipt_of(Request(scope))
        assert receipt is not None and receipt.watch(settled.append)
        raise RuntimeError("the app broke")

    with pytest.raises(RuntimeError, match="the app broke"):
        run(failing, Connection())
    assert settled == [NOT_SENT]


def test_only_posts_get_a_receipt_and_a_closed_one_takes_no_more() -> None:
    seen: list[object] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(receipt_of(Request(scope)))

    scope = run(app, Connection(), method="GET")
    assert seen == [None] and SCOPE_KEY not in scope
    assert receipt_of(object()) is None and receipt_of(Request({SCOPE_KEY: "not a receipt"})) is None

    receipt = Receipt()
    anyio.run(receipt.close, None)
    assert receipt.watch(lambda why: None) is False


def test_the_generic_asgi_check_is_used_without_uvicorns_request_cycle() -> None:
    """The stand-in's receive is a plain method with no ``disconnected``: the ASGI way decides."""
    assert not hasattr(Connection(), "disconnected")
    settled: list[str] = []
    run(app_holding(settled), Connection(client_left=True))
    assert settled == [CLIENT_LEFT]


class UvicornLike(Connection):
    """As uvicorn's request cycle: a ``disconnected`` flag beside ``receive``, read without a call."""

    def __init__(self, *, disconnected: bool) -> None:
        super().__init__()
        self.disconnected = disconnected
        self.receives = 0

    async def receive(self) -> dict[str, Any]:
        self.receives += 1
        return await super().receive()


@pytest.mark.parametrize("gone", [True, False])
def test_uvicorns_own_flag_decides_without_another_receive(gone: bool) -> None:
    settled: list[str] = []
    connection = UvicornLike(disconnected=gone)
    run(app_holding(settled), connection)
    assert settled == ([CLIENT_LEFT] if gone else []) and connection.receives == 1  # the body's only


def test_a_request_that_raced_its_sessions_end_gets_404_not_a_traceback() -> None:
    async def closed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        raise anyio.ClosedResourceError

    connection = Connection()
    run(closed, connection)
    assert connection.sent[0]["status"] == 404 and b"Session terminated" in connection.sent[1]["body"]

    async def half_sent(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise anyio.ClosedResourceError

    with pytest.raises(anyio.ClosedResourceError):  # a response already begun cannot be replaced
        run(half_sent, Connection())

    async def answered(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 500, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})
        raise anyio.ClosedResourceError  # as the SDK does after its error answer

    connection = Connection()
    run(answered, connection)
    assert [m.get("status") for m in connection.sent] == [500, None]


def test_only_the_sdks_session_race_traceback_is_dropped() -> None:
    def record(name: str, exc: BaseException | None) -> logging.LogRecord:
        info = (type(exc), exc, None) if exc is not None else None
        return logging.LogRecord(name, logging.ERROR, __file__, 1, "Error handling POST request", None, info)

    race = SessionEndRace()
    assert race.filter(record("mcp.server.streamable_http", anyio.ClosedResourceError())) is False
    assert race.filter(record("mcp.server.streamable_http", RuntimeError("a real bug"))) is True
    assert race.filter(record("mcp.server.other", anyio.ClosedResourceError())) is True
    assert race.filter(record("mcp.server.streamable_http", None)) is True


def test_a_second_answer_after_a_complete_one_is_dropped() -> None:
    """The SDK acknowledges a notification (202), finds its session gone, and tries to answer 500."""

    async def twice(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        await send({"type": "http.response.start", "status": 500, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})
        raise anyio.ClosedResourceError

    connection = Connection()
    run(twice, connection)
    assert [m.get("status") for m in connection.sent] == [202, None]
