"""The ``toolsmith tools`` commands: list, show, search, history, audit, rm, export, import, keygen.

The review, health and sync commands (review, approve, reject, quarantine, test, sync)
live in :mod:`toolsmith.cli.review`, which registers them on this app.

Every command takes ``--json`` for machine-readable output on stdout. Failures and exit
codes are those of :mod:`toolsmith.cli.common`: 1 when a tool is missing or something
was refused, 2 for bad arguments or configuration (including a library file that is not
a usable library).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from toolsmith.cli import call as call_cmd
from toolsmith.cli import review
from toolsmith.cli.common import (
    EXIT_CONFIG,
    EXIT_FAILED,
    JsonOption,
    cli_errors,
    emit_json,
    fail,
    open_library,
    open_session,
    parse_limit,
    parse_ref,
    short,
    visible,
)
from toolsmith.config import Settings
from toolsmith.library import Status, ToolLibrary, ToolVersion, signing, user_actor
from toolsmith.library.bundle import ImportReport, Validator, export_tools, import_tools, verify_bundle
from toolsmith.service import evidence, rollback

app = typer.Typer(
    help="Inspect, search, remove, export and import the tools in the library.",
    no_args_is_help=True,
    add_completion=False,
)


def _tool_table(tools: list[ToolVersion], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    # "why" is the status reason: what quarantined, rejected or removed a tool.
    why = any(tool.status_reason for tool in tools)
    for column in ("tool", "version", "status", *(("why",) if why else ()), "calls", "description"):
        table.add_column(column, no_wrap=column in ("tool", "version", "status", "calls"))
    for tool in tools:
        reason = (Text(short(tool.status_reason or "", 60)),) if why else ()
        table.add_row(
            Text(tool.name), str(tool.version), tool.status.value, *reason, str(tool.stats.calls),
            Text(short(tool.spec.description)),
        )  # fmt: skip
    return table


def _pending_note(library: ToolLibrary) -> str | None:
    pending = library.with_status(Status.PENDING)
    if not pending:
        return None
    refs = ", ".join(v.ref for v in pending[:5]) + (", ..." if len(pending) > 5 else "")
    return f"{len(pending)} version(s) await review ({refs}): run `toolsmith tools review`."


# --- commands ------------------------------------------------------------------------


@app.command("list")
def list_tools(
    include_retired: bool = typer.Option(False, "--all", help="Include removed (retired) tools."),
    as_json: bool = JsonOption,
) -> None:
    """List the tools: each one's served version (or its newest), its status and why."""
    with open_library(as_json, browse=True) as library:
        tools = library.list_tools(include_retired=include_retired)
        note = None if as_json else _pending_note(library)
    if as_json:
        emit_json([t.to_dict(include_code=False) for t in tools])
        return
    if not tools:
        typer.echo("The tool library is empty.")
    else:
        Console(highlight=False).print(_tool_table(tools, f"{len(tools)} tool(s)"))
    if note:
        typer.echo(note)


@app.command("show")
def show(
    ref: str = typer.Argument(..., metavar="NAME[@VERSION]", help="A tool, optionally one version."),
    code: bool = typer.Option(True, "--code/--no-code", help="Print the code too."),
    as_json: bool = JsonOption,
) -> None:
    """Show one tool: metadata, provenance, gate result, stats and code."""
    name, version = parse_ref(ref, as_json)
    with open_library(as_json, browse=True) as library:
        tool = library.get(name, version)
        rolled = rollback.last_rollback(library, name)
        proofs = library.evidence(name, tool.version)
    if rolled is not None and tool.version not in (rolled.to_version, rolled.from_version):
        rolled = None
    if as_json:
        extra = {"rollback": rolled.to_dict() if rolled else None, "evidence": [e.to_dict() for e in proofs]}
        emit_json({**tool.to_dict(include_code=True), **extra})
        return
    console = Console(highlight=False)
    table = Table(show_header=False, title=tool.ref, title_justify="left")
    table.add_column("field", style="bold")
    table.add_column("value")
    for key, value in _show_rows(tool):
        table.add_row(key, Text(visible(value)))
    if rolled is not None:
        table.add_row("rollback", Text(visible(rolled.line())))
    for proof in proofs:
        table.add_row("evidence", Text(visible(evidence.describe(proof))))
    console.print(table)
    if code:
        console.print(Syntax(tool.spec.code, "python", line_numbers=True, word_wrap=True))


