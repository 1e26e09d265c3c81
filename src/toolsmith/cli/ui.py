"""``toolsmith ui``: serve the library's web view (see :mod:`toolsmith.ui`)."""

from __future__ import annotations

import typer

from toolsmith.cli.common import cli_errors, load_settings

# Next to `toolsmith mcp --transport http`'s usual 8765, so both can run at once.
DEFAULT_PORT = 8766


def ui_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on; beyond loopback needs --token."),
    port: int = typer.Option(DEFAULT_PORT, "--port", min=0, max=65535, help="Port to listen on (0: any free port)."),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="TOOLSMITH_UI_TOKEN",
        show_envvar=True,
        help="Access token (at least 8 characters); generated and printed when not given.",
    ),
) -> None:
    """Serve a local web view of the library: review, tools, runs and an overview."""
    settings = load_settings()
    # Imported here so other commands do not pay for the web stack at start-up.
    from toolsmith.library.fresh import library_in_use
    from toolsmith.ui import serve

    # Held while serving, so `run --fresh` waits instead of moving the library away.
    with cli_errors(), library_in_use(settings, browse=True):
        serve(settings, host=host, port=port, token=token, announce=lambda line: typer.echo(line))
