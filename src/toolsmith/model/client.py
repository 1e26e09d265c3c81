"""The OpenAI-compatible client: :class:`ChatModel` talks to any ``/chat/completions``
endpoint through the official SDK.

ChatModel retries on its own (the SDK's retries are switched off) so that the budget is
bounded in attempts *and* in wall time, ``Retry-After`` is honoured, and every retry can be
reported to the agent as an event. This is the only module of :mod:`toolsmith.model` that
imports the SDK.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any

import openai

from toolsmith.errors import ModelConfigError, ModelError, ModelRetryExhausted
from toolsmith.model.ban import check_endpoint_allowed
from toolsmith.model.completion import DETAIL_LIMIT, parse_completion, redact
from toolsmith.model.retry import RetryPolicy, parse_retry_after
from toolsmith.model.types import ModelReply
from toolsmith.providers import LOCAL_PLACEHOLDER_KEY, ProviderConfig

_RETRYABLE = (408, 409, 429)


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
        return text if len(text) <= DETAIL_LIMIT else text[:DETAIL_LIMIT] + "..."


def _error_code(exc: openai.APIStatusError) -> str | None:
    return exc.code if isinstance(exc.code, str) else None