def _show_rows(tool: ToolVersion) -> list[tuple[str, str]]:
    prov, stats = tool.provenance, tool.stats
    status = tool.status.value + (f" ({tool.status_reason})" if tool.status_reason else "")
    gate = "passed" if tool.gate.get("ok") else f"{tool.gate.get('reason') or 'not recorded'}"
    return [
        ("status", status),
        ("hash", tool.hash),
        ("description", tool.spec.description),
        ("parameters", json.dumps(tool.spec.parameters, ensure_ascii=False)),
        ("test_args", json.dumps(tool.spec.test_args, ensure_ascii=False)),
        ("requirements", ", ".join(r.pin for r in tool.spec.requirements) or "-"),
        ("keywords", ", ".join(tool.spec.keywords) or "-"),
        ("origin", f"{prov.origin} (model {prov.model or '-'}, session {prov.session_id or '-'})"),
        ("task", prov.task or "-"),
        ("sources", ", ".join(prov.sources) or "-"),
        ("created", prov.created_at or "-"),
        ("parent", f"v{tool.parent_version}" if tool.parent_version else "-"),
        ("gate", gate),
        ("calls", f"{stats.calls} ({stats.failures} failed, {stats.consecutive_failures} in a row)"),
    ]


@app.command("search")
def search(
    query: str = typer.Argument(..., help="A task description, in any language."),
    limit: str = typer.Option("5", "--limit", "-k", metavar="K", help="How many tools at most."),
    as_json: bool = JsonOption,
) -> None:
    """Find active tools for a task, best first."""
    k = parse_limit(limit, as_json)
    with open_library(as_json, browse=True) as library:
        hits = library.search(query, limit=k)
    if as_json:
        emit_json([hit.to_dict() for hit in hits])
        return
    if not hits:
        typer.echo("No active tool matches that query.")
        return
    table = Table(title=f"{len(hits)} match(es)", title_justify="left")
    for column in ("score", "tool", "description"):
        table.add_column(column, no_wrap=column != "description")
    for hit in hits:
        table.add_row(f"{hit.score:.3f}", Text(hit.tool.ref), Text(short(hit.tool.spec.description)))
    Console(highlight=False).print(table)


@app.command("history")
def history(
    name: str = typer.Argument(..., help="A tool name."),
    as_json: bool = JsonOption,
) -> None:
    """Every version of a tool, oldest first."""
    with open_library(as_json, browse=True) as library:
        versions = library.history(name)
    if as_json:
        emit_json([v.to_dict(include_code=False) for v in versions])
        return
    table = Table(title=f"{name}: {len(versions)} version(s)", title_justify="left")
    for column in ("version", "status", "reason", "hash", "created", "origin"):
        table.add_column(column, no_wrap=column in ("version", "hash"))
    for v in versions:
        table.add_row(
            str(v.version), v.status.value, Text(v.status_reason or ""), v.hash[:12],
            v.provenance.created_at, Text(v.provenance.origin),
        )  # fmt: skip
    Console(highlight=False).print(table)


@app.command("audit")
def audit(
    name: str | None = typer.Argument(None, help="Only this tool's entries."),
    limit: str = typer.Option("50", "--limit", "-k", metavar="N", help="The most recent N entries."),
    as_json: bool = JsonOption,
) -> None:
    """The audit trail: who changed what, when and why."""
    n = parse_limit(limit, as_json)
    with open_library(as_json, browse=True) as library:
        entries = library.audit_log(name, limit=n)
    if as_json:
        emit_json([e.to_dict() for e in entries])
        return
    if not entries:
        typer.echo("The audit trail is empty.")
        return
    table = Table(title="audit trail", title_justify="left")
    for column in ("at (UTC)", "actor", "action", "tool", "reason"):
        table.add_column(column, overflow="fold")
    for e in entries:
        tool = f"{e.name}@{e.version}" if e.version is not None else str(e.name or "")
        change = _change(e.details)
        at = e.at[:19].replace("T", " ")  # full precision is in --json
        table.add_row(
            at, Text(e.actor), Text(e.action + (f"\n{change}" if change else "")), Text(tool), Text(e.reason or "")
        )
    Console(highlight=False).print(table)


def _change(details: dict[str, Any]) -> str:
    """What an audit entry changed, in a few words ("pending -> active", "as pending")."""
    if "from" in details and "to" in details:
        return f"{details['from']} -> {details['to']}"
    if "status" in details:
        return f"as {details['status']}"
    if isinstance(details.get("versions"), dict):
        return f"{len(details['versions'])} version(s) deleted"
    return ""


@app.command("rm")
def rm(
    name: str = typer.Argument(..., help="The tool to remove."),
    purge: bool = typer.Option(False, "--purge", help="Delete it and its history for good."),
    reason: str = typer.Option("removed by a person", "--reason", help="Why (kept in the audit trail)."),
    as_json: bool = JsonOption,
) -> None:
    """Remove a tool: retire it (history kept), or with --purge delete it for good."""
    with open_library(as_json) as library:
        if purge:
            library.purge(name, actor=user_actor(), reason=reason)
        else:
            library.retire(name, reason=reason, actor=user_actor())
    action = "purged" if purge else "retired"
    if as_json:
        emit_json({"ok": True, "name": name, "action": action})
    else:
        typer.echo(f"{name}: {action}.")


