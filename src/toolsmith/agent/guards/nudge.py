"""``nudge``: real data was verified, but the model answers without creating or reusing a
tool. It is reminded to call ``create_tool`` first, at most ``max_nudges`` times, and only
once for the same evidence: a model that answers again after a reminder, with nothing newly
verified, has decided (a real model was sent back twice and said twice why it would not
store code that fetched nothing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Draft, Guard

REMINDER = (
    "You verified real data with code_interpreter but have not saved a tool. Before "
    "answering, call create_tool to wrap the verified code as a general, parameterised "
    "tool, then call that tool and answer from its output. If the verified code did not "
    "really do what the task needs, do not store it: say so honestly in your answer."
)


@dataclass
class Reminded:
    """How many verified runs the task had when the model was last reminded."""

    verified_runs: int = 0


class Nudge(Guard[Reminded]):
    name: ClassVar[str] = "nudge"

    def new_state(self) -> Reminded:
        return Reminded()

    def max_fires(self, ctx: TaskContext) -> int | None:
        return ctx.settings.max_nudges

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        if not draft.text or not ctx.allow_create:
            return None
        if not ctx.verified or ctx.created or ctx.used_library_tool:
            return None
        seen = self.state(ctx)
        if len(ctx.verified_outputs) <= seen.verified_runs:
            return None  # reminded already, and nothing was verified since
        seen.verified_runs = len(ctx.verified_outputs)
        return REMINDER
