"""Reading a chat completion into a :class:`~toolsmith.model.types.ModelReply`.

The response is read by attribute, defensively, so this module needs no provider SDK:
OpenAI-compatible servers differ in what they leave out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolsmith.errors import ModelResponseError
from toolsmith.model.types import ModelReply, ToolCallRequest, Usage, compute_cost
from toolsmith.redaction import Redactor

DETAIL_LIMIT = 300


def redact(text: str, secret: str | None = None) -> str:
    """``text`` with ``secret`` and anything that looks like an API token blanked out."""
    return Redactor([secret] if secret else [], min_length=1).text(text)


def parse_completion(
    response: Any, *, model: str, prices: Mapping[str, tuple[float, float]] | None = None
) -> ModelReply:
    """A chat.completion (SDK object) as a :class:`ModelReply`."""
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
        why = f": {redact(str(error))[:DETAIL_LIMIT]}" if error else ""
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
