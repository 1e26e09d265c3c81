"""ScriptedModel: a :class:`~toolsmith.model.Model` that plays back a script of replies.

Each script item is a :class:`~toolsmith.model.ModelReply` or a callable
``(messages, tools) -> ModelReply``. Callables let a final answer be computed from the real
tool result already in the transcript (see :func:`last_tool_result`), so scripted runs
never invent an answer either. The model records every request it was sent, fails loudly
when the script runs out, and reports token usage estimated from the text it saw, so
budgets and benchmarks have real numbers to read.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from toolsmith.calls import JSONValue
from toolsmith.errors import ModelError, ModelResponseError
from toolsmith.model import ChatMessage, ModelReply, ToolCallRequest, ToolSchema, Usage, estimate_usage

Messages = list[ChatMessage]
Tools = list[ToolSchema]
ScriptItem = ModelReply | Callable[[Messages, Tools], ModelReply]

_call_ids = itertools.count(1)


class ScriptedModel:
    """Answers each :meth:`complete` with the next script item."""

    def __init__(self, replies: Iterable[ScriptItem] = (), *, name: str = "scripted") -> None:
        self.name = name
        self._script: deque[ScriptItem] = deque(replies)
        self._scripted = len(self._script)
        # (messages, tools) of every call, deep-copied when it arrived.
        self.requests: list[tuple[Messages, Tools]] = []

    def add(self, *items: ScriptItem) -> ScriptedModel:
        """Append more replies to the script."""
        self._script.extend(items)
        self._scripted += len(items)
        return self

    @property
    def remaining(self) -> int:
        return len(self._script)

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSchema]) -> ModelReply:
        sent = (copy.deepcopy(list(messages)), copy.deepcopy(list(tools)))
        self.requests.append(sent)
        number = len(self.requests)
        if not self._script:
            raise ModelError(
                f"ScriptedModel {self.name!r} has no reply left for call #{number}: all "
                f"{self._scripted} scripted replies were used. The last message it got was "
                f"{_summary(sent[0])}."
            )
        item = self._script.popleft()
        # The callable gets its own copies so it cannot alter what was recorded.
        result = item(copy.deepcopy(sent[0]), copy.deepcopy(sent[1])) if callable(item) else item
        if not isinstance(result, ModelReply):
            raise ModelResponseError(
                f"Scripted reply for call #{number} of {self.name!r} is a {type(result).__name__}, not a ModelReply."
            )
        return self._with_usage(result, sent)

    def assert_complete(self) -> None:
        """Fail when scripted replies were left unused (the run stopped earlier than planned)."""
        if self._script:
            raise AssertionError(
                f"ScriptedModel {self.name!r}: {len(self._script)} of {self._scripted} scripted "
                f"replies were never used ({len(self.requests)} call(s) made)."
            )

    def _with_usage(self, reply: ModelReply, sent: tuple[Messages, Tools]) -> ModelReply:
        usage = reply.usage
        if usage == Usage():
            # Served as the usage a real endpoint reports, so it is not marked estimated.
            usage = replace(estimate_usage(sent[0], sent[1], reply), estimated=False)
        return replace(reply, usage=usage, model=reply.model or self.name)


def _summary(messages: Messages) -> str:
    if not messages:
        return "nothing"
    last = messages[-1]
    text = json.dumps(last.get("content"), ensure_ascii=False, default=str)
    return f"a {last.get('role', '?')!s} message {text[:160]}"


# --- building replies -----------------------------------------------------------------


def tool_call(
    name: str, arguments: Mapping[str, JSONValue] | str | None = None, *, id: str | None = None
) -> ToolCallRequest:
    """A tool call; a ``str`` is sent exactly as given (to test malformed JSON)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(dict(arguments or {}), ensure_ascii=False)
    return ToolCallRequest(id=id or f"call_{next(_call_ids):04d}", name=name, arguments=raw)


def reply(*calls: ToolCallRequest, content: str | None = None) -> ModelReply:
    """An assistant turn that calls ``calls`` (and may say something too)."""
    return ModelReply(content=content, tool_calls=calls, finish_reason="tool_calls" if calls else "stop")


def final(text: str) -> ModelReply:
    """A final answer with no tool calls."""
    return ModelReply(content=text, finish_reason="stop")


# --- reading the transcript inside a callable reply ------------------------------------


def last_tool_result(messages: Sequence[ChatMessage], *, name: str | None = None) -> Any:
    """The JSON-decoded content of the last ``role: tool`` message (of tool ``name``).

    Content that is not JSON comes back as the string it is.
    """
    for message in reversed(messages):
        if message.get("role") != "tool":
            continue
        if name is not None and _called_tool(messages, message) != name:
            continue
        text = _content_text(message.get("content"))
        try:
            return json.loads(text)
        except ValueError:
            return text
    which = f" from {name!r}" if name else ""
    raise ModelError(f"No tool result{which} in the transcript yet: the script is out of step.")


def last_user_text(messages: Sequence[ChatMessage]) -> str:
    """The text of the last user message (the task, in a one-task transcript)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return _content_text(message.get("content"))
    raise ModelError("No user message in the transcript.")


def _called_tool(messages: Sequence[ChatMessage], result: ChatMessage) -> str | None:
    if "name" in result:
        return result["name"]
    call_id = result.get("tool_call_id")
    for message in messages:
        for call in message.get("tool_calls") or []:
            if call["id"] == call_id:
                return call["function"]["name"]
    return None


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return "" if content is None else json.dumps(content, ensure_ascii=False, default=str)
