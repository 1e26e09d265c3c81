"""What a guard is, and the one runner that calls guards at the loop's fixed hook points.

A guard is a typed object with up to three hooks, each returning a message when the
guard steps in and ``None`` otherwise:

* ``before_call``: a tool call is about to run; a message refuses it (a
  :class:`~toolsmith.calls.Refusal`), and the model gets the message as the call's error;
* ``after_result``: a call has an :class:`~toolsmith.calls.Outcome`; a message is added to
  it as an intervention note (every guard sees every outcome, so counting guards never
  miss one);
* ``before_answer``: the model offered a final answer; a message is sent back as a
  reminder, and the model answers again.

A guard keeps its per-task state in its own slot on the :class:`TaskContext`, so one
guard object serves every task of an agent. :class:`GuardSet` runs a list of guards in
order, stops at the first that steps in, and is the only place that emits
:class:`~toolsmith.events.GuardFired`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast

from toolsmith.agent.context import TaskContext
from toolsmith.calls import Call, Note, NoteKind, Outcome, Refusal
from toolsmith.events import GuardFired, GuardHook
from toolsmith.model import ChatMessage

S = TypeVar("S")


@dataclass(frozen=True)
class Draft:
    """A reply the model offered as its final answer."""

    text: str
    finish_reason: str | None = None
    messages: Sequence[ChatMessage] = field(default_factory=tuple)

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

    def after_result(self, ctx: TaskContext, call: Call, outcome: Outcome) -> str | None:
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

    def before_call(self, ctx: TaskContext, call: Call) -> Refusal | None:
        """The refusal of this call, or ``None`` to let it run."""
        for guard in self._ready(ctx):
            message = guard.before_call(ctx, call)
            if message:
                self._fired(ctx, guard, message, GuardHook.BEFORE_CALL)
                return Refusal(guard.name, message)
        return None

    def after_result(self, ctx: TaskContext, call: Call, outcome: Outcome) -> Outcome:
        """Let every guard see the outcome (each may keep count); their messages are added as notes."""
        notes = []
        for guard in self._ready(ctx):
            message = guard.after_result(ctx, call, outcome)
            if message:
                self._fired(ctx, guard, message, GuardHook.AFTER_RESULT)
                notes.append(Note(NoteKind.INTERVENTION, message, guard.name))
        return outcome.noted(*notes)

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        """The reminder to send instead of accepting the answer, or ``None``."""
        for guard in self._ready(ctx):
            message = guard.before_answer(ctx, draft)
            if message:
                self._fired(ctx, guard, message, GuardHook.BEFORE_ANSWER)
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
    def _fired(ctx: TaskContext, guard: Guard[Any], message: str, hook: GuardHook) -> None:
        ctx.guard_fired[guard.name] += 1
        ctx.send(GuardFired(task=ctx.index, step=ctx.step, guard=guard.name, message=message, hook=hook))
