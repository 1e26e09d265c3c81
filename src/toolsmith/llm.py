"""The model client: the reply types the agent loop reads, and :class:`ChatModel`, which talks
to any OpenAI-compatible chat-completions endpoint through the official SDK.

ChatModel retries on its own (the SDK's retries are switched off) so that the budget is
bounded in attempts *and* in wall time, ``Retry-After`` is honoured, and every retry can be
reported to the agent as an event. Provider selection lives in :mod:`toolsmith.providers`
and is re-exported here.

Tests never reach a real model: :func:`ban_real_models` (switched on for every test by
``tests/conftest.py``) makes ChatModel refuse any endpoint that is not on loopback, before
any network I/O. ``TOOLSMITH_ALLOW_REAL_MODEL=1`` lifts the ban on purpose;
``TOOLSMITH_BAN_REAL_MODEL=1`` imposes it on child processes that cannot see the switch.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

import openai

from toolsmith.errors import ModelConfigError, ModelError, ModelResponseError, ModelRetryExhausted
from toolsmith.providers import (
    LOCAL_PLACEHOLDER_KEY,
    PLACEHOLDER_KEYS,
    ProviderConfig,
    is_local_url,
    is_loopback_url,
    load_dotenv_files,
    openrouter_model,
    resolve_provider,
)
from toolsmith.redaction import Redactor

__all__ = [
    "LOCAL_PLACEHOLDER_KEY",
    "PLACEHOLDER_KEYS",
    "ChatModel",
    "Model",
    "ModelReply",
    "ProviderConfig",
    "RetryPolicy",
    "ToolCallRequest",
    "Usage",
    "allow_real_models",
    "ban_real_models",
    "check_endpoint_allowed",
    "compute_cost",
    "is_local_url",
    "is_loopback_url",
    "load_dotenv_files",
    "openrouter_model",
    "parse_completion",
    "real_models_allowed",
    "resolve_provider",
]

# --- the real-model ban ---------------------------------------------------------------

REAL_MODELS_ALLOWED = True
ALLOW_ENV = "TOOLSMITH_ALLOW_REAL_MODEL"
BAN_ENV = "TOOLSMITH_BAN_REAL_MODEL"


def ban_real_models() -> None:
    """From now on ChatModel refuses every endpoint that is not on loopback."""
    global REAL_MODELS_ALLOWED
    REAL_MODELS_ALLOWED = False


def allow_real_models() -> None:
    global REAL_MODELS_ALLOWED
    REAL_MODELS_ALLOWED = True


def real_models_allowed(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    if env.get(ALLOW_ENV, "").strip() == "1":
        return True
    if env.get(BAN_ENV, "").strip() == "1":
        return False
    return REAL_MODELS_ALLOWED


def check_endpoint_allowed(base_url: str) -> None:
    """Raise :class:`ModelError` when real models are banned and ``base_url`` is not local."""
    if is_loopback_url(base_url) or real_models_allowed():
        return
    raise ModelError(
        f"Real model calls are banned in this process (tests): refusing to contact {base_url}. "
        f"Point the model at a toolsmith.testing.ScriptedServer, or set {ALLOW_ENV}=1 to "
        f"lift the ban on purpose."
    )


# --- what a model returns -------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Tokens of one or more model calls, and their cost when a price is known."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        cost = None
        if self.cost is not None or other.cost is not None:
            cost = (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            cost,
        )

    def __radd__(self, other: object) -> Usage:
        # Lets sum(usages) start from the integer 0.
        if other == 0:
            return self
        return NotImplemented


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call as the model sent it; ``arguments`` is the raw (maybe broken) JSON."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelReply:
    """One assistant turn."""

    content: str | None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None
    # The model's reasoning text (``reasoning_content``) where the provider sends one.
    reasoning: str | None = None

    def assistant_message(self) -> dict[str, Any]:
        """This turn as an OpenAI-format assistant message, to append to the transcript."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
            if self.reasoning:
                # Thinking models (Kimi, DeepSeek) reject a tool-call turn replayed without it.
                message["reasoning_content"] = self.reasoning
        elif self.content is None:
            message["content"] = ""  # several local servers refuse a null content here
        return message


