"""The ``toolsmith tools`` commands of trust: review, approve, reject, quarantine, test, sync.

:func:`register` adds them to the ``tools`` app of :mod:`toolsmith.cli.tools`. They use
the plumbing of :mod:`toolsmith.cli.common`: ``--json``, one-line errors, exit codes 1
(wrong state, a tool missing, a check failed) and 2 (bad arguments or configuration). The
rules they apply live in :mod:`toolsmith.service.review`; every change of state is audited with
the OS user (``user:<login>``) as the actor.
"""

from __future__ import annotations

import json
from typing import Any

import click
import typer
from rich.console import Console
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from toolsmith.cli.common import (
    EXIT_CONFIG,
    EXIT_FAILED,
    JsonOption,
    emit_json,
    fail,
    open_session,
    parse_ref,
    short,
)
from toolsmith.config import Settings
from toolsmith.errors import ReviewError
from toolsmith.library import Status, ToolLibrary, ToolVersion, user_actor
from toolsmith.sandbox import Sandbox
from toolsmith.service import evidence, rollback
from toolsmith.service import review as rv

ReasonOption = typer.Option(None, "--reason", help="Why (kept in the audit trail); a default is recorded otherwise.")
# typer >= 0.20 raises its own Abort at the end of input; older releases raise click's.
_ABORT = (typer.Abort, click.exceptions.Abort)
_CHOICES = {
    "a": "approve",
    "approve": "approve",
    "r": "reject",
    "reject": "reject",
    "s": "skip",
    "skip": "skip",
    "q": "quit",
    "quit": "quit",
}


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``tools`` app."""
    for name, command in (
        ("approve", approve),
        ("reject", reject),
        ("quarantine", quarantine),
        ("review", review),
        ("test", health_command),
        ("sync", sync_command),
    ):
        app.command(name)(command)


def _sandbox(settings: Settings) -> Sandbox:
    """The configured sandbox (a seam for tests)."""
    return Sandbox(settings)


# --- non-interactive decisions ---------------------------------------------------------


def _decide(action: str, ref: str, reason: str | None, as_json: bool, *, tests: bool = True) -> None:
    name, version = parse_ref(ref, as_json)
    proof = None
    with open_session(as_json) as (settings, library):
        if action == rv.APPROVE:
            proof = _evidence(settings, library, rv.target(library, action, name, version), tests=tests)
            version = proof.tool.version
        decision = rv.decide(library, action, name, version, reason=reason, actor=user_actor(), evidence=proof)
    if as_json:
        emit_json({**decision.to_dict(), "evidence": proof.details() if proof is not None else None})
        return
    line = f"{decision.tool.ref}: {decision.before.value} -> {decision.tool.status.value} ({decision.reason})"
    if decision.superseded is not None:
        line += f"; v{decision.superseded} retired (superseded)"
    typer.echo(line + ".")
    if proof is not None:
        typer.echo(f"evidence: {_evidence_line(proof)}")


def _evidence(settings: Settings, library: ToolLibrary, tool: ToolVersion, *, tests: bool) -> evidence.Evidence:
    """What the approval of ``tool`` rests on: its own tests run now in the sandbox (unless ``tests`` is off)."""
    if not tests:
        return evidence.none_given(tool)
    return evidence.gather(tool, library=library, runner=_sandbox(settings), actor=user_actor())


def _evidence_line(proof: evidence.Evidence) -> str:
    if proof.run is None or proof.sandbox is None:
        return evidence.NOT_RUN
    return f"{proof.run.summary()} in {proof.sandbox.backend} ({proof.sandbox.version})"


def approve(
    ref: str = typer.Argument(..., metavar="NAME[@VERSION]", help="Default: the newest pending version."),
    reason: str | None = ReasonOption,
    tests: bool = typer.Option(
        True, "--tests/--no-tests", help="Run its own tests in the sandbox first and record them as the evidence."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Approve a version after its own tests pass in the sandbox: it becomes served; the served one retires."""
    _decide(rv.APPROVE, ref, reason, as_json, tests=tests)


def reject(
    ref: str = typer.Argument(..., metavar="NAME[@VERSION]", help="Default: the newest pending version."),
    reason: str | None = ReasonOption,
    as_json: bool = JsonOption,
) -> None:
    """Reject a pending version: it is retired with the reason."""
    _decide(rv.REJECT, ref, reason, as_json)


def quarantine(
    ref: str = typer.Argument(..., metavar="NAME[@VERSION]", help="Default: the served (active) version."),
    reason: str | None = ReasonOption,
    as_json: bool = JsonOption,
) -> None:
    """Quarantine an active version: hidden from search and MCP until approved again."""
    _decide(rv.QUARANTINE, ref, reason, as_json)


