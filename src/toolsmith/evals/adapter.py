"""The seam between Inspect and toolsmith: :class:`InspectModel`, a toolsmith
:class:`~toolsmith.model.Model` whose every call is an Inspect ``Model.generate``.

Why this seam. toolsmith's session is synchronous and speaks OpenAI-format messages
through one small protocol (``complete(messages, tools) -> ModelReply``); Inspect's
model API is asynchronous and provider-neutral. The alternatives were worse:

* Inspect's agent bridge patches only the *async* OpenAI client, so toolsmith's
  synchronous ``ChatModel`` would bypass it and Inspect would count nothing;
* the sandbox agent bridge's local endpoint needs an Inspect sandbox (Docker) and puts an
  HTTP hop and a second retry policy between the two;
* re-implementing toolsmith's loop as an Inspect agent would be a second agent.

So the solver runs the real toolsmith session in a worker thread
(``anyio.to_thread.run_sync``), and this adapter carries each model call back to the
event loop with ``anyio.from_thread.run``. Both directions copy the sample's context
variables, so Inspect attributes every call to the right sample: it logs a model event,
counts the tokens against the sample's limits, applies its retries and its provider, and
any Inspect provider (OpenAI, Anthropic, Google, vLLM, Ollama, an OpenAI-compatible
endpoint, ``mockllm``) drives toolsmith unchanged.

A failure inside ``generate`` (a provider error after Inspect's retries, a token or time
limit) must end the *sample* the way Inspect ends it, not be taken as a toolsmith bug:
the adapter keeps the original exception in :attr:`InspectModel.failure` and raises a
:class:`~toolsmith.errors.ModelError`, so the toolsmith task ends cleanly ("the model call
failed") with its trajectory written, and the solver then re-raises the original.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio.from_thread
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ContentReasoning,
    ContentText,
    ModelOutput,
    messages_from_openai,
)
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams

from toolsmith.errors import ModelError, ModelResponseError
from toolsmith.model import ChatMessage as OpenAIMessage
from toolsmith.model import ModelReply, ToolCallRequest, ToolSchema, Usage

if TYPE_CHECKING:
    from inspect_ai.model import Model as InspectApiModel

# Inspect's stop reasons in the words toolsmith's loop reads (``length`` matters: a
# tool call cut off by the output limit is reported to the model as truncated).
_FINISH = {"stop": "stop", "max_tokens": "length", "model_length": "length", "tool_calls": "tool_calls"}


class InspectModel:
    """A toolsmith model over an Inspect model; call :meth:`complete` from a worker thread."""

    def __init__(self, model: InspectApiModel) -> None:
        self._model = model
        self.name = str(model)
        self.failure: BaseException | None = None  # what ended the sample inside generate

    def complete(self, messages: Sequence[OpenAIMessage], tools: Sequence[ToolSchema]) -> ModelReply:
        try:
            output = anyio.from_thread.run(self._generate, list(messages), list(tools))
        except ModelError:
            raise
        except BaseException as exc:  # Inspect's own ending (limit, provider, cancel): kept for the solver
            self.failure = exc
            raise ModelError(f"Inspect's generate failed: {type(exc).__name__}: {exc}") from exc
        return reply_of(output)

    async def _generate(self, messages: list[OpenAIMessage], tools: list[ToolSchema]) -> ModelOutput:
        # Inspect reads the OpenAI SDK's message params, the shape an OpenAIMessage has.
        chat: list[ChatMessage] = await messages_from_openai(messages, model=self.name)  # type: ignore[arg-type]
        return await self._model.generate(chat, tools=[tool_info(t) for t in tools])


def tool_info(schema: ToolSchema) -> ToolInfo:
    """An OpenAI-format function schema (as toolsmith's toolbox offers it) as a ToolInfo."""
    function = schema["function"]
    parameters = function["parameters"] or {"type": "object", "properties": {}}
    try:
        params = ToolParams.model_validate(parameters)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ModelResponseError(
            f"The schema of tool {function['name']!r} cannot be offered through Inspect: {exc}"
        ) from exc
    return ToolInfo(name=function["name"], description=function["description"] or "", parameters=params)


def reply_of(output: ModelOutput) -> ModelReply:
    """Inspect's ModelOutput as toolsmith's ModelReply (text, tool calls, usage, reasoning)."""
    if not output.choices:
        raise ModelResponseError(f"The model answered with no choice{': ' + output.error if output.error else ''}.")
    choice = output.choices[0]
    message = choice.message
    calls = tuple(_call_of(c) for c in message.tool_calls or ())
    usage = Usage()
    if output.usage is not None:
        u = output.usage
        usage = Usage(u.input_tokens, u.output_tokens, u.total_tokens, u.total_cost)
    return ModelReply(
        content=_text(message) or None,
        tool_calls=calls,
        usage=usage,
        model=output.model,
        finish_reason=_FINISH.get(choice.stop_reason, choice.stop_reason),
        reasoning=_reasoning(message),
    )


def _call_of(call: ToolCall) -> ToolCallRequest:
    # A call whose arguments did not parse reaches toolsmith as text that is not JSON, so
    # its own reply checks tell the model what went wrong.
    raw = call.parse_error if call.parse_error else json.dumps(call.arguments, ensure_ascii=False)
    return ToolCallRequest(id=call.id, name=call.function, arguments=raw)


def _text(message: ChatMessageAssistant) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n".join(part.text for part in message.content if isinstance(part, ContentText))


def _reasoning(message: ChatMessageAssistant) -> str | None:
    if isinstance(message.content, str):
        return None
    parts = [p.reasoning for p in message.content if isinstance(p, ContentReasoning) and not p.redacted]
    return "\n".join(parts) or None
