"""A failing tool runs one call at a time on the server, on idle CPU; the others are refused at once (issue #22 §4)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import mcp.types as types

from toolsmith.config import Settings
from toolsmith.isolation import FailureKind, Limits, Priority, ToolCallResult
from toolsmith.library import Provenance, ToolLibrary, ToolSpec
from toolsmith.mcp.server import LibraryTools
from toolsmith.packages.requirement import Requirement
from toolsmith.sandbox import Sandbox
from toolsmith.service.admission import Admission, cpu_priority

SPEC = ToolSpec(
    name="flaky",
    description="Sometimes fails.",
    parameters={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
    code="def run(x):\n    return {'x': x}\n",
    test_args={"x": 1},
)


class HeldRunner:
    """A tool runner whose calls wait until the test lets them finish, then fail or succeed."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.finish = threading.Event()
        self.ok = False
        self.calls = 0
        self.priorities: list[Priority] = []

    def call_tool(
        self,
        code: str,
        args: dict[str, Any],
        *,
        requirements: Sequence[Requirement] = (),
        network: bool | None = None,
        timeout_s: float | None = None,
        warm: bool = False,
        priority: Priority = Priority.NORMAL,
    ) -> ToolCallResult:
        self.calls += 1
        self.priorities.append(priority)
        self.started.set()
        assert self.finish.wait(30)
        if self.ok:
            return ToolCallResult(ok=True, value={"x": args["x"]})
        return ToolCallResult(ok=False, error="run() raised TimeoutError", error_type=FailureKind.EXCEPTION)


@pytest.fixture
def library(tmp_path: Path) -> Iterator[ToolLibrary]:
    with ToolLibrary(tmp_path / "library.db") as lib:
        lib.add(SPEC, provenance=Provenance(origin="test"), gate={"passed": True})
        yield lib


def fail_once(library: ToolLibrary) -> None:
    library.record_call_and_quarantine(
        "flaky", 1, ok=False, latency_ms=5.0, error="run() raised TimeoutError", quarantine_after=3, actor="test"
    )


def message(result: types.CallToolResult) -> dict[str, Any]:
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    return dict(json.loads(text.text))


def test_a_healthy_tool_is_admitted_however_many_calls_run(library: ToolLibrary) -> None:
    admission = Admission()
    tool = library.get("flaky")
    with admission.admit(tool) as first, admission.admit(tool) as second:
        assert first is None and second is None and admission.running(tool) == 2
    assert admission.running(tool) == 0 and admission.refused == 0


def test_a_failing_tool_runs_one_call_at_a_time(library: ToolLibrary) -> None:
    fail_once(library)
    tool = library.get("flaky")
    admission = Admission()
    with admission.admit(tool) as first:
        assert first is None
        with admission.admit(tool) as second:
            assert second is not None
            assert "flaky@1 is failing (1 failure in a row; last: run() raised TimeoutError)" in second
            assert "one at a time" in second and "toolsmith tools show flaky" in second
        assert admission.running(tool) == 1 and admission.refused == 1
    with admission.admit(tool) as again:  # the running call ended: the next one may run
        assert again is None


def test_the_server_refuses_a_second_call_of_a_failing_tool_without_running_it(
    library: ToolLibrary, tmp_path: Path
) -> None:
    fail_once(library)
    runner = HeldRunner()
    settings = replace(Settings(home=tmp_path), network=False)
    tools = LibraryTools(settings, library, Sandbox(settings))
    tools.sandbox = runner  # type: ignore[assignment]
    results: list[types.CallToolResult] = []
    first = threading.Thread(target=lambda: results.append(tools.call("flaky", {"x": 1}, actor="mcp:a")))
    first.start()
    try:
        assert runner.started.wait(30)
        refused = tools.call("flaky", {"x": 2}, actor="mcp:b")
    finally:
        runner.finish.set()
        first.join(30)
    assert refused.is_error is True
    data = message(refused)
    assert data["error_type"] == "busy" and "this call was refused instead of queued" in data["error"]
    assert runner.calls == 1  # the refused call never ran
    assert runner.priorities == [Priority.IDLE]  # the one that ran had only idle CPU
    stats = library.get("flaky").stats
    assert (stats.calls, stats.consecutive_failures) == (2, 2)  # the one that ran counts; the refusal does not
    assert results and message(results[0])["error_type"] == "exception"

    # Once a call of it succeeds, the tool is healthy and admitted freely again.
    runner.ok = True
    assert tools.call("flaky", {"x": 3}, actor="mcp:a").is_error is False
    assert library.get("flaky").stats.consecutive_failures == 0
    assert tools.call("flaky", {"x": 4}, actor="mcp:a").is_error is False
    assert runner.priorities == [Priority.IDLE, Priority.IDLE, Priority.NORMAL]  # healthy: full priority


def test_a_failing_tool_gets_idle_cpu_and_a_healthy_one_full(library: ToolLibrary) -> None:
    assert cpu_priority(library.get("flaky")) is Priority.NORMAL
    fail_once(library)
    assert cpu_priority(library.get("flaky")) is Priority.IDLE
    assert Limits().at(Priority.IDLE).yield_after_s == 0  # it yields the CPU from its start
    assert Limits().at(Priority.IDLE).idle_from_start and not Limits().idle_from_start
    assert Limits().at(Priority.NORMAL) == Limits()
