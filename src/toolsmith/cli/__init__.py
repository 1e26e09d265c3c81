"""The ``toolsmith`` command line.

``toolsmith demo`` and ``toolsmith run`` drive the agent; ``toolsmith tools`` reviews and
shares the library (``tools call`` runs one tool for a script); ``toolsmith skills``
exports it as Agent Skills folders; ``toolsmith sandbox run`` runs code the way
``code_interpreter`` does; ``toolsmith doctor`` says what is configured and what works;
``toolsmith ui`` serves the same in a browser; ``toolsmith eval report`` runs the evaluation arms through
Inspect AI. Exit codes are listed once, in :mod:`toolsmith.cli.common`.
"""

from __future__ import annotations

import sys

import typer

from toolsmith import __version__
from toolsmith.cli.agent_cmds import demo_command, run_command
from toolsmith.cli.common import crash
from toolsmith.cli.doctor import doctor_command
from toolsmith.cli.eval_cmds import app as eval_app
from toolsmith.cli.library import app as library_app
from toolsmith.cli.mcp import mcp_command
from toolsmith.cli.sandbox import app as sandbox_app
from toolsmith.cli.skills import app as skills_app
from toolsmith.cli.tools import app as tools_app
from toolsmith.cli.ui import ui_command

app = typer.Typer(
    name="toolsmith",
    help="An agent that builds, verifies, stores and reuses its own tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"toolsmith {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """An agent that builds, verifies, stores and reuses its own tools."""


app.command("demo")(demo_command)
app.command("run")(run_command)
app.command("doctor")(doctor_command)
app.command("mcp")(mcp_command)
app.command("ui")(ui_command)
app.add_typer(tools_app, name="tools", help="Review, search and share the tool library.")
app.add_typer(library_app, name="library", help="Where the tool library lives; copy it to another backend.")
app.add_typer(skills_app, name="skills", help="Export the library's tools as Agent Skills and keep them in step.")
app.add_typer(sandbox_app, name="sandbox", help="Run code in the sandbox, as code_interpreter does.")
app.add_typer(eval_app, name="eval", help="Paired arms through Inspect, and their report (eval extra).")


def main() -> None:
    try:
        app()
    except Exception as exc:  # a bug in toolsmith: one line that says where the traceback went
        sys.exit(crash(exc))
