"""``reuse_first``: no ``web_search`` or ``create_tool`` before ``search_tools``.

After a search, one reminder more: when search found tools that were never tried, or
when a stored tool already answered, the first ``web_search`` is refused with that
news; asked again, it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Call, Guard

_BUILDING = ("web_search", "create_tool")


@dataclass
class ReuseState:
    reminded: bool = False


class ReuseFirst(Guard[ReuseState]):
    name: ClassVar[str] = "reuse_first"

    def new_state(self) -> ReuseState:
        return ReuseState()

    def before_call(self, ctx: TaskContext, call: Call) -> str | None:
        if call.name not in _BUILDING or (call.name == "create_tool" and not ctx.allow_create):
            return None
        if not ctx.searched:
            return (
                f"{call.name} refused: call search_tools first. A stored tool may already do this task, "
                "and reusing it is cheaper and already verified."
            )
        state = self.state(ctx)
        if call.name != "web_search" or state.reminded:
            return None
        message = _untried_or_answered(ctx)
        state.reminded = message is not None
        return message


def _untried_or_answered(ctx: TaskContext) -> str | None:
    created = {t.name for t in ctx.created}
    answered = sorted({a.name for a in ctx.library_calls if a.ok and a.name not in created})
    if answered:
        return (
            f"{', '.join(answered)} already returned a result in this task: answer from it. If it "
            "does not cover the task, call web_search again and it will run."
        )
    untried = sorted(h for h in ctx.search_hits if h in ctx.unlocked and not ctx.called(h))
    if untried and not ctx.library_calls:
        return (
            f"search_tools found {', '.join(untried)}, which you have not tried. If one fits the "
            "task, call it now. If none fits, call web_search again and it will run."
        )
    return None
