"""The OpenAI-compatible client: :class:`ChatModel` talks to any ``/chat/completions``
endpoint through the official SDK. This is the only module of :mod:`toolsmith.model`
that imports the SDK.

* Retries are ChatModel's own (the SDK's are off): on 429, 5xx, dropped connections and
  connect timeouts, within a :class:`~toolsmith.model.retry.RetryPolicy` that stops on
  time; each retry is reported through ``on_retry``.
* A request that got no answer within ``timeout_s`` is not sent again by default: the
  server is most likely still generating. The error names the setting to raise.
* The completion is streamed where the endpoint allows it, and progress is reported
  through ``on_progress``; an endpoint that refuses or ignores streaming is then asked
  without it for the rest of the session.
* Bodies are read by :mod:`toolsmith.model.completion`, never by the SDK's parser, so a
  body that is not a chat completion is one clear :class:`ModelResponseError`.
"""

from __future__ import annotations

import contextlib
import importlib
import random
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

import httpx
import openai

from toolsmith.config.providers import LOCAL_PLACEHOLDER_KEY, ProviderConfig, is_loopback_url
from toolsmith.errors import ModelConfigError, ModelError, ModelResponseError, ModelRetryExhausted, ModelTimeoutError
from toolsmith.interrupts import caused_by
from toolsmith.model.ban import check_endpoint_allowed
from toolsmith.model.completion import DETAIL_LIMIT, parse_completion, read_body, redact
from toolsmith.model.retry import DEFAULT_TIMEOUT_S, RetryPolicy, Stop, parse_retry_after
from toolsmith.model.stream import StreamProgress, StreamReader
from toolsmith.model.types import ChatMessage, ModelReply, ToolSchema, with_usage_estimated

if TYPE_CHECKING:
    from openai.types.chat import (
        ChatCompletionMessageParam,
        ChatCompletionStreamOptionsParam,
        ChatCompletionToolUnionParam,
    )

_RETRYABLE = (408, 409, 429)
_CONNECT_TIMEOUT_S = 10.0


def _http_libraries() -> tuple[Any, ...]:
    """The HTTP libraries whose errors the SDK wraps: httpx, and httpx2 (which newer SDKs
    send with). Their exception hierarchies mirror each other, class for class."""
    found: list[Any] = [httpx]
    with contextlib.suppress(ImportError):  # an SDK that still sends with httpx has no httpx2
        found.append(importlib.import_module("httpx2"))
    return tuple(found)


def _classes(pick: Callable[[Any], tuple[type[Exception], ...]]) -> tuple[type[Exception], ...]:
    return tuple(cls for library in _http_libraries() for cls in pick(library))


# Timeouts before any request reached the server: nothing is generating, so they are retried.
_EARLY_TIMEOUTS = _classes(lambda h: (h.ConnectTimeout, h.PoolTimeout))
# Failures before the request went out: the endpoint was never reached.
_NOT_CONNECTED = _classes(lambda h: (h.ConnectError, h.ConnectTimeout, h.UnsupportedProtocol, h.LocalProtocolError))
_TRANSPORT_ERRORS = _classes(lambda h: (h.TransportError,))
_TIMEOUTS = _classes(lambda h: (h.TimeoutException,))
TIMEOUT_SETTING = "model.timeout_s (TOOLSMITH_MODEL_TIMEOUT_S)"
RETRY_SETTING = "model.retry_total_s (TOOLSMITH_MODEL_RETRY_TOTAL_S)"
ATTEMPTS_SETTING = "model.max_attempts (TOOLSMITH_MODEL_MAX_ATTEMPTS)"


# A model server on this machine that refuses connections is not running (a restart is
# over within seconds); retrying it for the whole retry budget only delays the hint.
LOOPBACK_REFUSED_S = 3.0


