"""Reading what an endpoint sent into a :class:`~toolsmith.model.types.ModelReply`.

:func:`read_body` turns raw response bytes into the JSON object of a chat completion, and
refuses anything else (invalid UTF-8, an HTML page, text that is not JSON, JSON nested
too deeply, an error object instead of choices) with one :class:`ModelResponseError`.
:func:`parse_completion` reads that object, or an SDK object, defensively: OpenAI-compatible
servers differ in what they leave out. No provider SDK is needed here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from toolsmith.calls import JSONObject
from toolsmith.errors import ModelResponseError
from toolsmith.model import nesting
from toolsmith.model.types import ModelReply, ToolCallRequest, Usage, compute_cost
from toolsmith.redaction import Redactor

DETAIL_LIMIT = 300
_PREVIEW = 60


def redact(text: str, secret: str | None = None) -> str:
    """``text`` with ``secret`` and anything that looks like an API token blanked out."""
    return Redactor([secret] if secret else [], min_length=1).text(text)


def member(obj: Any, name: str) -> Any:
    """``obj[name]`` or ``obj.name``, None when absent: JSON and SDK objects read alike."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def preview(text: str) -> str:
    """The start of ``text`` for an error message: one line, bounded, secrets blanked."""
    start = redact(" ".join(text[:_PREVIEW].split()))
    return f"{start!r}..." if len(text) > _PREVIEW else repr(start)


def read_body(body: bytes) -> JSONObject:
    """The JSON object of a non-streamed response; ModelResponseError for anything else."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelResponseError(f"a body that is not valid UTF-8 (bad byte at offset {exc.start})") from None
    text = text.strip().removeprefix("\ufeff")
    if not text:
        raise ModelResponseError("an empty body", check_url=True)
    if text.startswith("<"):
        raise ModelResponseError(f"an HTML page ({preview(text)})", check_url=True)
    try:
        data = nesting.loads(text)
    except nesting.NestedTooDeeply as exc:
        raise ModelResponseError(str(exc)) from None
    except ValueError:
        raise ModelResponseError(f"a body that is not JSON ({preview(text)})", check_url=True) from None
    if not isinstance(data, dict):
        raise ModelResponseError(f"JSON that is not an object ({preview(text)})", check_url=True)
    return data


def parse_completion(
    response: Any, *, model: str, prices: Mapping[str, tuple[float, float]] | None = None
) -> ModelReply:
    """A chat completion (its JSON object, or an SDK object) as a :class:`ModelReply`."""
    if isinstance(response, (str, bytes)):
        text = response.decode("utf-8", "replace") if isinstance(response, bytes) else response
        raise ModelResponseError(f"text, not JSON ({preview(text)})", check_url=True)
    choices = member(response, "choices")
    if not isinstance(choices, list) or not choices:
        error = member(response, "error")
        if error:
            message = member(error, "message") if not isinstance(error, str) else error
            raise ModelResponseError(f"an error instead of an answer: {redact(str(message or error))[:DETAIL_LIMIT]}")
        raise ModelResponseError("JSON without any choices", check_url=True)
    choice = choices[0]
    message = member(choice, "message")
    if message is None:
        raise ModelResponseError("a choice that has no message")
    raw_calls = member(message, "tool_calls")
    calls = tuple(tool_call(raw, i) for i, raw in enumerate(raw_calls if isinstance(raw_calls, list) else []))
    answered_by = member(response, "model") or model
    reasoning = reasoning_text(message)
    finish = member(choice, "finish_reason")
    return ModelReply(
        content=text_of(member(message, "content")),
        tool_calls=calls,
        usage=usage_of(member(response, "usage"), (model, str(answered_by)), prices or {}),
        model=str(answered_by),
        finish_reason=finish if isinstance(finish, str) else None,
        reasoning=reasoning or None,
    )


def reasoning_text(message: Any) -> str:
    """The reasoning a message carries: ``reasoning_content`` (DeepSeek, Kimi, vLLM) or ``reasoning``."""
    for name in ("reasoning_content", "reasoning"):
        value = member(message, name)
        if isinstance(value, str) and value:
            return value
    return ""


def text_of(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts, as some servers send them
        return "".join(str(member(p, "text") or "") for p in content)
    return str(content)


def tool_call(raw: Any, index: int) -> ToolCallRequest:
    function = member(raw, "function")
    name = member(function, "name")
    # A nameless call is the model's mistake to fix: the toolbox answers it with an error
    # result, rather than the whole task ending here.
    name = name if isinstance(name, str) else ""
    call_id = member(raw, "id")
    return ToolCallRequest(
        id=str(call_id) if call_id else f"call_{index}",
        name=name,
        arguments=arguments_text(member(function, "arguments")),
    )


def arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False)  # some servers send an object
    except (TypeError, ValueError, RecursionError):
        return str(arguments)


def usage_of(raw: Any, models: Sequence[str], prices: Mapping[str, tuple[float, float]]) -> Usage:
    if raw is None:
        return Usage()
    prompt = _count(member(raw, "prompt_tokens"))
    completion = _count(member(raw, "completion_tokens"))
    total = _count(member(raw, "total_tokens")) or prompt + completion
    cost = compute_cost(prices, models, prompt, completion)
    reported = member(raw, "cost")  # OpenRouter reports what it charged
    if (
        cost is None
        and isinstance(reported, (int, float))
        and not isinstance(reported, bool)
        and math.isfinite(reported)
    ):
        cost = float(reported)
    return Usage(prompt, completion, total, cost)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
