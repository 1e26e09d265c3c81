"""``unlocking``: a library tool is callable only once ``search_tools`` returned it in this
task, or the agent just created it. This forces "search before reuse"."""

from __future__ import annotations

from typing import ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Call, Guard
from toolsmith.calls import META_TOOL_NAMES
from toolsmith.errors import LibraryError


class Unlocking(Guard[None]):
    name: ClassVar[str] = "unlocking"

    def before_call(self, ctx: TaskContext, call: Call) -> str | None:
        if call.name in META_TOOL_NAMES or call.name in ctx.unlocked:
            return None
        try:
            stored = ctx.library.served(call.name) is not None
        except LibraryError:  # a name the library cannot even look up is simply unknown
            stored = False
        if not stored:
            return None
        return (
            f"{call.name} is in the tool library but locked in this task: call search_tools with what "
            "you need first, and call the tool once the search has returned it."
        )
