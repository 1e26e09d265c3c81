"""Typed events: what the agent did, as data, and back.

The agent loop emits these and nothing else; the CLI renders them (rich, plain lines or
JSON lines), the trajectory file records them, the web UI and the evaluations read them
back (:func:`read_event`), and tests assert on them. Keeping steps as data means no part
of the loop prints anything itself. A tool call travels as a
:class:`~toolsmith.calls.Call` and its result as an :class:`~toolsmith.calls.Outcome`;
their JSON form (:meth:`Event.to_dict`) is flat, as the trajectory files have always been.
"""

from __future__ import annotations

import time
import types
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints

from toolsmith.calls import Call, JSONObject, Origin, Outcome

MAX_DEPTH = 64
CUT = "[nested too deeply]"


class EventDecodeError(ValueError):
    """A recorded event that is not one (a damaged or foreign line)."""


def bounded(value: Any, depth: int = 0) -> Any:
    """``value`` as plain data (dataclasses as dicts), with anything deeper than MAX_DEPTH cut."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if depth >= MAX_DEPTH:
        return CUT
    if isinstance(value, Mapping):
        return {key: bounded(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [bounded(item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return tuple(bounded(item, depth + 1) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: bounded(getattr(value, f.name), depth + 1) for f in fields(value)}
    return value


@dataclass(frozen=True)
class Event:
    """Base class; ``type`` names the event in serialised form."""

    type: ClassVar[str] = "event"
    task: int
    at: float = field(default_factory=time.time, kw_only=True)

    def to_dict(self) -> JSONObject:
        """This event as plain data; values nested past :data:`MAX_DEPTH` are cut off, so
        whatever a model or a tool sent cannot break the code that records or shows it."""
        data = {f.name: _plain(getattr(self, f.name)) for f in fields(self)}
        data["type"] = self.type
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Event:
        """The event ``data`` records (the inverse of :meth:`to_dict`); anything that does not
        fit this event's fields raises :class:`EventDecodeError`."""
        hints = _hints(cls)
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                if f.default is MISSING and f.default_factory is MISSING:
                    raise EventDecodeError(f"{cls.type}: missing {f.name!r}")
                continue
            values[f.name] = _decode(hints[f.name], data[f.name], f"{cls.type}.{f.name}")
        return cls(**values)


_HINTS: dict[str, dict[str, object]] = {}


def _hints(cls: type[Event]) -> dict[str, object]:
    """The resolved field types of an event class (resolved once: annotations are strings here)."""
    if cls.type not in _HINTS:
        _HINTS[cls.type] = get_type_hints(cls)
    return _HINTS[cls.type]


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    return bounded(value)


def _decode(hint: object, value: Any, where: str) -> Any:
    """``value`` checked against (and converted to) the field type ``hint``."""
    if hint is Any:
        return value
    if get_origin(hint) in (Union, types.UnionType):
        if value is None and type(None) in get_args(hint):
            return None
        inner = [h for h in get_args(hint) if h is not type(None)]
        return _decode(inner[0], value, where) if len(inner) == 1 else value
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(value)
        except ValueError as exc:
            raise EventDecodeError(f"{where}: {value!r} is not a {hint.__name__}") from exc
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if hint in (int, str, bool) and type(value) is hint:
        return value
    raise EventDecodeError(f"{where}: expected {getattr(hint, '__name__', hint)}, got {type(value).__name__}")


@dataclass(frozen=True)
class TaskStarted(Event):
    type: ClassVar[str] = "task_started"
    text: str
    session_id: str


@dataclass(frozen=True)
class StepStarted(Event):
    type: ClassVar[str] = "step_started"
    step: int


@dataclass(frozen=True)
class ModelUsage(Event):
    """One model call finished."""

    type: ClassVar[str] = "model_usage"
    step: int
    model: str
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost: float | None
    wall_s: float
    prompt_chars: int
    estimated: bool = False  # the endpoint reported no usage: counted from characters


@dataclass(frozen=True)
class ModelRetry(Event):
    type: ClassVar[str] = "model_retry"
    attempt: int
    delay_s: float
    reason: str


@dataclass(frozen=True)
class ModelProgress(Event):
    """A streamed answer is arriving: the counts so far (they stop growing when it stalls)."""

    type: ClassVar[str] = "model_progress"
    step: int
    chunks: int
    chars: int
    reasoning_chars: int
    tool_calls: int
    elapsed_s: float

    @classmethod
    def of(cls, progress: Any, *, task: int, step: int) -> ModelProgress:
        """From a :class:`toolsmith.model.stream.StreamProgress` (or anything with its fields)."""
        return cls(
            task=task,
            step=step,
            chunks=progress.chunks,
            chars=progress.chars,
            reasoning_chars=progress.reasoning_chars,
            tool_calls=progress.tool_calls,
            elapsed_s=progress.elapsed_s,
        )


