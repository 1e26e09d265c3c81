"""``reuse_first``: no ``web_search`` or ``create_tool`` before the library was searched.

A task whose library was never searched (pre-retrieval off, and no ``search_tools`` yet)
has its first building call refused: a stored tool may already do the task. Once the
model has seen what search found, choosing the web is its judgement to make, and a
refusal only spends a call (most hits it passes over share a word with the task, no
more). So the call runs, and a strong hit it has not tried is named in the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Guard
from toolsmith.calls import Call, Outcome

_BUILDING = ("web_search", "create_tool")
STRONG_MATCH = 0.6  # the share of the task's words a hit covers before it is worth a word


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
        return None

    def after_result(self, ctx: TaskContext, call: Call, outcome: Outcome) -> str | None:
        state = self.state(ctx)
        if call.name != "web_search" or state.reminded:
            return None
        untried = sorted(
            name
            for name, match in ctx.search_matches.items()
            if match >= STRONG_MATCH and name in ctx.unlocked and not ctx.called(name)
        )
        if not untried or ctx.library_calls:
            return None
        state.reminded = True
        return (
            f"search_tools found {', '.join(untried)}, which closely matches the task and which you have "
            "not tried. If it fits, call it rather than building a new tool."
        )
