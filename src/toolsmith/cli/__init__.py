"""The ``toolsmith`` command line.

``toolsmith demo`` and ``toolsmith run`` drive the agent; ``toolsmith tools`` reviews and
shares the library (``tools call`` runs one tool for a script); ``toolsmith skills``
exports it as Agent Skills folders; ``toolsmith sandbox run`` runs code the way
``code_interpreter`` does; ``toolsmith doctor`` says what is configured and what works;
``toolsmith ui`` serves the same in a browser; ``toolsmith eval report`` runs the evaluation arms through
Inspect AI. Exit codes are listed once, in :mod:`toolsmith.cli.common`.

The console script enters through :mod:`toolsmith.entry`, which catches a Ctrl-C even
while this package's imports load; :func:`run` turns everything after that into an exit
code: an interruption is exit 130 and one line, a bug exit 70 with its traceback in a file.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer

from toolsmith import __version__
from toolsmith.cli.agent_cmds import demo_command, run_command
from toolsmith.cli.common import EXIT_INTERRUPTED, begin_command, crash, fail, say_interrupted
from toolsmith.cli.doctor import doctor_command
from toolsmith.cli.eval_cmds import app as eval_app
from toolsmith.cli.library import app as library_app
from toolsmith.cli.mcp import mcp_command
from toolsmith.cli.sandbox import app as sandbox_app
from toolsmith.cli.skills import app as skills_app
from toolsmith.cli.tools import app as tools_app
from toolsmith.cli.ui import ui_command
from toolsmith.interrupts import is_interrupt

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
    """Run the command line with ``sys.argv``; raises SystemExit with the exit code."""
    sys.exit(run(sys.argv[1:]))


def run(args: Sequence[str]) -> int:
    """Run one command and return its exit code: never a traceback, never "Aborted!"."""
    begin_command()
    command = build_command()
    try:
        command.main(args=list(args), prog_name="toolsmith")  # standalone: always ends in SystemExit
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # a bug in toolsmith: one line that says where the traceback went
        if not is_interrupt(exc):  # a Ctrl-C wrapped by the interpreter is no bug
            return crash(exc)
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:
        # typer ends a Ctrl-C outside any command (while parsing, say) with 130 and no word.
        return say_interrupted()
    return code


def build_command() -> Any:
    """The click command tree of :data:`app`, with a Ctrl-C anywhere in a command turned into
    exit 130 and one line, and ``--help`` free of type tags such as ``<bool>``."""
    command = typer.main.get_command(app)
    plain_help(command)
    invoke = command.invoke

    def interruptible(ctx: Any) -> Any:
        try:
            return invoke(ctx)
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)

    command.invoke = interruptible  # type: ignore[method-assign]
    return command


def plain_help(command: Any) -> None:
    """Name each value by its metavar (``--output OUTPUT``), and give flags none.

    Recent typer versions print the Python type of each parameter (``<bool>``,
    ``<list[str]>``) unless a metavar says otherwise; arguments print it regardless."""
    for param in getattr(command, "params", ()):
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        elif param.metavar is None:
            param.metavar = str(param.name or "value").upper()
        if getattr(param, "param_type_name", "") == "argument" and hasattr(param, "display_type_rich"):
            setattr(param, "display_type_rich", _no_type)  # noqa: B010 - an instance's own, not the class's
    if hasattr(command, "get_help_option"):  # --help itself is made on demand
        made = command.get_help_option

        def help_option(ctx: Any) -> Any:
            option = made(ctx)
            if option is not None:
                option.metavar = ""
            return option

        command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


def _no_type(ctx: Any = None) -> None:
    return None
