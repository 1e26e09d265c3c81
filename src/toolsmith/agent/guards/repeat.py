"""``repeat``: the same failing call, made again and again, is stopped.

After the third identical failure (same tool, same arguments) in a task the result says
so, and a fourth identical call is refused without running: an identical failing call
once ran 20 times in the sandbox. A success of that call clears its count, and so does a new
version of the tool it called: after a repair the same arguments run different code.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Call, Guard

REPEAT_LIMIT = 3


class Repeat(Guard[Counter[str]]):
    """Counts identical failing calls (same tool, same arguments) in a task."""

    name: ClassVar[str] = "repeat"

    def __init__(self, limit: int = REPEAT_LIMIT) -> None:
        self.repeat_limit = limit

    def new_state(self) -> Counter[str]:
        return Counter()

    def before_call(self, ctx: TaskContext, call: Call) -> str | None:
        failed = self.state(ctx)[call.key]
        if failed < self.repeat_limit:
            return None
        return (
            f"{call.name} refused: this exact call already failed {failed} times in this task, so it "
            "was not run again. Change the arguments, try another library or approach, or tell "
            "the user honestly that it cannot be done."
        )

    def after_result(self, ctx: TaskContext, call: Call, result: dict[str, Any]) -> str | None:
        if result.get("guard") == self.name:
            return None  # its own refusal: the call did not run, nothing new to count
        failures = self.state(ctx)
        if result.get("ok"):
            failures.pop(call.key, None)
            if call.name == "create_tool" and isinstance(call.arguments, dict):
                self._forget_tool(failures, str(call.arguments.get("name") or ""))
            return None
        failures[call.key] += 1
        if failures[call.key] < self.repeat_limit:
            return None
        return (
            f"This exact {call.name} call has now failed {failures[call.key]} times. Stop repeating it: "
            "change the arguments, try a different library or approach, or tell the user "
            "honestly that it cannot be done."
        )

    @staticmethod
    def _forget_tool(failures: Counter[str], name: str) -> None:
        stale = [key for key in failures if name and key.startswith(f"{name}:")]
        for key in stale:
            del failures[key]