# --- the interactive walk --------------------------------------------------------------


def review(
    reason: str | None = typer.Option(None, "--reason", help="Reason recorded for every decision in this walk."),
    tests: bool = typer.Option(
        True, "--tests/--no-tests", help="Run a version's own tests in the sandbox before approving it (the evidence)."
    ),
) -> None:
    """Walk through the pending versions (oldest first): approve, reject, skip or quit."""
    counts = {"approve": 0, "reject": 0, "skip": 0}
    with open_session(False) as (settings, library):
        pending = rv.pending_versions(library)
        if not pending:
            typer.echo("Nothing is waiting for review.")
            return
        console = Console(highlight=False)
        for index, tool in enumerate(pending, 1):
            _show_pending(console, library, tool, index, len(pending))
            choice = _ask()
            if choice == "quit":
                break
            if choice == "skip":
                counts["skip"] += 1
                continue
            why = reason if reason is not None or choice == "approve" else _ask_reason()
            proof = _evidence(settings, library, tool, tests=tests) if choice == "approve" else None
            try:
                decision = rv.decide(
                    library, choice, tool.name, tool.version, reason=why, actor=user_actor(), evidence=proof
                )
            except ReviewError as exc:  # decided elsewhere meanwhile, or failing tests: say so and go on
                typer.echo(f"error: {exc}", err=True)
                continue
            counts[choice] += 1
            typer.echo(f"{decision.tool.ref}: {decision.before.value} -> {decision.tool.status.value}.")
    left = len(pending) - sum(counts.values())
    typer.echo(
        f"Approved {counts['approve']}, rejected {counts['reject']}, skipped {counts['skip']}"
        + (f", {left} not reached." if left else ".")
    )


def _ask() -> str:
    while True:
        try:
            answer = typer.prompt("[a]pprove, [r]eject, [s]kip, [q]uit", default="s", show_default=True)
        except _ABORT:  # end of input: stop without deciding
            typer.echo("")
            return "quit"
        choice = _CHOICES.get(str(answer).strip().lower())
        if choice:
            return choice
        typer.echo("Please answer a, r, s or q.")


def _ask_reason() -> str:
    try:
        return str(typer.prompt("Reason", default=rv.DEFAULT_REASONS[rv.REJECT]))
    except _ABORT:
        return rv.DEFAULT_REASONS[rv.REJECT]


def _show_pending(console: Console, library: ToolLibrary, tool: ToolVersion, index: int, total: int) -> None:
    previous = rv.previous_version(library, tool)
    served = library.served(tool.name)
    console.print(Rule(Text(f"{tool.ref}  ({index}/{total} pending)"), align="left"))
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value")
    for key, value in _review_rows(tool, previous, served):
        table.add_row(key, Text(value))
    console.print(table)
    console.print(_gate_table(tool))
    console.print(Syntax(tool.spec.code, "python", line_numbers=True, word_wrap=True))
    diff = rv.review_diff(previous, tool)
    if previous is None:
        console.print(Text("No earlier version: this is a new tool."))
    elif diff:
        console.print(Text(f"Changes against {previous.ref} ({', '.join(rv.changed_fields(previous, tool))}):"))
        console.print(Syntax(diff, "diff", word_wrap=True))
    else:
        changed = ", ".join(rv.changed_fields(previous, tool)) or "nothing"
        console.print(Text(f"Code and pins equal {previous.ref}; changed: {changed}."))


def _review_rows(tool: ToolVersion, previous: ToolVersion | None, served: ToolVersion | None) -> list[tuple[str, str]]:
    prov = tool.provenance
    replaces = f"{served.ref} (retired on approval)" if served is not None and served.version != tool.version else "-"
    return [
        ("description", tool.spec.description),
        ("parameters", json.dumps(tool.spec.parameters, ensure_ascii=False)),
        ("test_args", json.dumps(tool.spec.test_args, ensure_ascii=False)),
        ("requirements", "\n".join(rv.requirement_lines(tool)) or "- (standard library only)"),
        ("task", prov.task or "-"),
        ("model", prov.model or "-"),
        ("URLs read", "\n".join(prov.sources) or "-"),
        ("created", prov.created_at or "-"),
        ("session", prov.session_id or "-"),
        ("origin", prov.origin),
        ("parent", f"v{tool.parent_version}" if tool.parent_version else "-"),
        ("compared with", previous.ref if previous else "-"),
        ("replaces", replaces),
        ("hash", tool.hash),
    ]


