"""What every CLI command shares: loading settings and turning errors into exit codes.

Exit codes: 0 success, 1 the job ran but failed (a tool missing, reuse not held),
2 the user must change something (configuration, a missing key, an unusable sandbox
or library file, a bad argument). Errors become one clear line on stderr, never a
traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer
from rich.console import Console

from toolsmith.config import Settings
from toolsmith.errors import ConfigError, CorruptLibraryError, SandboxError, ToolRunError, ToolsmithError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2

err_console = Console(stderr=True, highlight=False)


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    err_console.print(f"[red]error:[/] {message}", markup=True, soft_wrap=True)
    raise typer.Exit(code)


def exit_code_for(exc: ToolsmithError) -> int:
    if isinstance(exc, (ConfigError, CorruptLibraryError)):
        return EXIT_CONFIG
    if isinstance(exc, SandboxError) and not isinstance(exc, ToolRunError):
        return EXIT_CONFIG  # the sandbox cannot run here: a machine or setting problem
    return EXIT_FAILED


@contextmanager
def cli_errors() -> Iterator[None]:
    """Map toolsmith errors to a message and an exit code."""
    try:
        yield
    except ToolsmithError as exc:
        fail(_escape(str(exc)), exit_code_for(exc))
    except KeyboardInterrupt:
        err_console.print("interrupted")
        raise typer.Exit(130) from None


def load_settings() -> Settings:
    with cli_errors():
        return Settings.load()


def _escape(text: str) -> str:
    return text.replace("[", "\\[")
