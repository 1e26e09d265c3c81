"""The ``toolsmith`` command line.

``toolsmith demo`` and ``toolsmith run`` drive the agent; ``toolsmith tools`` reviews and
shares the library; ``toolsmith sandbox run`` runs code the way ``code_interpreter``
does; ``toolsmith doctor`` says what is configured and what works.
"""

from __future__ import annotations

import typer

from toolsmith.cli.agent_cmds import demo_command, run_command
from toolsmith.cli.doctor import doctor_command
from toolsmith.cli.mcp import mcp_command
from toolsmith.cli.sandbox import app as sandbox_app
from toolsmith.cli.tools import app as tools_app

app = typer.Typer(
    name="toolsmith",
    help="An agent that builds, verifies, stores and reuses its own tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("demo")(demo_command)
app.command("run")(run_command)
app.command("doctor")(doctor_command)
app.command("mcp")(mcp_command)
app.add_typer(tools_app, name="tools", help="Review, search and share the tool library.")
app.add_typer(sandbox_app, name="sandbox", help="Run code in the sandbox, as code_interpreter does.")


def main() -> None:
    app()
