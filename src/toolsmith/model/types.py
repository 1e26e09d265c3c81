"""Provider-neutral model types: what a model returns, and the :class:`Model` protocol.

Nothing here imports a provider SDK, so the agent loop, :mod:`toolsmith.model.replies` and the
test doubles can use these types without loading one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Usage:
    """Tokens of one or more model calls, and their cost when a price is known.

    ``estimated`` is set when an endpoint reported no usage and the counts were estimated
    from characters (:func:`estimate_usage`), so a token budget still holds.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None
    estimated: bool = False

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
            self.estimated or other.estimated,
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


def estimate_tokens(value: Any) -> int:
    """About four characters per token, the usual rule of thumb for English and JSON."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return math.ceil(len(text) / 4)


def estimate_usage(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], reply: ModelReply
) -> Usage:
    """The usage of one call whose endpoint reported none, estimated from what went each way."""
    prompt = estimate_tokens(list(messages)) + (estimate_tokens(list(tools)) if tools else 0)
    completion = estimate_tokens(reply.content or "") + sum(
        estimate_tokens(call.name) + estimate_tokens(call.arguments) for call in reply.tool_calls
    )
    return Usage(prompt, completion, prompt + completion, reply.usage.cost, estimated=True)


def with_usage_estimated(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], reply: ModelReply
) -> ModelReply:
    """``reply`` as it is when its usage was reported, else with an estimate."""
    if reply.usage.total_tokens > 0:
        return reply
    return replace(reply, usage=estimate_usage(messages, tools, reply))


@runtime_checkable
class Model(Protocol):
    """Anything that can answer a transcript: ChatModel, ScriptedModel."""

    name: str

    def complete(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> ModelReply: ...


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
