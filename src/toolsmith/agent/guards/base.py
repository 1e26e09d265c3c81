"""What a guard is, and the one runner that calls guards at the loop's fixed hook points.

A guard is a typed object with up to three hooks, each returning a message when the
guard steps in and ``None`` otherwise:

* ``before_call``: a parsed tool call is about to run; a message refuses it, and the
  model gets the message as the call's error result;
* ``after_result``: a call has a result; a message is added to it as an intervention
  (every guard sees every result, so counting guards never miss one);
* ``before_answer``: the model offered a final answer; a message is sent back as a
  reminder, and the model answers again.

A guard keeps its per-task state in its own slot on the :class:`TaskContext`, so one
guard object serves every task of an agent. :class:`GuardSet` runs a list of guards in
order, stops at the first that steps in, and is the only place that emits
:class:`~toolsmith.events.GuardFired`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast

from toolsmith.agent.context import TaskContext
from toolsmith.events import GuardFired

S = TypeVar("S")


def call_key(name: str, arguments: Any) -> str:
    """One string per distinct call: the same tool with the same arguments, in any key order."""
    try:
        canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        canonical = repr(arguments)
    return f"{name}:{canonical}"


@dataclass(frozen=True)
class Call:
    """A tool call as the guards see it: ``arguments`` is the raw text when it did not parse."""

    name: str
    arguments: Any
    origin: str = "model"

    @property
    def key(self) -> str:
        return call_key(self.name, self.arguments)


@dataclass(frozen=True)
class Draft:
    """A reply the model offered as its final answer."""

    text: str
    finish_reason: str | None = None
    messages: Sequence[dict[str, Any]] = field(default_factory=tuple)

    @property
    def evidence(self) -> str:
        """The text of every tool result so far in the task."""
        return "\n".join(str(m.get("content") or "") for m in self.messages if m.get("role") == "tool")


class Guard(Generic[S]):
    """Base class: override the hooks the guard needs, and ``new_state`` if it keeps state.

    ``limit`` bounds how often the guard may step in per task (``None``: no bound);
    the runner counts and enforces it, so a reminder given once needs no state of its own.
    """

    name: ClassVar[str] = "guard"
    limit: ClassVar[int | None] = None

    def new_state(self) -> S:
        return cast(S, None)

    def state(self, ctx: TaskContext) -> S:
        """This guard's state for the task, created on first use."""
        if self.name not in ctx.guard_state:
            ctx.guard_state[self.name] = self.new_state()
        return cast(S, ctx.guard_state[self.name])

    def max_fires(self, ctx: TaskContext) -> int | None:
        return self.limit

    def before_call(self, ctx: TaskContext, call: Call) -> str | None:
        return None

    def after_result(self, ctx: TaskContext, call: Call, result: dict[str, Any]) -> str | None:
        return None

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        return None


class GuardSet:
    """The guards registered on an agent, run in order at each hook point."""

    def __init__(self, guards: Sequence[Guard[Any]]) -> None:
        names = [g.name for g in guards]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"guard names must be unique: {', '.join(duplicates)}")
        self.guards = tuple(guards)

    @property
    def names(self) -> list[str]:
        return [g.name for g in self.guards]

    def before_call(self, ctx: TaskContext, call: Call) -> dict[str, Any] | None:
        """The refusal result for this call, or ``None`` to let it run."""
        for guard in self._ready(ctx):
            message = guard.before_call(ctx, call)
            if message:
                self._fired(ctx, guard, message)
                return {"ok": False, "guard": guard.name, "error": message}
        return None

    def after_result(self, ctx: TaskContext, call: Call, result: dict[str, Any]) -> None:
        """Let every guard see the result (each may keep count); their messages annotate it."""
        messages = []
        for guard in self._ready(ctx):
            message = guard.after_result(ctx, call, result)
            if message:
                self._fired(ctx, guard, message)
                messages.append(message)
        if messages:
            result["intervention"] = " ".join(messages)

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        """The reminder to send instead of accepting the answer, or ``None``."""
        for guard in self._ready(ctx):
            message = guard.before_answer(ctx, draft)
            if message:
                self._fired(ctx, guard, message)
                return message
        return None

    def _ready(self, ctx: TaskContext) -> list[Guard[Any]]:
        ready = []
        for guard in self.guards:
            limit = guard.max_fires(ctx)
            if limit is None or ctx.guard_fired[guard.name] < limit:
                ready.append(guard)
        return ready

    @staticmethod
    def _fired(ctx: TaskContext, guard: Guard[Any], message: str) -> None:
        ctx.guard_fired[guard.name] += 1
        ctx.send(GuardFired(task=ctx.index, step=ctx.step, guard=guard.name, message=message))