@app.command("export")
def export(
    directory: Annotated[Path, typer.Argument(help="Folder to write the bundle into.")],
    names: Annotated[list[str] | None, typer.Argument(help="Tools to export (default: all).")] = None,
    sign_key: Annotated[
        Path | None,
        typer.Option("--sign-key", metavar="KEY", help="Sign the manifest with this Ed25519 private key."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Export tools as human-readable folders (tool.py + tool.json) with a manifest."""
    with open_library(as_json, browse=True) as library:
        key = signing.load_private_key(sign_key) if sign_key is not None else None
        folders = export_tools(library, directory, names or None, sign_key=key)
    signed = signing.fingerprint(key.public_key()) if key is not None else None
    if as_json:
        emit_json({"ok": True, "directory": str(directory), "tools": [f.name for f in folders], "signed_by": signed})
        return
    typer.echo(f"Exported {len(folders)} tool(s) to {directory}.")
    if signed:
        typer.echo(f"Signed {signing.SIGNED_FILE} with key {signed}.")


@app.command("keygen")
def keygen(
    path: Annotated[Path, typer.Argument(help="Where to write the private key; the public key goes to PATH.pub.")],
    force: bool = typer.Option(False, "--force", help="Replace existing key files."),
    as_json: bool = JsonOption,
) -> None:
    """Create an Ed25519 key pair for signing bundles (private key file mode 0600)."""
    with cli_errors(as_json):
        files = signing.generate_keypair(path, overwrite=force)
    if as_json:
        emit_json({"ok": True, **files.to_dict()})
        return
    typer.echo(f"Private key: {files.private} (keep it secret; sign with --sign-key)")
    typer.echo(f"Public key:  {files.public} (share it; verify with --verify-key)")
    typer.echo(f"Fingerprint: {files.fingerprint}")


@app.command("import")
def import_(
    directory: Annotated[Path, typer.Argument(help="A bundle folder (or one tool's folder).")],
    verify_key: Annotated[
        Path | None,
        typer.Option("--verify-key", metavar="PUB", help="Require a valid signature by this Ed25519 public key."),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Import tools from a bundle: signature, then hashes are verified, then the gate runs again."""
    if not directory.is_dir():
        what = "does not exist" if not directory.exists() else "is not a folder"
        fail(f"{directory} {what}; give a folder written by `toolsmith tools export`.", EXIT_CONFIG, as_json=as_json)
    with cli_errors(as_json):  # a bad signature is refused before the library is even opened
        trusted = signing.load_public_key(verify_key) if verify_key is not None else None
        verify_bundle(directory, trusted)
    with open_session(as_json) as (settings, library):
        status = Status.PENDING if settings.review == "required" else Status.ACTIVE
        report = import_tools(
            library, directory, validate=_gate_validator(settings), status=status, actor=user_actor(),
            trusted_key=trusted,
        )  # fmt: skip
    if as_json:
        emit_json(report.to_dict())
    else:
        _print_import(report)
        if status is Status.PENDING and report.imported:
            typer.echo(f"{len(report.imported)} imported tool(s) await review: run `toolsmith tools review`.")
    if not report.ok:
        refused = ", ".join(o.name for o in report.refused)
        typer.echo(f"error: {len(report.refused)} tool(s) refused: {refused}", err=True)
        raise typer.Exit(EXIT_FAILED)


def _gate_validator(settings: Settings) -> Validator:
    """The save-time gate, with the configured sandbox running each tool's test."""
    from toolsmith.gate.core import Gate
    from toolsmith.sandbox import Sandbox

    return Gate(runner=Sandbox(settings)).check


def _print_import(report: ImportReport) -> None:
    table = Table(title="import", title_justify="left")
    for column in ("tool", "outcome", "version", "reason"):
        table.add_column(column)
    for o in report.outcomes:
        style = {"imported": "green", "unchanged": "cyan", "refused": "red"}.get(o.outcome, "")
        version = str(o.version) if o.version is not None else "-"
        table.add_row(Text(o.name), Text(o.outcome, style=style), version, Text(o.reason or ""))
    Console(highlight=False).print(table)
    counts = f"{len(report.imported)} imported, {len(report.unchanged)} unchanged"
    typer.echo(f"{counts}, {len(report.refused)} refused.")
    typer.echo(f"Signature: {report.signature.describe()}.")


# review, approve, reject, quarantine, test and sync live in their own module, as does call.
review.register(app)
app.command("call")(call_cmd.call)
