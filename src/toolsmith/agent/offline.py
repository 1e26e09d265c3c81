"""The offline self-test: the whole evolve-then-reuse loop with no model and no network.

A scripted model drives the real agent loop, the real gate, the real sandbox and a real
(temporary) tool library through the pipeline with a date tool:

* task 1 misses in the library, verifies the arithmetic with ``code_interpreter``,
  offers a ``days_between`` that crashes at run time (the gate must refuse it and write
  nothing), then creates a working ``days_between`` and calls it: 2020-01-01 to
  2020-03-01 is 60 days;
* task 2 finds ``days_between`` in the library and calls it: 2021-01-01 to 2021-12-31
  is 364 days, with no ``web_search`` and no ``create_tool``.

The scripted replies are functions of the transcript, so every number in an answer is
read from the tool result the sandbox produced, never written into the script.

With ``keep`` (``toolsmith demo --offline --keep``) a passing self-test also copies the
tools it built (code, pins, test cases, gate verdict and provenance) into the user's own
library, under the user's review policy, and writes its run record (the trajectory) to
the user's trajectories folder: a library to browse, review, serve and call, without a key.
"""

from __future__ import annotations

import re
import tempfile
import uuid
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from toolsmith.agent.context import WebAccess
from toolsmith.agent.loop import Agent
from toolsmith.agent.trajectory import TrajectoryWriter
from toolsmith.config import Settings
from toolsmith.events import EventSink, ToolResult, null_sink
from toolsmith.library import Status, ToolLibrary
from toolsmith.library.fresh import library_in_use
from toolsmith.model import ModelReply
from toolsmith.records import TaskResult
from toolsmith.redaction import Redactor
from toolsmith.sandbox import Sandbox
from toolsmith.testing import ScriptedModel, final, last_tool_result, reply, tool_call

TASKS = (
    "How many days are there between 2020-01-01 and 2020-03-01?",
    "How many days are there between 2021-01-01 and 2021-12-31?",
)

VERIFY_CODE = """\
from datetime import date
start, end = date.fromisoformat("{start}"), date.fromisoformat("{end}")
print((end - start).days)
"""

BROKEN_TOOL = '''\
"""Days between two dates (broken: parses the wrong date format)."""
from datetime import datetime


def run(start: str, end: str) -> dict:
    first = datetime.strptime(start, "%d/%m/%Y")
    last = datetime.strptime(end, "%d/%m/%Y")
    return {"days": (last - first).days}
'''

WORKING_TOOL = '''\
"""Days between two ISO dates, computed with Python's datetime module."""
from datetime import date


def run(start: str, end: str) -> dict:
    first = date.fromisoformat(start)
    last = date.fromisoformat(end)
    return {"start": start, "end": end, "days": (last - first).days}
'''

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "start": {"type": "string", "description": "First date, ISO format YYYY-MM-DD."},
        "end": {"type": "string", "description": "Second date, ISO format YYYY-MM-DD."},
    },
    "required": ["start", "end"],
}
DESCRIPTION = "Count the days between two ISO dates (end minus start)."
KEEP_ACTOR = "agent:offline-demo"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _dates(messages: list[dict[str, Any]]) -> tuple[str, str]:
    user = next(m for m in messages if m["role"] == "user")
    found = _DATE.findall(str(user["content"]))
    return found[0], found[1]


