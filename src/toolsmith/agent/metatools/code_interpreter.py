"""``code_interpreter``: run Python in the sandbox, installing checked packages first.

This is where the agent proves that a library really delivers data. A run counts as
verification only when it exits 0 *and* prints something other than errors and
tracebacks (:mod:`toolsmith.gate.verification`): code that succeeds silently, or catches a
DNS error and prints it, has shown nothing, and the result says so.
"""

from __future__ import annotations

from typing import Any

from toolsmith.agent.context import TaskContext
from toolsmith.errors import InstallError, PackageError, PackageRefused
from toolsmith.gate.verification import judge
from toolsmith.model.replies import usable_code

NOT_VERIFIED_NOTE = (
    "The code exited 0 but {reason}, so this run does not count as verification. "
    "Print the real data the library returned."
)

SCHEMA: dict[str, Any] = {
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


def handle(ctx: TaskContext, args: dict[str, Any]) -> dict[str, Any]:
    code = usable_code(args["code"])
    timeout = _timeout(args.get("timeout"), ctx.settings.limits.timeout_s)
    try:
        run = ctx.sandbox.run_code(code, pip_install=args.get("pip_install"), timeout_s=timeout)
    except PackageRefused as exc:
        return {"ok": False, "error": str(exc), "refused": exc.requirement, "suggestion": exc.suggestion}
    except InstallError as exc:
        return {"ok": False, "error": str(exc), "stderr": exc.stderr[-2000:]}
    except PackageError as exc:
        return {"ok": False, "error": str(exc)}
    for requirement in run.installed:
        ctx.installed[requirement.name] = requirement
    result = run.exec
    payload: dict[str, Any] = {
        "ok": result.ok,
        "exit_code": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "timed_out": result.timed_out,
        "killed_by": result.killed_by,
        "wall_s": result.wall_s,
        "installed": [r.pin for r in run.installed],
    }
    if result.truncated:
        payload["note"] = "Output was longer than the sandbox cap; the middle was cut."
    verdict = judge(result.ok, result.stdout)
    if verdict.verified:
        ctx.verified_outputs.append(verdict.evidence)
    elif result.ok:
        payload["note"] = NOT_VERIFIED_NOTE.format(reason=verdict.reason)
        payload["verified"] = False
    return payload


def _timeout(value: Any, default: float) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return default
    return min(max(seconds, 1.0), max(default, 1.0) * 5)
