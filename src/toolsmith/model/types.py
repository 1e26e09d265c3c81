"""Provider-neutral model types: what a model is sent and returns, and the :class:`Model` protocol.

A transcript is a list of :class:`ChatMessage` (OpenAI format, defined beside the call
protocol in :mod:`toolsmith.calls` so that task records can keep one) and the tools offered
are :class:`ToolSchema` function definitions.

Nothing here imports a provider SDK, so the agent loop, :mod:`toolsmith.model.replies` and the
test doubles can use these types without loading one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol, TypedDict, runtime_checkable

from toolsmith.calls import ChatMessage as ChatMessage
from toolsmith.calls import FunctionCall as FunctionCall
from toolsmith.calls import JSONObject
from toolsmith.calls import MessageToolCall as MessageToolCall
from toolsmith.calls import Role as Role


class FunctionSchema(TypedDict):
    """A function offered to a model: ``parameters`` is its JSON Schema (open-ended JSON)."""

    name: str
    description: str
    parameters: JSONObject


class ToolSchema(TypedDict):
    """A tool as an OpenAI-compatible model is offered it."""

    type: Literal["function"]
    function: FunctionSchema


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

    def assistant_message(self) -> ChatMessage:
        """This turn as an OpenAI-format assistant message, to append to the transcript."""
        message: ChatMessage = {"role": "assistant", "content": self.content}
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


def estimate_tokens(value: object) -> int:
    """About four characters per token, the usual rule of thumb for English and JSON."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return math.ceil(len(text) / 4)


def estimate_usage(messages: Sequence[ChatMessage], tools: Sequence[ToolSchema], reply: ModelReply) -> Usage:
    """The usage of one call whose endpoint reported none, estimated from what went each way."""
    prompt = estimate_tokens(list(messages)) + (estimate_tokens(list(tools)) if tools else 0)
    completion = estimate_tokens(reply.content or "") + sum(
        estimate_tokens(call.name) + estimate_tokens(call.arguments) for call in reply.tool_calls
    )
    return Usage(prompt, completion, prompt + completion, reply.usage.cost, estimated=True)


def with_usage_estimated(messages: Sequence[ChatMessage], tools: Sequence[ToolSchema], reply: ModelReply) -> ModelReply:
    """``reply`` as it is when its usage was reported, else with an estimate."""
    if reply.usage.total_tokens > 0:
        return reply
    return replace(reply, usage=estimate_usage(messages, tools, reply))


@runtime_checkable
class Model(Protocol):
    """Anything that can answer a transcript: ChatModel, ScriptedModel."""

    name: str

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSchema]) -> ModelReply: ...


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
