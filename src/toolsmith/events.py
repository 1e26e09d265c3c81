"""Typed events: what the agent did, as data.

The agent loop emits these and nothing else; the CLI renders them (rich, plain lines or
JSON lines), the trajectory file records them and tests assert on them. Keeping steps as
data means no part of the loop prints anything itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, ClassVar

MAX_DEPTH = 64
CUT = "[nested too deeply]"


def bounded(value: Any, depth: int = 0) -> Any:
    """``value`` as plain data (dataclasses as dicts), with anything deeper than MAX_DEPTH cut."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if depth >= MAX_DEPTH:
        return CUT
    if isinstance(value, dict):
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

    def to_dict(self) -> dict[str, Any]:
        """This event as plain data; values nested past :data:`MAX_DEPTH` are cut off, so
        whatever a model or a tool sent cannot break the code that records or shows it."""
        data = {f.name: bounded(getattr(self, f.name)) for f in fields(self)}
        data["type"] = self.type
        return data


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
    """A tool is about to run. ``origin`` is ``model`` or ``program`` (pre-retrieval)."""

    type: ClassVar[str] = "tool_called"
    step: int
    call_id: str
    name: str
    arguments: Any
    origin: str = "model"
    library: bool = False


@dataclass(frozen=True)
class ToolResult(Event):
    type: ClassVar[str] = "tool_result"
    step: int
    call_id: str
    name: str
    ok: bool
    summary: str
    wall_s: float
    data: Any = None


@dataclass(frozen=True)
class GuardFired(Event):
    """The program (not the prompt) stepped in: refused a call or reminded the model."""

    type: ClassVar[str] = "guard_fired"
    step: int
    guard: str
    message: str


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


EventSink = Callable[[Event], None]


def null_sink(event: Event) -> None:
    """An event sink that drops everything."""
