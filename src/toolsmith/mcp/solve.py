"""``solve_task``: the whole self-evolving agent served as one MCP tool (``toolsmith mcp --solve-task``)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types

from toolsmith.calls import FailureKind
from toolsmith.config import Settings
from toolsmith.config.providers import ProviderConfig
from toolsmith.errors import TaskTooLongError
from toolsmith.library.schema import argument_problems
from toolsmith.mcp.results import payload_result, refusal

log = logging.getLogger("toolsmith.mcp")

SOLVE_TASK = "solve_task"
SOLVE_TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"task": {"type": "string", "description": "The task, in any language, as a user would ask it."}},
    "required": ["task"],
}
SOLVE_TASK_DESCRIPTION = (
    "Run toolsmith's self-evolving agent on a task: it reuses a library tool when one fits, otherwise finds "
    "an open-source library, verifies it in a sandbox and stores a new tool. Returns the answer and a short "
    "trajectory. Slow (it calls a model) and it may add tools to the library."
)


class TaskSolver:
    """Runs the self-evolving agent on one task per call, one call at a time."""

    def __init__(self, settings: Settings, provider: ProviderConfig) -> None:
        self.settings = settings
        self.provider = provider  # resolved at startup, so a missing key fails before serving
        self.lock = anyio.Lock()  # one agent run at a time: each may write tools and costs tokens

    def solve(self, task: str) -> types.CallToolResult:
        from toolsmith.agent.session import run_session
        from toolsmith.redaction import Redactor

        report = run_session([task], settings=self.settings, provider=self.provider)
        result = report.results[0]
        steps = [
            f"{a.name}{'' if a.ok else ' (failed)'}" + (f" v{a.version}" if a.library else "") for a in result.actions
        ]
        payload = {
            "ok": result.status == "answered",
            "answer": result.answer,
            "status": result.status,
            "outcome": result.outcome,
            "error": result.error,
            "created_tools": result.created,
            "reused": result.reuse_verdict()["reused"],
            "trajectory": steps,
            "model": report.model,
            "trajectory_file": str(report.trajectory_path) if report.trajectory_path else None,
        }
        return payload_result(Redactor.from_environment().data(payload), error=not payload["ok"])


def solve_task_tool() -> types.Tool:
    return types.Tool(name=SOLVE_TASK, description=SOLVE_TASK_DESCRIPTION, input_schema=SOLVE_TASK_SCHEMA)


async def solve(solver: TaskSolver, arguments: dict[str, Any]) -> types.CallToolResult:
    problems = argument_problems(SOLVE_TASK_SCHEMA, arguments, strict=True)
    task = arguments.get("task")
    if problems or not isinstance(task, str) or not task.strip():
        detail = "; ".join(problems) or "the task must not be empty"
        return refusal(f"Bad arguments for {SOLVE_TASK}: {detail}.", FailureKind.BAD_ARGUMENTS)
    try:
        solver.settings.check_task(task)
    except TaskTooLongError as exc:
        return refusal(str(exc), FailureKind.BAD_ARGUMENTS)
    async with solver.lock:
        try:
            return await anyio.to_thread.run_sync(solver.solve, task)
        except Exception as exc:  # a failed agent run is this call's failure, not the server's
            log.error("solve_task failed: %s", exc)
            return refusal(f"The agent run failed: {type(exc).__name__}: {exc}", FailureKind.AGENT)
