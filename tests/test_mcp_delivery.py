"""The delivery watch on its own: when a held call is settled, and with what, for each way an exchange ends.

The official client over real HTTP is in test_mcp_serving.py; here a stand-in ASGI app
and connection pin the order of events: a held call is recorded before the response's
last part goes out, as delivered while the client is there, as undelivered once it left,
and as never sent when the app sends nothing.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from toolsmith.mcp.delivery import CLIENT_LEFT, NOT_SENT, SCOPE_KEY, DeliveryWatch, Receipt, receipt_of


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


def app_holding(settled: list[str | None], *, respond: bool = True) -> Any:
    """An app whose handler holds one call, then answers in two parts (or not at all)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        receipt = receipt_of(Request(scope))
        assert receipt is not None and receipt.hold(settled.append)
        if respond:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{", "more_body": True})
            assert settled == []  # not before the last part
            await send({"type": "http.response.body", "body": b"}"})

    return app


def run(app: Any, connection: Connection, method: str = "POST") -> dict[str, Any]:
    scope: dict[str, Any] = {"type": "http", "method": method, "path": "/mcp"}
    anyio.run(DeliveryWatch(app), scope, connection.receive, connection.send)
    return scope


def test_a_held_call_is_delivered_when_the_client_is_still_there() -> None:
    settled: list[str | None] = []
    connection = Connection()
    run(app_holding(settled), connection)
    assert settled == [None]
    assert [m.get("body") for m in connection.sent[1:]] == [b"{", b"}"]


def test_a_held_call_is_undelivered_when_the_client_left_and_the_last_part_is_not_sent() -> None:
    settled: list[str | None] = []
    connection = Connection(client_left=True)
    run(app_holding(settled), connection)
    assert settled == [CLIENT_LEFT]
    assert [m.get("body") for m in connection.sent[1:]] == [b"{"]


def test_a_held_call_whose_response_never_went_out_is_undelivered() -> None:
    settled: list[str | None] = []
    run(app_holding(settled, respond=False), Connection())
    assert settled == [NOT_SENT]


def test_a_held_call_is_settled_even_when_the_app_fails() -> None:
    settled: list[str | None] = []

    async def failing(scope: dict[str, Any], receive: Any, send: Any) -> None:
        receipt = receipt_of(Request(scope))
        assert receipt is not None and receipt.hold(settled.append)
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
    anyio.run(receipt.close)
    assert receipt.hold(lambda why: None) is False