@runtime_checkable
class Model(Protocol):
    """Anything that can answer a transcript: ChatModel, ScriptedModel."""

    name: str

    def complete(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> ModelReply: ...


# --- retry policy ---------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """How long to keep trying on transient failures: bounded in attempts and in time."""

    max_attempts: int = 5
    max_total_s: float = 120.0
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: Callable[[], float]) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        The server's ``Retry-After`` wins, capped at ``max_delay_s``; otherwise exponential
        backoff with full jitter, so many clients hit by the same outage spread out.
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        return ceiling * rng()


_RETRYABLE = (408, 409, 429)
_DETAIL_LIMIT = 300


# --- the client -----------------------------------------------------------------------


class ChatModel:
    """A :class:`Model` backed by an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self,
        config: ProviderConfig,
        *,
        prices: Mapping[str, tuple[float, float]] | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
        on_retry: Callable[[int, float, str], None] | None = None,
    ) -> None:
        self.config = config
        self.name = config.model
        self.prices = dict(prices or {})
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.on_retry = on_retry
        self._sleep = sleep
        self._clock = clock
        self._rng = rng
        # Never hand the SDK an empty key: it would fall back to OPENAI_API_KEY from the
        # environment and send that to whatever endpoint this is.
        key = config.api_key or LOCAL_PLACEHOLDER_KEY
        self._client = openai.OpenAI(
            api_key=key,
            base_url=config.base_url,
            max_retries=0,
            timeout=timeout,
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

    def complete(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> ModelReply:
        """One chat completion, retried on 429/5xx/timeouts/dropped connections."""
        check_endpoint_allowed(self.base_url)
        request: dict[str, Any] = {"model": self.name, "messages": list(messages)}
        if tools:
            request["tools"] = list(tools)
            request["tool_choice"] = "auto"
        started = self._clock()
        attempt = 0
        while True:
            attempt += 1
            timeout = max(0.01, min(self.timeout, self.retry.max_total_s - (self._clock() - started)))
            try:
                response = self._client.chat.completions.create(**request, timeout=timeout)
            except openai.APIStatusError as exc:
                reason, retry_after = self._transient_status(exc)
            except openai.APITimeoutError:
                reason, retry_after = f"no answer within {timeout:.1f}s", None
            except openai.APIConnectionError as exc:
                reason, retry_after = (
                    f"connection failed: {self._detail(exc.__cause__ or exc)}",
                    None,
                )
            else:
                return parse_completion(response, model=self.name, prices=self.prices)
            self._before_retry(attempt, started, reason, retry_after)

    def _before_retry(self, attempt: int, started: float, reason: str, retry_after: float | None) -> None:
        delay = self.retry.delay(attempt, retry_after, self._rng)
        elapsed = self._clock() - started
        if attempt >= self.retry.max_attempts or elapsed + delay >= self.retry.max_total_s:
            raise ModelRetryExhausted(
                f"{self._where()} kept failing: {attempt} attempt(s) in {elapsed:.1f}s, last "
                f"error: {reason}. Try again later, or check that the endpoint is up.",
                attempts=attempt,
                last_error=reason,
            )
        if self.on_retry is not None:
            self.on_retry(attempt, delay, reason)
        self._sleep(delay)

    def _transient_status(self, exc: openai.APIStatusError) -> tuple[str, float | None]:
        """(reason, Retry-After) for a status worth retrying; raise ModelError otherwise."""
        status = exc.status_code
        detail = self._detail(exc)
        if status == 429 and _error_code(exc) == "insufficient_quota":
            raise ModelError(
                f"{self._where()} refused: the account has no quota left (HTTP 429): {detail}. "
                f"Add credit, or pick another provider with LLM_PROVIDER."
            ) from None
        if status in _RETRYABLE or status >= 500:
            label = "rate limited" if status == 429 else "server error" if status >= 500 else "busy"
            return f"HTTP {status} {label}: {detail}", parse_retry_after(exc.response.headers)
        raise self._fatal(status, detail, _error_code(exc)) from None

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
                hint, setting = "Check the base URL (LLM_BASE_URL); it usually ends in /v1.", "LLM_BASE_URL"
            return ModelConfigError(f"{where} has no model {self.name!r} (HTTP 404): {detail}. {hint}", setting=setting)
        hint = ""
        if "tool" in detail.lower() and "support" in detail.lower():
            hint = " Pick a model with tool (function) calling via LLM_MODEL."
        return ModelError(f"{where} rejected the request (HTTP {status}): {detail}.{hint}")

    def _where(self) -> str:
        return f"The {self.config.provider} endpoint {self.base_url}"

    def _detail(self, exc: BaseException) -> str:
        body = getattr(exc, "body", None)
        text = str(exc)
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            text = body["message"]
        elif isinstance(body, str) and body.strip():
            text = body
        secret = self.config.api_key if self.config.key_present else None
        text = redact(" ".join(text.split()), secret)
        return text if len(text) <= _DETAIL_LIMIT else text[:_DETAIL_LIMIT] + "..."


# --- helpers shared with the test doubles ---------------------------------------------


def redact(text: str, secret: str | None = None) -> str:
    """``text`` with ``secret`` and anything that looks like an API token blanked out."""
    return Redactor([secret] if secret else [], min_length=1).text(text)


def _error_code(exc: openai.APIStatusError) -> str | None:
    return exc.code if isinstance(exc.code, str) else None


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        value: float | None
        try:
            value = float(raw) * scale
        except ValueError:
            value = _seconds_until(raw)
        if value is not None and math.isfinite(value) and value >= 0:
            return value
    return None


def _seconds_until(http_date: str) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def compute_cost(
    prices: Mapping[str, tuple[float, float]],
    models: Sequence[str],
    prompt_tokens: int,
    completion_tokens: int,
) -> float | None:
    """Cost from the first of ``models`` found in ``prices`` (per million tokens)."""
    for model in models:
        if model in prices:
            per_input, per_output = prices[model]
            return (prompt_tokens * per_input + completion_tokens * per_output) / 1_000_000
    return None


def parse_completion(
    response: Any, *, model: str, prices: Mapping[str, tuple[float, float]] | None = None
) -> ModelReply:
    """A chat.completion (SDK object) as a :class:`ModelReply`.

    Read defensively: OpenAI-compatible servers differ in what they leave out.
    """
    if isinstance(response, (str, bytes)):
        start = redact(str(response)[:80])
        raise ModelResponseError(
            f"The model endpoint answered with something that is not a chat completion "
            f"({start!r}...). Check that the base URL (LLM_BASE_URL) is the API, usually "
            f"ending in /v1."
        )
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        error = getattr(response, "error", None)
        why = f": {redact(str(error))[:_DETAIL_LIMIT]}" if error else ""
        raise ModelResponseError(f"The model endpoint answered without any choices{why}.")
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        raise ModelResponseError("The model endpoint answered with a choice that has no message.")
    calls = tuple(_tool_call(raw, i) for i, raw in enumerate(getattr(message, "tool_calls", None) or []))
    answered_by = getattr(response, "model", None) or model
    reasoning = getattr(message, "reasoning_content", None)
    return ModelReply(
        content=_text(getattr(message, "content", None)),
        tool_calls=calls,
        usage=_usage(getattr(response, "usage", None), (model, str(answered_by)), prices or {}),
        model=str(answered_by),
        finish_reason=getattr(choice, "finish_reason", None),
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
    )


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts, as some servers send them
        parts = [p.get("text", "") if isinstance(p, dict) else getattr(p, "text", "") for p in content]
        return "".join(str(p) for p in parts)
    return str(content)


def _tool_call(raw: Any, index: int) -> ToolCallRequest:
    function = getattr(raw, "function", None)
    name = getattr(function, "name", None)
    # A nameless call is the model's mistake to fix: the toolbox answers it with an error
    # result, rather than the whole task ending here.
    name = name if isinstance(name, str) else ""
    arguments = getattr(function, "arguments", None)
    if arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)  # some servers send an object
    call_id = getattr(raw, "id", None)
    return ToolCallRequest(id=str(call_id) if call_id else f"call_{index}", name=name, arguments=arguments)


def _usage(raw: Any, models: Sequence[str], prices: Mapping[str, tuple[float, float]]) -> Usage:
    if raw is None:
        return Usage()
    prompt = _count(getattr(raw, "prompt_tokens", 0))
    completion = _count(getattr(raw, "completion_tokens", 0))
    total = _count(getattr(raw, "total_tokens", 0)) or prompt + completion
    cost = compute_cost(prices, models, prompt, completion)
    reported = getattr(raw, "cost", None)  # OpenRouter reports what it charged
    if cost is None and isinstance(reported, (int, float)) and not isinstance(reported, bool):
        cost = float(reported)
    return Usage(prompt, completion, total, cost)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
