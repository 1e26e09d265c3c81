"""``toolsmith mcp``: serve the library's active tools to any MCP client.

The SDK is an optional extra, so it is imported only when the command runs; without it
the command says how to install it (exit 2). Exit codes as everywhere: 2 for anything
the user must change (a bad option, a missing key for ``--solve-task``, a port in use).
Over HTTP every request must carry a bearer token (:mod:`toolsmith.mcp.auth`): the
``mcp.token`` setting, or one generated and printed at start.
"""

from __future__ import annotations

from enum import Enum
from importlib import metadata
from typing import TYPE_CHECKING

import typer

from toolsmith.cli.common import EXIT_CONFIG, cli_errors, fail, load_dotenv, load_settings

if TYPE_CHECKING:
    from toolsmith.config import Settings
    from toolsmith.mcp.solve import TaskSolver

INSTALL_HINT = "pip install 'toolsmith[mcp]'"
SDK_MAJOR = 2


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def mcp_command(
    transport: Transport = typer.Option(
        Transport.stdio, "--transport", help="stdio (for a desktop client to spawn) or http (streamable HTTP)."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on with --transport http."),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port for --transport http; 0 picks a free one."),
    solve_task: bool = typer.Option(
        False, "--solve-task", help="Also serve solve_task(task), which runs the whole agent (needs a model key)."
    ),
    no_auth: bool = typer.Option(
        False, "--no-auth", help="HTTP without the bearer token (refused beyond loopback; see mcp.token)."
    ),
) -> None:
    """Serve the tool library's active tools over the Model Context Protocol."""
    _require_sdk()
    from toolsmith.library.fresh import library_in_use
    from toolsmith.mcp.server import ServeOptions, serve

    if solve_task:  # like `toolsmith run`: the model settings may live in a .env file
        load_dotenv()
    settings = load_settings()
    solver = _solver(settings) if solve_task else None
    with cli_errors():
        options = ServeOptions(transport=transport.value, host=host, port=port, no_auth=no_auth)
        # Held while serving, so `run --fresh` waits instead of moving the library away.
        with library_in_use(settings):
            serve(settings, options, solver=solver)


def _require_sdk() -> None:
    """Fail with an install hint, not a traceback, when the ``mcp`` SDK is missing or too old."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        fail(f"toolsmith mcp needs the MCP Python SDK, which is not installed: {INSTALL_HINT}", EXIT_CONFIG)
    try:
        version = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        version = ""  # importable without distribution metadata (a source checkout): just try it
    major = version.split(".", 1)[0]
    if major.isdigit() and int(major) < SDK_MAJOR:
        fail(
            f"toolsmith mcp needs version {SDK_MAJOR} or newer of the MCP Python SDK (found mcp {version}): "
            f"pip install --upgrade 'mcp>={SDK_MAJOR}.3'",
            EXIT_CONFIG,
        )
    try:
        import toolsmith.mcp.server  # noqa: F401  (an SDK that imports but lacks what we use)
    except ImportError as exc:
        fail(f"the installed MCP Python SDK cannot be used ({exc}): {INSTALL_HINT}", EXIT_CONFIG)


def _solver(settings: Settings) -> TaskSolver:
    """The agent behind solve_task; a missing model key fails here, before serving anything."""
    from toolsmith.config.providers import resolve_provider
    from toolsmith.mcp.solve import TaskSolver

    with cli_errors():
        return TaskSolver(settings, resolve_provider())
