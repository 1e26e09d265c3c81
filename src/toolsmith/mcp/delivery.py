"""Whether a tool's result reached its HTTP client: a success whose result went nowhere becomes a failure.

A tool call that ran well but whose result never arrived served nobody, so it must not
stay a success in the tool's health record. Over HTTP the server sees the end of the
exchange: :class:`DeliveryWatch` wraps the SDK's ASGI app and gives every POST a
:class:`Receipt` (in the ASGI scope, which the SDK hands to handlers as the request). A
handler whose call succeeded (and was recorded so) leaves word there of what to do if
the result is lost. Just before the response's last part is handed to the HTTP server,
the watch looks whether the client is still connected: if it is, nothing more happens
(the common case costs no extra work); if it left, the call is recorded as the tool's
``undelivered`` failure. So is a call whose response is never sent (the handler was
cancelled, the client left first, the app failed), when the exchange ends.

What cannot be seen from here is not claimed. Bytes the kernel accepted for a client that
dies a moment later count as delivered, and so does a result the client received and
dropped (its own timeout had passed, but it kept the connection open).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("toolsmith.mcp")

SCOPE_KEY = "toolsmith.receipt"
CLIENT_LEFT = "the result was not delivered: the client closed the connection before it was sent"
NOT_SENT = "the result was not delivered: the response carrying it was never sent"
CANCELLED = (
    "the result was not delivered: the call was cancelled (by the client, or its session ended) before it was sent"
)
ABANDONED = (
    "the result was not delivered: the request had ended (the client left or ended its session) before it was ready"
)

JSON = b"application/json"
SESSION_GONE = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session terminated"}}'

# What to do when a recorded success turns out undelivered, given why. Blocking (the library).
Lost = Callable[[str], None]


class Receipt:
    """One HTTP exchange's successful calls, told when their result is lost."""

    def __init__(self) -> None:
        self._pending: list[Lost] = []
        self.closed = False

    def watch(self, lost: Lost) -> bool:
        """Keep ``lost`` until the response goes out; False: the exchange is over already."""
        if self.closed:
            return False
        self._pending.append(lost)
        return True

    @property
    def watching(self) -> bool:
        return bool(self._pending)

    async def close(self, undelivered: str | None) -> None:
        """End the exchange: delivered (``None``), or say why not to every call watched; runs once."""
        self.closed = True
        pending, self._pending = self._pending, []
        if pending and undelivered is not None:
            with anyio.CancelScope(shield=True):  # the record is written even while cancelled
                await anyio.to_thread.run_sync(_lose_all, pending, undelivered)


def _lose_all(pending: list[Lost], why: str) -> None:
    for lost in pending:
        try:
            lost(why)
        except Exception:  # one record's failure must not lose the others'
            log.exception("an undelivered result could not be recorded")


def receipt_of(request: object) -> Receipt | None:
    """The receipt of the HTTP exchange ``request`` (the SDK's per-request transport object), if any."""
    scope = getattr(request, "scope", None)
    receipt = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    return receipt if isinstance(receipt, Receipt) else None


class DeliveryWatch:
    """ASGI middleware: a :class:`Receipt` for each POST, closed when its exchange ends.

    It also answers a POST that raced its session's end with the 404 a request for an ended
    session gets, where the SDK would raise.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        receipt = Receipt()
        scope[SCOPE_KEY] = receipt

        started = answered = False

        async def watched(message: Message) -> None:
            nonlocal started, answered
            if answered:  # the SDK answering again after its 202 when the session is gone: no second answer
                log.debug("dropped a %s after the response was complete", message["type"])
                return
            started = True
            last = message["type"] == "http.response.body" and not message.get("more_body", False)
            answered = answered or last
            if not (last and receipt.watching):
                await send(message)
                return
            if await _client_left(receive):
                await receipt.close(CLIENT_LEFT)  # nobody is there to take it
                return
            await receipt.close(None)
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except anyio.ClosedResourceError:
            # The SDK's session streams closed under this request: its client ended the
            # session (a DELETE) while this POST (often its own cancel notice) was on the
            # way. The session is gone, so that is the answer, not a traceback in the log.
            if started and not answered:
                raise
            log.info("a request arrived as its session ended")
            if not started:
                await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", JSON)]})
                await send({"type": "http.response.body", "body": SESSION_GONE})
        finally:
            await receipt.close(NOT_SENT)


async def _client_left(receive: Receive) -> bool:
    """Whether the client has gone, asked without waiting.

    Once a request's body is read, the next ``receive`` blocks until the client
    disconnects (ASGI), so one that answers at once with ``http.disconnect`` means the
    client left; one that would wait means it is still there (a server that yielded first
    would make a gone client look present, never the other way round). uvicorn, which
    serves ``toolsmith mcp``, keeps the same answer on its request cycle, read without a
    call.
    """
    cycle = getattr(receive, "__self__", None)  # uvicorn's request cycle keeps the answer at hand
    known = getattr(cycle, "disconnected", None)
    if isinstance(known, bool):
        return known
    message: dict[str, Any] | None = None
    with anyio.move_on_after(0):
        message = dict(await receive())
    return message is not None and message.get("type") == "http.disconnect"


class SessionEndRace(logging.Filter):
    """Drops the SDK's traceback for a POST that raced its session's end (told by the exception's type).

    :class:`DeliveryWatch` logs one line for it instead; any other error passes.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (record.name == "mcp.server.streamable_http" and isinstance(exc, anyio.ClosedResourceError))
