"""Whether a tool's result reached its HTTP client: a successful call is recorded once that is known.

A tool call that ran well but whose result never arrived served nobody, so it must not
count as a success in the tool's health record. Over HTTP the server sees the end of the
exchange: :class:`DeliveryWatch` wraps the SDK's ASGI app and gives every POST a
:class:`Receipt` (in the ASGI scope, which the SDK hands to handlers as the request). A
handler whose call succeeded leaves the call there, unrecorded (``held``). Just before
the response's last part is handed to the HTTP server, the watch asks the connection
whether the client is still there, and records the call as delivered or as an
``undelivered`` failure. A call whose response is never sent (the handler was cancelled,
the client left first, the app failed) is recorded as undelivered when the exchange ends.

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

# Records a held call: the reason it was not delivered, or None. Blocking (the library).
Settle = Callable[[str | None], None]


class Receipt:
    """One HTTP exchange's held calls, settled once its response went out (or did not)."""

    def __init__(self) -> None:
        self._held: list[Settle] = []
        self.closed = False
        self.undelivered: str | None = NOT_SENT  # until the response's last part is about to go

    def hold(self, settle: Settle) -> bool:
        """Keep ``settle`` for when the response is sent; False: the exchange is over already."""
        if self.closed:
            return False
        self._held.append(settle)
        return True

    @property
    def holding(self) -> bool:
        return bool(self._held)

    async def close(self) -> None:
        """Settle every held call with what became of the response; runs once, even when cancelled."""
        self.closed = True
        held, self._held = self._held, []
        if not held:
            return
        why = self.undelivered
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(_settle_all, held, why)


def _settle_all(held: list[Settle], why: str | None) -> None:
    for settle in held:
        try:
            settle(why)
        except Exception:  # one record's failure must not lose the others'
            log.exception("a call's health could not be recorded")


def receipt_of(request: object) -> Receipt | None:
    """The receipt of the HTTP exchange ``request`` (the SDK's per-request transport object), if any."""
    scope = getattr(request, "scope", None)
    receipt = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    return receipt if isinstance(receipt, Receipt) else None


class DeliveryWatch:
    """ASGI middleware: a :class:`Receipt` for each POST, settled when its exchange ends."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        receipt = Receipt()
        scope[SCOPE_KEY] = receipt

        async def watched(message: Message) -> None:
            last = message["type"] == "http.response.body" and not message.get("more_body", False)
            if not (last and receipt.holding):
                await send(message)
                return
            # Recorded before the last part goes out, so a client that has its result also
            # finds it in the tool's health (a send cannot report a failure anyway).
            left = await _client_left(receive)
            receipt.undelivered = CLIENT_LEFT if left else None
            await receipt.close()
            if not left:  # else nobody is there to take it
                await send(message)

        try:
            await self.app(scope, receive, watched)
        finally:
            await receipt.close()


async def _client_left(receive: Receive) -> bool:
    """Whether the client has gone, asked without waiting.

    Once a request's body is read, the next ``receive`` blocks until the client
    disconnects (ASGI), so one that answers at once with ``http.disconnect`` means the
    client left; one that would wait means it is still there. uvicorn, which serves
    ``toolsmith mcp``, answers a disconnect it already saw without waiting; a server that
    yielded first would make a gone client look present, never the other way round.
    """
    message: dict[str, Any] | None = None
    with anyio.move_on_after(0):
        message = dict(await receive())
    return message is not None and message.get("type") == "http.disconnect"