@dataclass(frozen=True)
class ToolCalled(Event):
    """A tool is about to run; ``library`` says it is a stored tool."""

    type: ClassVar[str] = "tool_called"
    step: int
    call: Call
    library: bool = False

    def to_dict(self) -> JSONObject:
        call = self.call
        return {
            "task": self.task,
            "at": self.at,
            "step": self.step,
            "call_id": call.id,
            "name": call.name,
            "arguments": bounded(call.arguments),
            "origin": call.origin.value,
            "library": self.library,
            "type": self.type,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCalled:
        arguments = data.get("arguments")
        if not isinstance(arguments, (Mapping, str)):
            arguments = "" if arguments is None else str(arguments)
        call = Call(
            name=_decode(str, data.get("name"), "tool_called.name"),
            arguments=arguments,
            id=_decode(str, data.get("call_id", ""), "tool_called.call_id"),
            origin=_decode(Origin, data.get("origin", "model"), "tool_called.origin"),
        )
        return cls(
            task=_decode(int, data.get("task"), "tool_called.task"),
            at=_decode(float, data.get("at", 0.0), "tool_called.at"),
            step=_decode(int, data.get("step"), "tool_called.step"),
            call=call,
            library=_decode(bool, data.get("library", False), "tool_called.library"),
        )


@dataclass(frozen=True)
class ToolResult(Event):
    """A tool call's outcome; in JSON, ``data`` is the tool message the model read."""

    type: ClassVar[str] = "tool_result"
    step: int
    call_id: str
    name: str
    outcome: Outcome
    wall_s: float

    @property
    def ok(self) -> bool:
        return self.outcome.ok

    @property
    def summary(self) -> str:
        return self.outcome.line

    @property
    def message(self) -> JSONObject:
        """The outcome as the model read it (JSON)."""
        return self.outcome.to_message()

    def to_dict(self) -> JSONObject:
        return {
            "task": self.task,
            "at": self.at,
            "step": self.step,
            "call_id": self.call_id,
            "name": self.name,
            "ok": self.outcome.ok,
            "summary": _one_line(self.outcome.line),
            "wall_s": self.wall_s,
            "data": bounded(self.outcome.to_message()),
            "type": self.type,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResult:
        message = data.get("data")
        if not isinstance(message, Mapping):
            message = {"ok": bool(data.get("ok"))}
        summary = data.get("summary")
        return cls(
            task=_decode(int, data.get("task"), "tool_result.task"),
            at=_decode(float, data.get("at", 0.0), "tool_result.at"),
            step=_decode(int, data.get("step"), "tool_result.step"),
            call_id=_decode(str, data.get("call_id", ""), "tool_result.call_id"),
            name=_decode(str, data.get("name"), "tool_result.name"),
            outcome=Outcome.from_message(message, summary=summary if isinstance(summary, str) else ""),
            wall_s=_decode(float, data.get("wall_s", 0.0), "tool_result.wall_s"),
        )


SUMMARY_CHARS = 160


def _one_line(text: str, limit: int = SUMMARY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class GuardHook(str, Enum):
    """Where a guard stepped in, and so what its message did."""

    BEFORE_CALL = "before_call"  # refused a tool call: it did not run
    AFTER_RESULT = "after_result"  # added an intervention to a result
    BEFORE_ANSWER = "before_answer"  # sent a reminder instead of accepting an answer

    @property
    def verb(self) -> str:
        return {"before_call": "refused", "after_result": "intervened", "before_answer": "reminded"}[self.value]


@dataclass(frozen=True)
class GuardFired(Event):
    """The program (not the prompt) stepped in: refused a call or reminded the model."""

    type: ClassVar[str] = "guard_fired"
    step: int
    guard: str
    message: str
    hook: GuardHook = GuardHook.BEFORE_CALL


@dataclass(frozen=True)
class FinalAnswer(Event):
    type: ClassVar[str] = "final_answer"
    text: str
    status: str  # answered | budget | error


@dataclass(frozen=True)
class TaskFinished(Event):
    type: ClassVar[str] = "task_finished"
    status: str
    steps: int
    model_calls: int
    total_tokens: int
    cost: float | None
    wall_s: float
    outcome: str  # evolved | reused | used-tool | answered-without-tool | failed
    tokens_estimated: bool = False  # some call's usage was estimated from characters


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        TaskStarted,
        StepStarted,
        ModelUsage,
        ModelRetry,
        ModelProgress,
        ToolCalled,
        ToolResult,
        GuardFired,
        FinalAnswer,
        TaskFinished,
    )
}


def read_event(data: Mapping[str, Any]) -> Event:
    """The typed event a recorded one stands for; :class:`EventDecodeError` if it is none."""
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise EventDecodeError(f"unknown event type {data.get('type')!r}")
    return cls.from_dict(data)


EventSink = Callable[[Event], None]


def null_sink(event: Event) -> None:
    """An event sink that drops everything."""
