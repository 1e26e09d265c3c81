"""The run records live apart from the services, so writing a trajectory needs none of them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from toolsmith.agent.trajectory import TrajectoryWriter
from toolsmith.model import ChatMessage, MessageToolCall
from toolsmith.records import Action, TaskResult, reuse_held
from toolsmith.redaction import Redactor


def test_the_trajectory_writer_imports_no_gate_library_or_sandbox() -> None:
    code = (
        "import sys, toolsmith.agent.trajectory, toolsmith.records\n"
        "heavy = ('toolsmith.gate.core', 'toolsmith.library', 'toolsmith.isolation', 'toolsmith.sandbox',"
        " 'toolsmith.packages', 'toolsmith.agent.context')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_the_reuse_verdict_from_records_alone() -> None:
    def task(index: int, *actions: Action, created: list[str] | None = None) -> TaskResult:
        return TaskResult(
            index=index, task="t", answer="a", status="answered", actions=list(actions), created=created or []
        )

    search = Action("search_tools", {"query": "days"}, ok=True)
    evolved = task(0, search, Action("create_tool", {}, ok=True), created=["days@1"])
    reused = task(1, search, Action("days", {}, ok=True, library=True, version=1))
    rebuilt = task(1, search, Action("web_search", {}, ok=True), Action("days", {}, ok=True, library=True))
    assert (evolved.outcome, reused.outcome, rebuilt.outcome) == ("evolved", "reused", "used-tool")
    assert reuse_held([evolved, reused]) and not reuse_held([evolved, rebuilt]) and not reuse_held([reused])
    assert reused.to_dict()["actions"][1] == {
        "tool": "days",
        "arguments": {},
        "ok": True,
        "origin": "model",
        "library": True,
        "version": 1,
    }


def test_a_task_records_transcript_reads_back_as_typed_messages(tmp_path: Path) -> None:
    call: MessageToolCall = {"id": "c1", "type": "function", "function": {"name": "days", "arguments": '{"n": 1}'}}
    messages: list[ChatMessage] = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "how many days?"},
        {"role": "assistant", "content": None, "tool_calls": [call], "reasoning_content": "a tool"},
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
    ]
    result = TaskResult(index=0, task="t", answer="a", status="answered", messages=messages)
    writer = TrajectoryWriter(tmp_path, "s1", Redactor([]))
    writer.task(result)
    writer.close()
    line = writer.path.read_text(encoding="utf-8").splitlines()[-1]
    record = json.loads(line)
    assert TaskResult.from_record(record).messages == messages
    # written as the loop built them, key for key, in the same order
    assert [list(m) for m in record["messages"]] == [list(m) for m in messages]
    # what is not a message is left out; a value of the wrong type is left out of its message
    odd = [
        {"role": "wizard"},
        "text",
        {"role": "tool", "tool_call_id": "c1", "content": 3},
        {"role": "assistant", "tool_calls": [{"id": 1}]},
    ]
    assert TaskResult.from_record({**record, "messages": odd}).messages == [
        {"role": "tool", "tool_call_id": "c1"},
        {"role": "assistant", "tool_calls": []},
    ]