class _Transient(Exception):
    """One failed attempt worth another try: why, and the provider's Retry-After.
    ``refused_here``: a server on this machine refused the connection."""

    def __init__(
        self, reason: str, retry_after: float | None = None, *, reached: bool = True, refused_here: bool = False
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.reached = reached
        self.refused_here = refused_here


class _Needed(TypedDict):
    model: str
    messages: list[ChatCompletionMessageParam]


class _Request(_Needed, total=False):
    """The SDK's arguments for one completion, which mypy checks against its signature."""

    tools: list[ChatCompletionToolUnionParam]
    tool_choice: Literal["auto"]
    stream_options: ChatCompletionStreamOptionsParam


def request_of(name: str, messages: Sequence[ChatMessage], tools: Sequence[ToolSchema]) -> _Request:
    """The transcript and tools in the SDK's types: the one place they cross into it."""
    # ChatMessage and ToolSchema are the OpenAI shapes the SDK's param types describe; they
    # go as they are. A ChatMessage may carry reasoning_content (thinking models need it
    # back), which the SDK's types lack and the SDK sends on unchanged.
    request: _Request = {"model": name, "messages": cast("list[ChatCompletionMessageParam]", list(messages))}
    if tools:
        request["tools"] = cast("list[ChatCompletionToolUnionParam]", list(tools))
        request["tool_choice"] = "auto"
    return request


class ChatModel:
    """A :class:`~toolsmith.model.Model` backed by an OpenAI-compatible endpoint."""

    def __init__(
        self,
        config: ProviderConfig,
        *,
        prices: Mapping[str, tuple[float, float]] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        stream: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
        on_retry: Callable[[int, float, str], None] | None = None,
        on_progress: Callable[[StreamProgress], None] | None = None,
    ) -> None:
        self.config = config
        self.name = config.model
        self.prices = dict(prices or {})
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.stream = stream
        self.on_retry = on_retry
        self.on_progress = on_progress
        self._sleep = sleep
        self._clock = clock
        self._rng = rng
        self._usage_in_stream = True  # drop stream_options once an endpoint refuses them
        # Never hand the SDK an empty key: it would fall back to OPENAI_API_KEY from the
        # environment and send that to whatever endpoint this is.
        key = config.api_key or LOCAL_PLACEHOLDER_KEY
        self._client = openai.OpenAI(
            api_key=key,
            base_url=config.base_url,
            max_retries=0,
            timeout=self._timeout(),
            # An explicit header stops OPENAI_CUSTOM_HEADERS from swapping in another key.
            default_headers={"Authorization": f"Bearer {key}"},
        )

    @property
    def base_url(self) -> str:
        """The endpoint actually used (the SDK's default when the config has none)."""
        return str(self._client.base_url).rstrip("/")

    def __repr__(self) -> str:
        where = f"provider={self.config.provider!r}, base_url={self.base_url!r}"
        return f"ChatModel(model={self.name!r}, {where})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ChatModel:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- one completion, with retries

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSchema]) -> ModelReply:
        """One chat completion, retried on transient failures within the retry policy."""
        check_endpoint_allowed(self.base_url)
        request = request_of(self.name, messages, tools)
        started = self._clock()
        attempt = 0
        while True:
            attempt += 1
            try:
                # Local servers often report no usage; an estimate keeps budget.max_tokens working.
                return with_usage_estimated(messages, tools, self._attempt(request))
            except _Transient as failure:
                self._before_retry(attempt, started, failure)

    def _attempt(self, request: _Request) -> ModelReply:
        """One request; raises _Transient for what is worth another try."""
        streaming = self.stream
        try:
            if streaming:
                return self._streamed(request)
            raw = self._client.chat.completions.with_raw_response.create(**request, timeout=self._timeout())
            return self._reply(raw.http_response.content)
        except openai.APIStatusError as exc:
            if streaming and self._streaming_refused(exc):
                return self._attempt(request)
            raise self._status_failure(exc) from None
        except openai.APITimeoutError as exc:
            raise self._timeout_failure(exc, None) from None
        except openai.APIConnectionError as exc:
            # Refused or unresolvable: the endpoint was never reached. A connection dropped
            # after the request went out was reached, and only answered badly.
            reached = not isinstance(exc.__cause__, _NOT_CONNECTED)
            refused_here = not reached and _refused(exc) and is_loopback_url(self.base_url)
            reason = f"connection failed: {self._detail(exc.__cause__ or exc)}"
            raise _Transient(reason, reached=reached, refused_here=refused_here) from None

    def _before_retry(self, attempt: int, started: float, failure: _Transient) -> None:
        elapsed = self._clock() - started
        verdict = self.retry.next_delay(attempt, elapsed, failure.retry_after, self._rng)
        if failure.refused_here and (isinstance(verdict, Stop) or elapsed + verdict > LOOPBACK_REFUSED_S):
            raise self._nothing_listening(attempt, elapsed)
        if isinstance(verdict, Stop):
            raise self._exhausted(verdict, attempt, elapsed, failure)
        if self.on_retry is not None:
            self.on_retry(attempt, verdict, failure.reason)
        self._sleep(verdict)

    def _nothing_listening(self, attempt: int, elapsed: float) -> ModelConfigError:
        variable = self.config.url_variable or "LLM_BASE_URL"
        return ModelConfigError(
            f"Nothing is listening at {self.base_url}: the connection was refused ({attempt} attempt(s) in "
            f"{elapsed:.1f}s). Start the model server there, or point {variable} at one that runs; "
            f"`toolsmith doctor` checks the endpoint.",
            setting=variable,
        )

    def _exhausted(self, why: Stop, attempt: int, elapsed: float, failure: _Transient) -> ModelRetryExhausted:
        tried = f"{attempt} attempt(s) in {elapsed:.1f}s"
        if why is Stop.RETRY_AFTER:
            left = max(0.0, self.retry.total_s - elapsed)
            message = (
                f"{self._where()} asked to wait {failure.retry_after:g}s before trying again "
                f"(Retry-After), more than the {left:.0f}s left of the retry budget {RETRY_SETTING}. "
                f"Not retried; last error: {failure.reason}."
            )
        else:
            setting = ATTEMPTS_SETTING if why is Stop.ATTEMPTS else RETRY_SETTING
            message = (
                f"{self._where()} kept failing: {tried}, last error: {failure.reason}. Try again later, "
                f"check that the endpoint is up, or allow more with {setting}."
            )
        return ModelRetryExhausted(
            message,
            attempts=attempt,
            last_error=failure.reason,
            reached=failure.reached,
            retry_after=failure.retry_after,
        )

    # --- streaming

    def _streamed(self, request: _Request) -> ModelReply:
        if self._usage_in_stream:
            request = {**request, "stream_options": {"include_usage": True}}
        stream = self._client.chat.completions.create(**request, stream=True, timeout=self._timeout())
        with stream:
            content_type = stream.response.headers.get("content-type", "")
            if "event-stream" not in content_type:
                # The endpoint ignored stream=True and sent the whole completion.
                self.stream = False
                return self._reply(_read(stream.response))
            reader = StreamReader(clock=self._clock, on_progress=self.on_progress)
            try:
                reader.read(stream)
            except openai.APITimeoutError as exc:
                raise self._timeout_failure(exc, reader) from None
            except ModelResponseError as exc:
                raise self._bad_body(exc) from None
            except (openai.APIStatusError, openai.APIConnectionError):
                raise
            except openai.APIError as exc:
                # An error event in the middle of the stream (OpenRouter sends these).
                raise _Transient(f"error in the stream after {reader.describe()}: {self._detail(exc)}") from None
        try:
            return reader.reply(model=self.name, prices=self.prices)
        except ModelResponseError as exc:
            raise self._bad_body(exc) from None

    def _streaming_refused(self, exc: openai.APIStatusError) -> bool:
        """True (and streaming adjusted) when ``exc`` says the endpoint cannot stream."""
        detail = self._detail(exc).lower()
        if exc.status_code not in (400, 404, 415, 422, 501) or "stream" not in detail:
            return False
        if "stream_options" in detail or "include_usage" in detail:
            if not self._usage_in_stream:
                return False
            self._usage_in_stream = False
        else:
            self.stream = False
        return True

    # --- reading answers and failures

    def _reply(self, body: bytes) -> ModelReply:
        try:
            return parse_completion(read_body(body), model=self.name, prices=self.prices)
        except ModelResponseError as exc:
            raise self._bad_body(exc) from None

    def _bad_body(self, exc: ModelResponseError) -> ModelResponseError:
        """``exc`` (which says what arrived) as the message a user can act on."""
        message = f"{self._where()} answered with {exc}, not a usable chat completion."
        if exc.check_url:
            variable = self.config.url_variable or "LLM_BASE_URL"
            message += f" Check that {variable} is the API's base URL (it usually ends in /v1)."
        return ModelResponseError(message, check_url=exc.check_url)

    def _timeout_failure(self, exc: openai.APITimeoutError, reader: StreamReader | None) -> Exception:
        if isinstance(exc.__cause__, _EARLY_TIMEOUTS):
            return _Transient(f"could not connect within {_CONNECT_TIMEOUT_S:g}s", reached=False)
        if reader is not None and reader.received:
            what = f"stopped sending after {reader.describe()}: no data for {self.timeout:g}s"
        else:
            what = f"sent no answer within {self.timeout:g}s"
        if self.retry.retry_timeouts:
            return _Transient(what)
        return ModelTimeoutError(
            f"{self._where()} {what}. A slow local or reasoning model may need longer: raise "
            f"{TIMEOUT_SETTING}. The request was not sent again, so the server is not asked to "
            f"generate the same answer twice (model.retry_timeouts = true would retry it).",
            setting="model.timeout_s",
            timeout_s=self.timeout,
        )

    def _status_failure(self, exc: openai.APIStatusError) -> Exception:
        """A _Transient for a status worth retrying; the ModelError to raise otherwise."""
        status = exc.status_code
        detail = self._detail(exc)
        if status == 429 and _error_code(exc) == "insufficient_quota":
            return ModelError(
                f"{self._where()} refused: the account has no quota left (HTTP 429): {detail}. "
                f"Add credit, or pick another provider with LLM_PROVIDER."
            )
        if status in _RETRYABLE or status >= 500:
            label = "rate limited" if status == 429 else "server error" if status >= 500 else "busy"
            return _Transient(f"HTTP {status} {label}: {detail}", parse_retry_after(exc.response.headers))
        return self._fatal(status, detail, _error_code(exc))

    def _fatal(self, status: int, detail: str, code: str | None) -> ModelError:
        where = self._where()
        if status in (401, 403):
            variable = self.config.key_variable or "LLM_API_KEY"
            what = "rejected the API key" if status == 401 else "refused access"
            return ModelConfigError(f"{where} {what} (HTTP {status}): {detail}. Check {variable}.", setting=variable)
        if status == 404:
            if code == "model_not_found" or "model" in detail.lower():
                hint, setting = "Set LLM_MODEL (or --model) to a model this endpoint serves.", "LLM_MODEL"
            else:
                setting = self.config.url_variable or "LLM_BASE_URL"
                hint = f"Check the base URL ({setting}); it usually ends in /v1."
            return ModelConfigError(f"{where} has no model {self.name!r} (HTTP 404): {detail}. {hint}", setting=setting)
        hint = ""
        if "tool" in detail.lower() and "support" in detail.lower():
            hint = " Pick a model with tool (function) calling via LLM_MODEL."
        return ModelError(f"{where} rejected the request (HTTP {status}): {detail}.{hint}")

    def _timeout(self) -> openai.Timeout:
        # Connecting is quick or hopeless; only reading waits for the model to generate.
        return openai.Timeout(self.timeout, connect=min(self.timeout, _CONNECT_TIMEOUT_S))

    def _where(self) -> str:
        return f"The {self.config.provider} endpoint {self.base_url}"

    def _detail(self, exc: BaseException) -> str:
        body = exc.body if isinstance(exc, openai.APIError) else None  # a transport error has none
        text = str(exc)
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            text = body["message"]
        elif isinstance(body, str) and body.strip():
            text = body
        secret = self.config.api_key if self.config.key_present else None
        text = redact(" ".join(text.split()), secret)
        return text if len(text) <= DETAIL_LIMIT else text[:DETAIL_LIMIT] + "..."


def _refused(exc: BaseException) -> bool:
    """True when a refused connection (nothing listens at the port) lies behind ``exc``."""
    return caused_by(exc, ConnectionRefusedError)


def _error_code(exc: openai.APIStatusError) -> str | None:
    return exc.code if isinstance(exc.code, str) else None


def _read(response: Any) -> bytes:
    """The whole body of a streamed response that turned out not to be a stream."""
    try:
        data = response.read()
    except _TIMEOUTS as exc:
        raise openai.APITimeoutError(request=response.request) from exc
    except _TRANSPORT_ERRORS as exc:
        raise openai.APIConnectionError(request=response.request) from exc
    return bytes(data)