def _gate_table(tool: ToolVersion) -> Table | Text:
    gate = tool.gate
    verdict = "passed" if gate.get("ok") else f"refused: {gate.get('reason')}" if "ok" in gate else "not recorded"
    checks = rv.gate_checks(gate)
    if not checks:
        return Text(f"gate: {verdict} (no individual checks recorded)")
    table = Table(title=f"gate: {verdict}", title_justify="left")
    for column in ("check", "result", "message"):
        table.add_column(column)
    for check in checks:
        mark = {True: "ok", False: "FAILED", None: "?"}[check["ok"]]
        table.add_row(Text(check["check"]), mark, Text(short(check["message"], 100)))
    return table


# --- health checks ---------------------------------------------------------------------


def health_command(
    ref: str | None = typer.Argument(None, metavar="[NAME[@VERSION]]", help="One tool (its served or newest version)."),
    all_active: bool = typer.Option(False, "--all", help="Test every active (served) tool."),
    quarantine_failing: bool = typer.Option(
        False, "--quarantine-failing", help="Quarantine each active tool whose test fails (audited)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Re-run tools' stored test_args in the sandbox; exit 1 when any fails."""
    if (ref is None) == (not all_active):
        fail("name one tool, or pass --all (not both)", EXIT_CONFIG, as_json=as_json)
    with open_session(as_json) as (settings, library):
        if ref is not None:
            name, version = parse_ref(ref, as_json)
            tools = [library.get(name, version)]
        else:
            tools = library.with_status(Status.ACTIVE)
        sandbox = _sandbox(settings)
        after = rollback.hook(settings, library=library, runner=sandbox, actor=user_actor())
        results = [
            rv.health_check(t, library=library, runner=sandbox, actor=user_actor(),
                            quarantine_failing=quarantine_failing, on_quarantine=after)
            for t in tools
        ]  # fmt: skip
    passed = sum(r.ok for r in results)
    if as_json:
        emit_json(
            {
                "ok": passed == len(results),
                "passed": passed,
                "failed": len(results) - passed,
                "tools": [r.to_dict() for r in results],
            }
        )
    else:
        _print_health(results)
    if passed != len(results):
        raise typer.Exit(EXIT_FAILED)


def _print_health(results: list[rv.HealthCheck]) -> None:
    if not results:
        typer.echo("No active tools to test.")
        return
    table = Table(title="tools test", title_justify="left")
    for column in ("tool", "status", "result", "ms", "error"):
        table.add_column(column, no_wrap=column != "error")
    for r in results:
        result = Text("pass", style="green") if r.ok else Text("FAIL", style="red")
        status = r.tool.status.value + (" (now)" if r.quarantined else "")
        if r.rolled_back_to is not None:
            status += f"; v{r.rolled_back_to} served again"
        table.add_row(Text(r.tool.ref), status, result, f"{r.latency_ms:.0f}", Text(short(r.error or "", 120)))
    Console(highlight=False).print(table)
    failed = [r for r in results if not r.ok]
    summary = f"{len(results) - len(failed)} passed, {len(failed)} failed"
    quarantined = sum(r.quarantined for r in results)
    typer.echo(summary + (f"; {quarantined} quarantined." if quarantined else "."))
    for r in results:
        if r.note:
            typer.echo(f"note: {r.tool.ref}: {r.note}")


# --- rebuilding the package environment ------------------------------------------------


def sync_command(as_json: bool = JsonOption) -> None:
    """Install the recorded pins of every active and pending tool into the sandbox's environment."""
    with open_session(as_json) as (settings, library):
        sandbox = _sandbox(settings)
        outcome = rv.sync_pins(library, sandbox.sync, env=str(sandbox.env.path))
    if as_json:
        emit_json(outcome.to_dict())
    else:
        _print_sync(outcome)
    if not outcome.ok:
        raise typer.Exit(EXIT_FAILED)


def _print_sync(outcome: rv.SyncOutcome) -> None:
    if not outcome.requested:
        typer.echo(f"No active or pending tool records a package; nothing to sync ({len(outcome.tools)} tool(s)).")
        return
    lines: list[tuple[str, Any]] = [
        ("installed", [r.pin for r in outcome.installed]),
        ("already present", [r.pin for r in outcome.already]),
    ]
    for label, pins in lines:
        typer.echo(f"{label} ({len(pins)}): {', '.join(pins) or '-'}")
    for failure in outcome.failed:
        typer.echo(f"failed for {', '.join(failure.tools)} ({', '.join(failure.pins)}): {failure.error}")
    for text in (*outcome.conflicts, *outcome.notes):
        typer.echo(f"note: {text}")
    checked = "hash-checked" if outcome.hash_checked else "not hash-checked"
    typer.echo(
        f"Environment {outcome.env}: {len(outcome.requested)} pin(s) for {len(outcome.tools)} tool(s), {checked}."
    )