def _tool_messages(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content")) for m in messages if m["role"] == "tool"]


def _seen(messages: list[dict[str, Any]], marker: str) -> bool:
    return any(marker in content for content in _tool_messages(messages))


def _searched(messages: list[dict[str, Any]]) -> bool:
    return _seen(messages, '"results"') or any(
        "[toolsmith] The program searched" in str(m.get("content")) for m in messages if m["role"] == "user"
    )


def _create(code: str, messages: list[dict[str, Any]]) -> ModelReply:
    start, end = _dates(messages)
    leap = {"start": "2024-02-01", "end": "2024-03-01"}  # a further case: February of a leap year
    days = (date.fromisoformat(leap["end"]) - date.fromisoformat(leap["start"])).days
    return reply(
        tool_call(
            "create_tool",
            {
                "name": "days_between",
                "description": DESCRIPTION,
                "parameters": PARAMETERS,
                "code": code,
                "test_args": {"start": start, "end": end},
                "tests": [{"args": leap, "contains": {"days": days}}],
                "keywords": ["date", "days", "calendar", "日期", "天数"],
            },
        )
    )


def _call_tool(messages: list[dict[str, Any]]) -> ModelReply:
    start, end = _dates(messages)
    return reply(tool_call("days_between", {"start": start, "end": end}))


def _answer(messages: list[dict[str, Any]]) -> ModelReply:
    result = last_tool_result(messages)
    days = result["result"]["days"]
    start, end = _dates(messages)
    return final(
        f"There are {days} days between {start} and {end} "
        f"(source: {result['source']}, computed with Python's datetime)."
    )


def evolve_policy(messages: list[dict[str, Any]], tools: Any = None, *, offer_broken: bool = True) -> ModelReply:
    """Task 1: search misses, verify, offer a broken tool, create the working one, use it.

    ``offer_broken=False`` skips the broken tool (the agent benchmark's plain evolve task).
    """
    if not _searched(messages):
        return reply(tool_call("search_tools", {"query": "days between two dates"}))
    if not _seen(messages, '"exit_code": 0'):
        start, end = _dates(messages)
        return reply(tool_call("code_interpreter", {"code": VERIFY_CODE.format(start=start, end=end)}))
    if offer_broken and not _seen(messages, '"check": "test_run"'):
        return _create(BROKEN_TOOL, messages)
    if not _seen(messages, "passed the gate"):
        return _create(WORKING_TOOL, messages)
    if not _seen(messages, '"tool": "days_between"'):
        return _call_tool(messages)
    return _answer(messages)


def reuse_policy(messages: list[dict[str, Any]], tools: Any = None) -> ModelReply:
    """Task 2: the library search hits days_between; call it and answer."""
    if not _searched(messages):
        return reply(tool_call("search_tools", {"query": "days between two dates"}))
    if not _seen(messages, '"tool": "days_between"'):
        return _call_tool(messages)
    return _answer(messages)


@dataclass(frozen=True)
class Kept:
    """What ``keep`` left in the user's home: the tool versions and the run record."""

    tools: list[str]
    library: str
    trajectory: Path

    def to_dict(self) -> dict[str, Any]:
        return {"tools": self.tools, "library": self.library, "trajectory": str(self.trajectory)}


@dataclass
class OfflineReport:
    """The outcome of the self-test: both tasks and both verdicts."""

    results: list[TaskResult]
    gate_verdict: dict[str, Any]
    reuse_verdict: dict[str, Any]
    backend: str
    kept: Kept | None = None

    @property
    def ok(self) -> bool:
        return bool(self.gate_verdict["refused"] and self.reuse_verdict["reused"])


def no_web() -> WebAccess:
    """Web access that answers every call with "no network" (offline runs and benchmarks)."""

    def refuse(*_: Any) -> dict[str, Any]:
        return {"ok": False, "error": "This run has no network access."}

    return WebAccess(search=refuse, read=refuse)


def run_offline(
    *, on_event: EventSink = null_sink, base: Settings | None = None, keep: Settings | None = None
) -> OfflineReport:
    """Run the self-test in a temporary library; the user's own library is never touched,
    unless ``keep`` names it: then a passing self-test's tools and run record go there."""
    if keep is not None:
        with library_in_use(keep):  # a read-only home says so before anything runs
            pass
    with tempfile.TemporaryDirectory(prefix="toolsmith-offline-") as tmp:
        settings = replace(base or Settings.load(home=Path(tmp)), home=Path(tmp), network=False, review="auto")
        library = ToolLibrary.open(settings)
        try:
            sandbox = Sandbox(settings)
            report = _drive(settings, library, sandbox, on_event)
            if keep is not None and report.ok:
                report.kept = keep_demo(report, library, keep)
            return report
        finally:
            library.close()


def keep_demo(report: OfflineReport, source: ToolLibrary, settings: Settings) -> Kept:
    """Copy the tools the self-test built into ``settings``' library and write its run record there."""
    status = Status.PENDING if settings.review == "required" else Status.ACTIVE
    names = dict.fromkeys(ref.split("@", 1)[0] for result in report.results for ref in result.created)
    with library_in_use(settings), ToolLibrary.open(settings) as target:
        kept = [
            target.add(tool.spec, provenance=tool.provenance, gate=tool.gate, status=status, actor=KEEP_ACTOR).ref
            for tool in (source.get(name) for name in names)
        ]
        where = target.display
    writer = TrajectoryWriter(settings.trajectories_dir, f"offline-{uuid.uuid4().hex[:8]}", Redactor.from_environment())
    try:
        for result in report.results:
            for event in result.events:
                writer.event(event)
            writer.task(result)
    finally:
        writer.close()
    return Kept(tools=kept, library=where, trajectory=writer.path)


def _drive(settings: Settings, library: ToolLibrary, sandbox: Sandbox, on_event: EventSink) -> OfflineReport:
    results: list[TaskResult] = []
    for index, (task, script) in enumerate(zip(TASKS, (evolve_policy, reuse_policy), strict=True)):
        model = ScriptedModel([script] * settings.max_steps, name="offline-script")
        agent = Agent(
            model=model,
            library=library,
            sandbox=sandbox,
            settings=settings,
            web=no_web(),
            on_event=on_event,
            session_id=f"offline-{index + 1}",
        )
        results.append(agent.run_task(task, index=index))
    return OfflineReport(
        results=results,
        gate_verdict=_gate_verdict(results[0], library),
        reuse_verdict=_reuse_verdict(results),
        backend=sandbox.backend.name,
    )


def _gate_verdict(first: TaskResult, library: ToolLibrary) -> dict[str, Any]:
    refusals = [
        e.outcome
        for e in first.events
        if isinstance(e, ToolResult)
        and e.name == "create_tool"
        and not e.outcome.ok
        and e.outcome.data.get("check") == "test_run"
    ]
    stored_codes = {v.spec.code for v in library.history("days_between")} if len(library) else set()
    refused = bool(refusals) and BROKEN_TOOL not in stored_codes
    return {
        "refused": refused,
        "check": "test_run" if refusals else None,
        "reason": refusals[0].error if refusals else None,
        "written": BROKEN_TOOL in stored_codes,
    }


def _reuse_verdict(results: list[TaskResult]) -> dict[str, Any]:
    expected = [(date(2020, 3, 1) - date(2020, 1, 1)).days, (date(2021, 12, 31) - date(2021, 1, 1)).days]
    observed = [_days_from_tool(r) for r in results]
    second = results[1].reuse_verdict()
    return {
        **second,
        "created_in_task_1": results[0].created,
        "days": observed,
        "expected_days": expected,
        "reused": bool(second["reused"] and results[0].created and observed == expected),
    }


def _days_from_tool(result: TaskResult) -> int | None:
    for event in reversed(result.events):
        if isinstance(event, ToolResult) and event.name == "days_between" and event.outcome.ok:
            return int(event.outcome.data["result"]["days"])
    return None
