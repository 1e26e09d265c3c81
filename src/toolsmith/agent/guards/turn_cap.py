"""``turn_cap``: at most ``budget.max_calls_per_turn`` tool calls run per model reply.

A model once sent 200 tool calls in one reply, and all of them ran. The calls past the
cap are refused, each with a message saying why, so the model learns the limit from its
first excess call; the system prompt states it up front.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Call, Guard


@dataclass
class TurnCount:
    step: int = -1
    calls: int = 0


class TurnCap(Guard[TurnCount]):
    name: ClassVar[str] = "turn_cap"

    def new_state(self) -> TurnCount:
        return TurnCount()

    def before_call(self, ctx: TaskContext, call: Call) -> str | None:
        if call.origin != "model":
            return None
        count = self.state(ctx)
        if count.step != ctx.step:
            count.step, count.calls = ctx.step, 0
        count.calls += 1
        cap = ctx.settings.max_calls_per_turn
        if count.calls <= cap:
            return None
        return (
            f"{call.name} refused: at most {cap} tool calls run per reply, and this reply made more. "
            "The first calls ran; send the rest in your next reply, fewer at a time."
        )
