"""``reuse_first``: no ``web_search`` or ``create_tool`` before the library was searched.

A task whose library was never searched (pre-retrieval off, and no ``search_tools`` yet)
has its first building call refused: a stored tool may already do the task. Once the
model has seen what search found, choosing the web is its judgement to make: a refusal,
or a reminder beside the result, only spends its attention on hits that share a word
with the task and no more (a real model passed over such hits rightly every time).
"""

from __future__ import annotations

from typing import ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Guard
from toolsmith.calls import Call

_BUILDING = ("web_search", "create_tool")


class ReuseFirst(Guard[None]):
    name: ClassVar[str] = "reuse_first"

    def before_call(self, ctx: TaskContext, call: Call) -> str | None:
        if call.name not in _BUILDING or (call.name == "create_tool" and not ctx.allow_create):
            return None
        if not ctx.searched:
            return (
                f"{call.name} refused: call search_tools first. A stored tool may already do this task, "
                "and reusing it is cheaper and already verified."
            )
        return None
