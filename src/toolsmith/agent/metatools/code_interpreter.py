"""``code_interpreter``: run Python in the sandbox, installing checked packages first.

This is where the agent proves that a library really delivers data. A run counts as
verification only when it exits 0 *and* prints something other than errors and
tracebacks (:mod:`toolsmith.gate.verification`): code that succeeds silently, or catches a
DNS error and prints it, has shown nothing, and the result says so.
"""

from __future__ import annotations

from typing import Any

from toolsmith.agent.context import TaskContext
from toolsmith.calls import JSONObject, Note, NoteKind, Outcome
from toolsmith.errors import InstallError, PackageError, PackageRefused
from toolsmith.gate.verification import judge, printed_data
from toolsmith.isolation import ExecResult
from toolsmith.model import ToolSchema
from toolsmith.model.replies import usable_code

NOT_VERIFIED_NOTE = (
    "The code exited 0 but {reason}, so this run does not count as verification. "
    "Print the real data the library returned."
)

SCHEMA: ToolSchema = {
    "type": "function",
    "function": {
        "name": "code_interpreter",
        "description": (
            "Run Python 3 code in an isolated sandbox and return stdout, stderr and the exit "
            "code. Use it to try a library for real before wrapping it as a tool: install it "
            "with pip_install, call it, and print the real data it returns. A run that prints "
            "nothing, or only errors, does not count as verification."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "A complete Python script."},
                "pip_install": {
                    # A list, or one string of names split on spaces and commas.
                    "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}],
                    "description": 'Packages to install first, e.g. ["humanize"] or "pandas==2.2.2 pyarrow".',
                },
                "timeout": {"type": "number", "description": "Seconds before the run is killed."},
            },
            "required": ["code"],
        },
    },
}


def handle(ctx: TaskContext, args: JSONObject) -> Outcome:
    code = usable_code(str(args["code"]))
    timeout = _timeout(args.get("timeout"), ctx.settings.limits.timeout_s)
    try:
        run = ctx.sandbox.run_code(code, pip_install=args.get("pip_install"), timeout_s=timeout)
    except PackageRefused as exc:
        return Outcome.failed(str(exc), data={"refused": exc.requirement, "suggestion": exc.suggestion})
    except InstallError as exc:
        return Outcome.failed(str(exc), data={"stderr": exc.stderr[-2000:]})
    except PackageError as exc:
        return Outcome.failed(str(exc))
    for requirement in run.installed:
        ctx.installed[requirement.name] = requirement
    result = run.exec
    data: JSONObject = {
        "exit_code": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "timed_out": result.timed_out,
        "killed_by": result.killed_by,
        "wall_s": result.wall_s,
        "installed": [r.pin for r in run.installed],
    }
    notes = []
    if result.truncated:
        notes.append("Output was longer than the sandbox cap; the middle was cut.")
    verdict = judge(result.ok, result.stdout)
    if verdict.verified:
        ctx.verified_outputs.append(verdict.evidence)
    elif result.ok:
        notes = [NOT_VERIFIED_NOTE.format(reason=verdict.reason)]
        data["verified"] = False
    elif not result.timed_out and (printed := printed_data(result.stdout)):
        ctx.failed_run_data.append(printed)
    summary = result.stdout.strip() or "(no output)"
    return Outcome(
        ok=result.ok,
        data=data,
        error=None if result.ok else _failure(result),
        summary=summary,
        notes=tuple(Note(NoteKind.NOTE, n) for n in notes),
    )


def _failure(result: ExecResult) -> str:
    """Why a run failed, in one line a model can act on (stderr holds the details)."""
    if result.timed_out:
        return f"the code did not finish within its timeout ({result.wall_s:.0f} s) and was killed"
    if result.killed_by:
        return f"the code was stopped ({result.killed_by})"
    return f"the code exited with code {result.exit_code}: see stderr"


def _timeout(value: Any, default: float) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return default
    return min(max(seconds, 1.0), max(default, 1.0) * 5)
