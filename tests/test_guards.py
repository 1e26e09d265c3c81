"""Guards as registered hooks: the agent runs the list it is built with, and each guard's
state lives on the task, so one guard object serves every task."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agent_helpers import rig
from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards import Call, Draft, Guard, GuardSet, standard_guards
from toolsmith.testing import final, reply, tool_call


@dataclass
class Seen:
    calls: int = 0


class NoCodeTwice(Guard[Seen]):
    """A guard written by a user: a second code_interpreter call in a task is refused."""

    name: ClassVar[str] = "no_code_twice"

    def new_state(self) -> Seen:
        return Seen()

    def before_call(self, ctx: TaskContext, call: Call) -> str | None:
        if call.name != "code_interpreter":
            return None
        seen = self.state(ctx)
        seen.calls += 1
        return "one code_interpreter run per task" if seen.calls > 1 else None


class SayPlease(Guard[None]):
    name: ClassVar[str] = "say_please"
    limit: ClassVar[int | None] = 2

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        return None if "please" in draft.text else "Say please."


def test_a_registered_guard_refuses_and_keeps_its_state_per_task(tmp_path: Path) -> None:
    code = reply(tool_call("code_interpreter", {"code": "print(1)"}))
    with rig(tmp_path) as r:
        agent = r.agent(guards=[NoCodeTwice()])
        r.model.add(code, code, final("done"), code, final("done again"))
        agent.run_task("print one")
        assert r.guards() == ["no_code_twice"]
        refused = [e for e in r.of_type("tool_result") if e.name == "code_interpreter"][1]
        assert refused.data == {"ok": False, "guard": "no_code_twice", "error": "one code_interpreter run per task"}
        agent.run_task("print one again", index=1)  # a new task starts with a fresh count
        assert r.guards() == ["no_code_twice"]
        r.model.assert_complete()


def test_an_agent_built_without_guards_runs_none(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        # web_search before search_tools, and a number no tool backs: both pass unguarded
        r.model.add(reply(tool_call("web_search", {"query": "date library"})), final("There are 61 days."))
        result = r.agent(guards=[], pre_retrieval=False).run_task("days between 2020-01-01 and 2020-03-01")
        assert r.guards() == [] and r.web.searches == ["date library"] and result.answer == "There are 61 days."


def test_a_guards_limit_bounds_its_reminders(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(final("no"), final("still no"), final("never"))
        result = r.agent(guards=[SayPlease()]).run_task("ask nicely")
        assert r.guards() == ["say_please", "say_please"] and result.answer == "never"


def test_the_standard_set_runs_in_its_documented_order_and_names_are_unique() -> None:
    names = GuardSet(standard_guards()).names
    assert names == [
        "turn_cap",
        "unlocking",
        "reuse_first",
        "verify_before_create",
        "repeat",
        "truncated",
        "empty_reply",
        "nudge",
        "language",
        "grounding",
    ]
    with pytest.raises(ValueError, match="unique: nudge"):
        GuardSet([*standard_guards(), standard_guards()[7]])


@pytest.mark.slow
def test_guard_state_is_on_the_task_context(tmp_path: Path) -> None:
    failing = tool_call("code_interpreter", {"code": "raise SystemExit(2)"})
    with rig(tmp_path) as r:
        agent = r.agent()
        r.model.add(reply(failing), reply(failing), final("cannot"))
        agent.run_task("something impossible")
        r.model.add(reply(failing), final("cannot"))
        agent.run_task("something impossible", index=1)
        # two failures in task 0 and one in task 1: three in all, but never three in one task
        assert r.guards() == []


def test_every_guard_sees_every_result() -> None:
    seen: list[Any] = []

    class Watch(Guard[None]):
        name: ClassVar[str] = "watch"

        def after_result(self, ctx: TaskContext, call: Call, result: dict[str, Any]) -> str | None:
            seen.append((self, call.name))
            return "look"

    class Watch2(Watch):
        name: ClassVar[str] = "watch2"

    @dataclass
    class Ctx:  # just what the runner touches
        index: int = 0
        step: int = 1
        guard_fired: Counter[str] = field(default_factory=Counter)
        sent: list[Any] = field(default_factory=list)

        def send(self, event: Any) -> None:
            self.sent.append(event)

    ctx: Any = Ctx()
    result: dict[str, Any] = {"ok": True}
    GuardSet([Watch(), Watch2()]).after_result(ctx, Call("x", {}), result)
    assert [name for _, name in seen] == ["x", "x"] and result["intervention"] == "look look"
    assert [e.guard for e in ctx.sent] == ["watch", "watch2"]


def test_a_new_version_of_a_tool_clears_its_repeat_count() -> None:
    from toolsmith.agent.guards.repeat import Repeat

    @dataclass
    class Ctx:  # just what the guard reads and writes
        guard_state: dict[str, Any] = field(default_factory=dict)

    ctx: Any = Ctx()
    guard = Repeat(limit=3)
    broken = Call("get_rate", {"base": "USD"})
    other = Call("get_rate_history", {"base": "USD"})
    for _ in range(3):
        guard.after_result(ctx, broken, {"ok": False, "error": "boom"})
        guard.after_result(ctx, other, {"ok": False, "error": "boom"})
    assert guard.before_call(ctx, broken) is not None  # refused: it failed three times
    # a repair stores a new version under the same name: the same call now runs other code
    guard.after_result(ctx, Call("create_tool", {"name": "get_rate", "code": "..."}), {"ok": True})
    assert guard.before_call(ctx, broken) is None
    assert guard.before_call(ctx, other) is not None  # a tool whose name merely starts alike keeps its count
