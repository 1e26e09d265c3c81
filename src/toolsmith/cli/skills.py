"""The ``toolsmith skills`` commands: export the library's tools as Agent Skills, keep them in step.

``export`` writes one skill folder per served tool (or per tool named); ``sync`` also
removes the folders of tools that are no longer served. The rules live in
:mod:`toolsmith.service.skills`. Exit codes are :mod:`toolsmith.cli.common`'s: 1 when a
tool could not be exported (not served, or a folder of that name that toolsmith did not
write), 2 for a folder that cannot be written.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolsmith.cli.common import EXIT_FAILED, JsonOption, cli_errors, emit_json, open_session
from toolsmith.service.skills import SkillReport, export_skills, sync_skills

DEFAULT_DIR = Path(".agents/skills")

app = typer.Typer(
    help="Export the library's tools as Agent Skills (SKILL.md folders) and keep them in step.",
    no_args_is_help=True,
    add_completion=False,
)

ToOption = typer.Option(
    DEFAULT_DIR, "--to", metavar="DIR", help="The skills folder (default: .agents/skills here; see the README)."
)


@app.command("export")
def export(
    names: list[str] | None = typer.Argument(
        None, metavar="[NAME...]", help="Tools to export (default: every served one)."
    ),
    to: Path = ToOption,
    as_json: bool = JsonOption,
) -> None:
    """Write one skill folder per served tool: SKILL.md, scripts/call.sh, references/parameters.json."""
    with open_session(as_json) as (settings, library), cli_errors(as_json):
        report = export_skills(library, to, names or (), home=settings.home)
    _finish(report, as_json)


@app.command("sync")
def sync(to: Path = ToOption, as_json: bool = JsonOption) -> None:
    """Update every exported skill to the served version; remove those of tools no longer served."""
    with open_session(as_json) as (settings, library), cli_errors(as_json):
        report = sync_skills(library, to, home=settings.home)
    _finish(report, as_json)


def _finish(report: SkillReport, as_json: bool) -> None:
    if as_json:
        emit_json(report.to_dict())
    else:
        _print(report)
    if not report.ok:
        raise typer.Exit(EXIT_FAILED)


def _print(report: SkillReport) -> None:
    if report.changes:
        table = Table(title=f"skills in {report.directory}", title_justify="left")
        for column in ("skill", "tool", "action", "why"):
            table.add_column(column, overflow="fold")
        for change in report.changes:
            table.add_row(Text(change.skill), Text(change.tool), change.action, Text(change.reason))
        Console(highlight=False).print(table)
    counts = ", ".join(
        f"{report.count(action)} {action}" for action in ("written", "updated", "unchanged", "removed", "skipped")
    )
    typer.echo(f"{report.directory}: {counts}.")
