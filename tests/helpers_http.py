"""A programmable local HTTP server for tests that would otherwise need the web.

Usage::

    with LocalServer() as server:
        server.route("/page", body="<html>...</html>", content_type="text/html")
        server.route("/moved", status=302, headers={"Location": "/page"})
        server.route("/slow", body="late", delay_s=2.0)
        server.route("/big", body_size=10_000_000)        # streamed filler bytes
        server.route("/api", handler=lambda req: Reply(body=req.query.get("q", "")))
        url = server.url("/page")

Routes match the exact path (query strings are ignored for matching); unknown paths get
a 404. Every request is recorded in ``server.requests``. The server binds 127.0.0.1 on a
free port and runs in a daemon thread, one thread per connection.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


@dataclass
class Reply:
    """What a route answers. ``body`` may be str (UTF-8), bytes, or a JSON-able object."""

    status: int = 200
    body: Any = b""
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # before the status line
    body_size: int = 0  # > 0: stream this many filler bytes instead of body
    chunk_delay_s: float = 0.0  # pause between streamed chunks
    chunk_size: int = 64 * 1024
    send_length: bool = True  # False: no Content-Length, the body ends when the server closes

    def payload(self) -> tuple[bytes, str]:
        """The body's bytes and its content type ("" sends no Content-Type header)."""
        if isinstance(self.body, bytes):
            data, default = self.body, "application/octet-stream"
        elif isinstance(self.body, str):
            data, default = self.body.encode("utf-8"), "text/plain; charset=utf-8"
        else:
            data, default = json.dumps(self.body).encode("utf-8"), "application/json"
        return data, default if self.content_type is None else self.content_type


Handler = Callable[[Request], Reply]


class LocalServer:
    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.requests: list[Request] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        # A short poll interval keeps shutdown (one per test) quick.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + path

    def route(self, path: str, handler: Handler | None = None, **reply: Any) -> None:
        """Answer ``path`` with ``handler(request)``, or always with ``Reply(**reply)``."""
        if handler is None:
            fixed = Reply(**reply)

            def handler(_request: Request) -> Reply:
                return fixed

        self.routes[path] = handler

    def start(self) -> LocalServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _make_handler(server: LocalServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            request = Request("GET", parts.path, query, dict(self.headers.items()))
            server.requests.append(request)
            handler = server.routes.get(parts.path)
            reply = handler(request) if handler else Reply(status=404, body="not found")
            # The client may stop reading early, as size caps and timeouts do.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(reply)

        def _send(self, reply: Reply) -> None:
            if reply.delay_s:
                time.sleep(reply.delay_s)
            body, content_type = reply.payload()
            size = reply.body_size or len(body)
            self.send_response(reply.status)
            if content_type and "content-type" not in {k.lower() for k in reply.headers}:
                self.send_header("Content-Type", content_type)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            if reply.send_length:
                self.send_header("Content-Length", str(size))
            self.end_headers()
            if reply.body_size:
                sent = 0
                chunk = b"x" * reply.chunk_size
                while sent < reply.body_size:
                    part = chunk[: reply.body_size - sent]
                    self.wfile.write(part)
                    sent += len(part)
                    if reply.chunk_delay_s:
                        time.sleep(reply.chunk_delay_s)
            else:
                self.wfile.write(body)

    return _Handler
