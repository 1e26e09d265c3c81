"""ScriptedServer: a real OpenAI-compatible HTTP endpoint on loopback, answering from a Model.

Tests point a real :class:`~toolsmith.model.client.ChatModel` (real SDK, real HTTP) at it, so the
whole client path runs without any model provider. It serves ``POST /v1/chat/completions``
(streamed as server-sent events when the request asks for ``stream``, unless told to refuse
or ignore streaming) and ``GET /v1/models``, records what it received, and plays a queue
of faults before normal answers: error statuses with ``Retry-After``, hangs, dropped
connections, delays, raw bodies (any bytes, any content type), raw event streams and
streams that stall part way. With ``strict=True`` it refuses a transcript the way strict
providers do (HTTP 400): a tool message that answers no pending tool call, a tool call
left unanswered, an empty or repeated call id.

This is test infrastructure: the HTTP server runs in a background thread, which the house
rule against threads (about timing out untrusted code) does not concern.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from toolsmith.calls import JSONObject
from toolsmith.config.providers import is_loopback_url
from toolsmith.errors import ConfigError
from toolsmith.model import Model, ModelReply


@dataclass(frozen=True)
class Fault:
    """What to do instead of (or before) a normal answer, for one request."""

    status: int | None = None
    retry_after: float | None = None
    hang: float | None = None  # wait this long, then close without answering
    drop: bool = False  # close the connection without answering
    body: Any = None  # serve this (JSON value, or str/bytes verbatim) instead of an answer
    delay: float | None = None  # wait, then go on (with the status/body, or a real answer)
    content_type: str | None = None  # for ``body``: the Content-Type to claim
    events: Any = None  # serve this (str/bytes) verbatim as a text/event-stream body
    stall_after: int | None = None  # stream this many chunks of the real answer, then hang


STREAM_MODES = ("sse", "refuse", "ignore")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer


class _HTTPServer6(_HTTPServer):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    timeout = 10  # idle keep-alive connections end on their own
    # Headers and body go out in two writes; with Nagle's algorithm the body then waits for
    # the client's delayed ACK, about 40 ms per answer on Linux.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: test output stays readable."""

    def do_GET(self) -> None:
        if _route(self.path) == "/models":
            self._send_json(200, self.server.owner.models_payload())
        else:
            self._send_json(404, _error(f"No route GET {self.path}", "not_found"))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if _route(self.path) != "/chat/completions":
            self._send_json(404, _error(f"No route POST {self.path}", "not_found"))
            return
        body: Any
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = raw.decode("utf-8", "replace")  # recorded as text; _answer refuses it
        owner = self.server.owner
        fault = owner._record(self.headers.get("Authorization"), body)
        if fault is not None and self._play(fault, body):
            return
        status, payload = owner._answer(body)
        if status == 200 and isinstance(payload, list):
            self._send_events(payload, stall_after=fault.stall_after if fault else None)
        else:
            self._send_json(status, payload)

    def _play(self, fault: Fault, request: Any) -> bool:
        """Apply ``fault``; True when the request is fully handled."""
        owner = self.server.owner
        if fault.hang is not None:
            owner.wait(owner._stopping, fault.hang)
            fault = Fault(drop=True)
        if fault.drop:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return True
        if fault.delay is not None:
            owner.wait(owner._stopping, fault.delay)
        if fault.events is not None:
            self._send_raw(200, _bytes(fault.events), "text/event-stream")
            return True
        if fault.status is None and fault.body is None:
            return False  # only a delay or a stall: answer normally
        status = fault.status or 200
        headers = {} if fault.retry_after is None else {"Retry-After": _number(fault.retry_after)}
        body = fault.body if fault.body is not None else _error(f"Injected HTTP {status}", "injected")
        if fault.content_type is not None or isinstance(body, bytes):
            raw = body if isinstance(body, bytes) else _bytes(body if isinstance(body, str) else json.dumps(body))
            self._send_raw(status, raw, fault.content_type or "application/json", headers)
        else:
            self._send_json(status, body, headers)
        return True

    def _send_raw(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the client gave up (timed out) first

    def _send_events(self, chunks: list[JSONObject], *, stall_after: int | None) -> None:
        """``chunks`` as server-sent events, ended by ``[DONE]``; the body ends with the connection."""
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for number, chunk in enumerate(chunks):
                if stall_after is not None and number >= stall_after:
                    self.wfile.flush()
                    owner = self.server.owner
                    owner.wait(owner._stopping, 3600)  # until the client gives up or the server closes
                    return
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except OSError:
            pass  # the client gave up first

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        content_type = "text/plain" if isinstance(payload, str) else "application/json"
        self._send_raw(status, data, content_type, headers)


class ScriptedServer:
    """An OpenAI-compatible endpoint on loopback backed by ``model``. Use as a context manager."""

    def __init__(
        self,
        model: Model,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        strict: bool = False,
        streaming: str = "sse",
        chunk_chars: int = 16,
        report_usage: bool = True,
        wait: Callable[[threading.Event, float], bool] = threading.Event.wait,
    ) -> None:
        """``streaming``: ``sse`` streams when asked, ``refuse`` answers a streamed request with
        HTTP 400, ``ignore`` answers it with a plain completion (both as some servers do).
        ``report_usage=False`` leaves token usage out of every answer, as some local servers do.
        ``wait(stop, seconds)`` is how a hang, a delay or a stall pauses: it returns True when
        the server is closing (``stop`` is set), which ends the pause early. Tests pass a
        recorder to see the pauses asked for without taking them."""
        if not is_loopback_url(f"http://{_bracket(host)}/"):
            raise ConfigError(f"ScriptedServer only listens on loopback; got host {host!r}.", setting="host")
        if streaming not in STREAM_MODES:
            raise ConfigError(
                f"streaming must be one of {', '.join(STREAM_MODES)}; got {streaming!r}.", setting="streaming"
            )
        self.model = model
        self.strict = strict
        self.streaming = streaming
        self.chunk_chars = max(1, chunk_chars)
        self.report_usage = report_usage
        self.wait = wait
        self.host = host
        self._port = port
        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.request_count = 0  # chat-completion requests, faulted ones included
        self.authorizations: list[str | None] = []  # Authorization header of each request
        self.requests: list[Any] = []  # JSON body of each request (text if it was not JSON)
        self.errors: list[BaseException] = []  # what the model raised (answered with HTTP 400)

    # --- lifecycle

    def start(self) -> ScriptedServer:
        if self._httpd is None:
            server_class = _HTTPServer6 if ":" in self.host else _HTTPServer
            self._httpd = server_class((self.host, self._port), _Handler)
            self._httpd.owner = self
            self._port = self._httpd.server_address[1]
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="scripted-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        self._stopping.set()  # releases hanging handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise ConfigError("ScriptedServer is not started; use it as a context manager.", setting="server")
        return f"http://{_bracket(self.host)}:{self._port}/v1"

    # --- faults

    def inject(
        self,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        hang: float | None = None,
        drop: bool = False,
        body: Any = None,
        delay: float | None = None,
        content_type: str | None = None,
        events: Any = None,
        stall_after: int | None = None,
        times: int = 1,
    ) -> ScriptedServer:
        """Queue a fault for the next ``times`` chat requests (faults play in order).

        ``status`` (with optional ``retry_after`` seconds) answers with an error; ``hang``
        waits that long and then closes without answering; ``drop`` closes at once; ``body``
        serves a raw body (status 200 unless given; ``content_type`` claims any type, bytes go
        out verbatim); ``delay`` only slows the answer down; ``events`` serves a raw event
        stream; ``stall_after`` streams that many chunks of the real answer and then hangs.
        """
        fault = Fault(status, retry_after, hang, drop, body, delay, content_type, events, stall_after)
        if fault == Fault():
            raise ConfigError(
                "inject() needs status, hang, drop, body, delay, events or stall_after.", setting="inject"
            )
        with self._lock:
            self._faults.extend([fault] * times)
        return self

    @property
    def faults_pending(self) -> int:
        with self._lock:
            return len(self._faults)

    # --- called from handler threads

    def _record(self, authorization: str | None, body: Any) -> Fault | None:
        with self._lock:
            self.request_count += 1
            self.authorizations.append(authorization)
            self.requests.append(body)
            return self._faults.popleft() if self._faults else None

    def _answer(self, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict):
            return 400, _error("The request body is not a JSON object.", "invalid_request_error")
        if not isinstance(body.get("messages"), list):
            return 400, _error("The request needs a 'messages' list.", "invalid_request_error")
        streamed = bool(body.get("stream")) and self.streaming != "ignore"
        if streamed and self.streaming == "refuse":
            return 400, _error("This server does not support stream=true.", "invalid_request_error")
        problem = transcript_problem(body["messages"]) if self.strict else None
        if problem is not None:
            return 400, _error(problem, "invalid_request_error")
        try:
            result = self.model.complete(body["messages"], body.get("tools") or [])
        except Exception as exc:  # any failure of the scripted model goes back as HTTP 400
            with self._lock:
                self.errors.append(exc)
            return 400, _error(f"{type(exc).__name__}: {exc}", "scripted_model_error")
        with self._lock:
            number = self.request_count
        if streamed:
            options = body.get("stream_options")
            usage = self.report_usage and isinstance(options, dict) and bool(options.get("include_usage"))
            model = str(body.get("model", ""))
            return 200, stream_chunks(result, request_model=model, number=number, usage=usage, size=self.chunk_chars)
        payload = completion_payload(result, request_model=str(body.get("model", "")), number=number)
        if not self.report_usage:
            del payload["usage"]
        return 200, payload

    def models_payload(self) -> JSONObject:
        model: JSONObject = {"id": self.model.name, "object": "model", "created": 0, "owned_by": "toolsmith"}
        return {"object": "list", "data": [model]}


def completion_payload(reply: ModelReply, *, request_model: str = "", number: int = 1) -> JSONObject:
    """``reply`` as the JSON body of a ``chat.completion`` response."""
    message: JSONObject = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    usage = _usage_payload(reply)
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    return {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or request_model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage,
    }


def stream_chunks(
    reply: ModelReply, *, request_model: str = "", number: int = 1, usage: bool = False, size: int = 16
) -> list[JSONObject]:
    """``reply`` as the ``chat.completion.chunk`` objects of a stream, text cut every ``size`` characters."""
    base: JSONObject = {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": reply.model or request_model,
    }

    def chunk(delta: JSONObject, finish: str | None = None) -> JSONObject:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"reasoning_content": p}) for p in _pieces(reply.reasoning or "", size)]
    chunks += [chunk({"content": p}) for p in _pieces(reply.content or "", size)]
    for index, call in enumerate(reply.tool_calls):
        head: JSONObject = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [head]}))
        for piece in _pieces(call.arguments, size):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    chunks.append(chunk({}, reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")))
    if usage:
        chunks.append({**base, "choices": [], "usage": _usage_payload(reply)})
    return chunks


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def transcript_problem(messages: list[Any]) -> str | None:
    """Why a strict provider would refuse this transcript, or None when it is well formed."""
    pending: list[str] = []  # call ids of the last assistant message not yet answered
    seen: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return (
                    f"messages[{i}]: a tool message must answer a tool call of the assistant turn "
                    f"before it (tool_call_id {call_id!r})."
                )
            pending.remove(call_id)
            continue
        if pending:
            return f"messages[{i}]: tool calls {pending} of the assistant turn before have no tool message."
        if role == "assistant" and isinstance(message, dict):
            ids = [c.get("id") if isinstance(c, dict) else None for c in message.get("tool_calls") or []]
            names = [x for x in ids if isinstance(x, str) and x]
            if len(names) != len(ids):
                return f"messages[{i}]: every tool call needs a non-empty id."
            repeated = sorted({x for x in names if names.count(x) > 1 or x in seen})
            if repeated:
                return f"messages[{i}]: tool call ids {repeated} are used more than once."
            pending = names
            seen.update(names)
    return f"the transcript ends with unanswered tool calls {pending}." if pending else None


def _usage_payload(reply: ModelReply) -> JSONObject:
    usage: JSONObject = {
        "prompt_tokens": reply.usage.prompt_tokens,
        "completion_tokens": reply.usage.completion_tokens,
        "total_tokens": reply.usage.total_tokens,
    }
    if reply.usage.cost is not None:
        usage["cost"] = reply.usage.cost  # the way OpenRouter reports a charge
    return usage


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


def _route(path: str) -> str:
    """The path without query and without the ``/v1`` prefix."""
    path = path.split("?", 1)[0].rstrip("/")
    return path.removeprefix("/v1")


def _error(message: str, kind: str) -> JSONObject:
    return {"error": {"message": message, "type": kind, "code": kind}}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
