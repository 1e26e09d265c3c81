"""``nudge``: real data was verified, but the model answers without creating or reusing a
tool. It is reminded to call ``create_tool`` first, at most ``max_nudges`` times."""

from __future__ import annotations

from typing import ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Draft, Guard


class Nudge(Guard[None]):
    name: ClassVar[str] = "nudge"

    def max_fires(self, ctx: TaskContext) -> int | None:
        return ctx.settings.max_nudges

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        if not draft.text or not ctx.allow_create:
            return None
        if not ctx.verified or ctx.created or ctx.used_library_tool:
            return None
        return (
            "You verified real data with code_interpreter but have not saved a tool. Before "
            "answering, call create_tool to wrap the verified code as a general, parameterised "
            "tool, then call that tool and answer from its output. If the verified code did not "
            "really do what the task needs, do not store it: say so honestly in your answer."
        )
