"""``toolsmith library ...``: where the tool library lives, and moving it elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolsmith.cli.common import EXIT_CONFIG, JsonOption, cli_errors, emit_json, fail, open_library

app = typer.Typer(no_args_is_help=True)


@app.command("migrate")
def migrate(
    to: Annotated[
        str,
        typer.Option("--to", metavar="URL", help="The new, empty library: postgresql://... or sqlite:///path."),
    ],
    as_json: bool = JsonOption,
) -> None:
    """Copy the whole configured library (every version, audit trail, usage stats) to URL.

    The copy is one transaction and every content hash is checked before and after.
    The configured library is left as it was; point library.url at URL to switch.
    """
    from toolsmith.library import ToolLibrary
    from toolsmith.library.location import parse
    from toolsmith.library.transfer import copy_library

    if not to.strip():
        fail("--to needs a library URL (postgresql://... or sqlite:///path)", EXIT_CONFIG, as_json=as_json)
    with open_library(as_json, browse=True) as source, cli_errors(as_json):
        target_location = parse(to, Path("library.db"))
        here = source.location.path
        there = target_location.path
        if target_location.url == source.location.url or (here and there and here.resolve() == there.resolve()):
            fail(f"--to names the configured library itself ({source.display})", EXIT_CONFIG, as_json=as_json)
        with ToolLibrary(target_location) as target:
            report = copy_library(source, target)
    if as_json:
        emit_json({"ok": True, **report.to_dict()})
        return
    typer.echo(
        f"Copied {report.tools} tool(s), {report.versions} version(s) and {report.audit_entries} audit "
        f"entries from {report.source} to {report.target}; {report.verified_hashes} hash(es) verified."
    )
    typer.echo("Point library.url (or TOOLSMITH_LIBRARY_URL) at the new library to use it.")


@app.command("where")
def where(as_json: bool = JsonOption) -> None:
    """Show which library the settings select (the password is never shown)."""
    with open_library(as_json, browse=True) as library:
        count = len(library)
    if as_json:
        emit_json({"ok": True, "library": library.display, "tools": count})
        return
    typer.echo(f"{library.display}: {count} tool(s)")
