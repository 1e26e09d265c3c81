"""``toolsmith tools call NAME[@VERSION]``: one stored tool, for scripts, cron jobs and skills.

The call goes through the one door every caller uses
(:func:`~toolsmith.service.toolcall.call_stored_tool`): the arguments are checked as the
agent's and the MCP server's are, the code runs in the sandbox, the outcome is recorded
in the tool's usage stats, a tool that keeps failing is quarantined, and a quarantine may
serve the parent again (:mod:`toolsmith.service.rollback`).

stdout is always exactly one JSON object: the outcome (``ok``, ``tool``, ``version``,
``result`` and ``source``, or ``error`` and ``error_type``). The exit code says which:

* 0: the tool answered;
* 1: the tool ran and failed (its own fault, recorded against it);
* 2: the caller must change something: arguments that are not a JSON object or do not fit
  the tool's parameters, an unknown tool or version, a version that is not served (the
  message names the one that is), or a machine that cannot run it (no sandbox, packages
  not installable here).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer

from toolsmith.calls import Blame, FailureKind
from toolsmith.cli.common import EXIT_CONFIG, EXIT_FAILED, fail, open_session, parse_ref, short
from toolsmith.config import Settings
from toolsmith.errors import SandboxUnavailableError, ToolNotFoundError, VersionNotServedError
from toolsmith.library import user_actor
from toolsmith.sandbox import Sandbox, ToolRunner
from toolsmith.service import rollback
from toolsmith.service.serving import callable_version
from toolsmith.service.toolcall import StoredCall, call_stored_tool

STDIN = "-"


def _sandbox(settings: Settings) -> ToolRunner:
    """The configured sandbox (a seam for tests)."""
    return Sandbox(settings)


def call(
    ref: str = typer.Argument(..., metavar="NAME[@VERSION]", help="A tool; @VERSION pins that version."),
    args: str | None = typer.Option(
        None, "--args", metavar="JSON", help="The arguments as a JSON object; '-' reads them from stdin."
    ),
    args_file: Path | None = typer.Option(
        None, "--args-file", metavar="FILE", help="Read the arguments (a JSON object) from FILE ('-': stdin)."
    ),
) -> None:
    """Call one stored tool in the sandbox and print its outcome as JSON (exit 0 ok, 1 failed, 2 refused)."""
    name, version = parse_ref(ref, True)
    arguments = _arguments(args, args_file)
    with open_session(True) as (settings, library):
        try:
            tool = callable_version(library, name, version)
        except ToolNotFoundError as exc:
            _refuse(str(exc), FailureKind.UNKNOWN_TOOL)
        except VersionNotServedError as exc:
            _refuse(str(exc), FailureKind.NOT_ACTIVE, served=exc.served)
        runner = _sandbox(settings)
        actor = user_actor()
        try:
            done = call_stored_tool(
                tool, arguments, library=library, runner=runner, actor=actor,
                quarantine_after=settings.quarantine_after,
                on_quarantine=rollback.hook(settings, library=library, runner=runner, actor=actor),
            )  # fmt: skip
        except SandboxUnavailableError as exc:
            _refuse(f"The sandbox cannot run tools on this machine: {exc}", FailureKind.SANDBOX_UNAVAILABLE)
    _report(done)


def _report(done: StoredCall) -> None:
    message = done.result().to_message()
    blame = done.run.blame
    if blame is Blame.CALLER or blame is Blame.MACHINE:
        kind = done.run.error_type or FailureKind.SANDBOX
        _refuse(done.run.error or "the tool could not be called", kind, tool=done.tool.ref)
    typer.echo(json.dumps(message, ensure_ascii=False, default=str))
    if not done.run.ok:
        typer.echo(f"error: {short(done.run.error or 'the tool failed', 300)}", err=True)
        raise typer.Exit(EXIT_FAILED)


def _refuse(message: str, kind: FailureKind, **extra: Any) -> NoReturn:
    fail(message, EXIT_CONFIG, as_json=True, kind=kind.value, extra=extra)


def _arguments(text: str | None, path: Path | None) -> dict[str, Any]:
    """The call's arguments: ``--args``, ``--args-file`` or stdin; none given is ``{}``."""
    if text is not None and path is not None:
        _refuse("give the arguments once: --args or --args-file, not both", FailureKind.BAD_ARGUMENTS)
    if text is None and path is None:
        return {}
    where = "--args"
    if text == STDIN or (path is not None and str(path) == STDIN):
        where, text = "stdin", sys.stdin.read()
    elif path is not None:
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            _refuse(f"cannot read the arguments from {path}: {exc}", FailureKind.BAD_ARGUMENTS)
    try:
        value = json.loads(text or "")
    except ValueError as exc:
        _refuse(f"the arguments from {where} are not JSON: {exc}", FailureKind.BAD_ARGUMENTS)
    if not isinstance(value, dict):
        _refuse(
            f"the arguments from {where} must be a JSON object of the tool's parameters, "
            f"not {type(value).__name__}", FailureKind.BAD_ARGUMENTS,
        )  # fmt: skip
    return value
