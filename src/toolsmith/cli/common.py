"""What every CLI command shares: the exit codes, the one error-to-exit-code map, the one
way to fail, loading settings, opening the library, and ``--json`` output.

Every command exits with a code from :data:`EXIT_CODES` (the README repeats the table).
A failure is one ``error: ...`` line on stderr, never a traceback; with ``--json`` the
same error is also a ``{"ok": false, ...}`` object on stdout. A bug in toolsmith itself
(an exception nobody expected) exits :data:`EXIT_CRASH`, with its traceback written to a
file that the one-line message names.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from toolsmith.calls import JSONObject, JSONValue
from toolsmith.config import Settings, default_home
from toolsmith.errors import (
    CorruptLibraryError,
    PackageError,
    SandboxError,
    SettingError,
    ToolsmithError,
)

if TYPE_CHECKING:
    from toolsmith.library import ToolLibrary

# --- the exit codes (the only table; README "Exit codes" documents each) ----------------

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_PACKAGES = 3
EXIT_CRASH = 70  # sysexits' EX_SOFTWARE: an internal error
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
EXIT_STOPPED = 143  # 128 + SIGTERM: a server stopped the way service managers stop it

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "done: every task answered (demo: reuse held; sandbox run: the program exited 0)",
    EXIT_FAILED: "not done: the job ran and did not succeed (a task unanswered or stopped by its budget, "
    "reuse not held, a tool missing or refused, a check failed, the sandboxed program failed)",
    EXIT_CONFIG: "the user must change something: a bad argument or setting, a missing or refused key, "
    "an unusable sandbox, library file or --output path",
    EXIT_PACKAGES: "sandbox run: a --pip package was refused or its install failed",
    EXIT_CRASH: "a bug in toolsmith: the message says where its traceback was written",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); the run record so far is written",
    EXIT_STOPPED: "mcp: stopped by SIGTERM, after stopping its warm workers and closing the library",
}

JsonOption = typer.Option(False, "--json", help="Print machine-readable JSON on stdout.")


def exit_code_for(exc: BaseException) -> int:
    """The exit code for an error: the one map from error kinds to exit codes."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, PackageError):
        return EXIT_PACKAGES
    # Errors that name a setting are the user's to fix, whatever their family; a sandbox
    # that cannot be set up is a machine or setting problem, not the job's.
    if isinstance(exc, (SettingError, CorruptLibraryError, SandboxError, OSError)):
        return EXIT_CONFIG
    if isinstance(exc, ToolsmithError):
        return EXIT_FAILED
    return EXIT_CRASH


def one_line(text: str) -> str:
    return " ".join(visible(str(text)).split())


# C0 and C1 controls (ESC starts a terminal escape sequence, CR overwrites the line) and the
# bidirectional overrides that reorder what a terminal shows; newline and tab are layout.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` safe to print to a terminal: each control character shown escaped (``\\x1b``)."""
    return _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


_reported = {"interrupted": False}


def begin_command() -> None:
    """A new command: nothing said yet about an interruption."""
    _reported["interrupted"] = False


def say_interrupted() -> int:
    """Say, unless the command already did (in its one line), that it was interrupted; 130."""
    if not _reported["interrupted"]:
        _reported["interrupted"] = True
        print("error: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def fail(
    message: str,
    code: int = EXIT_FAILED,
    *,
    as_json: bool = False,
    kind: str | None = None,
    extra: Mapping[str, JSONValue] | None = None,
) -> NoReturn:
    """The one way a command fails: one line on stderr (and a JSON object with ``--json``)."""
    line = one_line(message)
    if code == EXIT_INTERRUPTED:
        _reported["interrupted"] = True
    if as_json:
        record: JSONObject = {
            "ok": False,
            "error": line,
            "error_type": kind or _kind(code),
            "exit_code": code,
            **(extra or {}),
        }
        typer.echo(json.dumps(record, ensure_ascii=False))
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(code)


def _kind(code: int) -> str:
    return {EXIT_CONFIG: "config", EXIT_PACKAGES: "packages", EXIT_CRASH: "crash"}.get(code, "failed")


@contextmanager
def cli_errors(as_json: bool = False) -> Iterator[None]:
    """Turn toolsmith's own errors into one line and their exit code.

    Only errors raised on purpose (and OS errors, such as a folder that cannot be
    written) are caught here; anything else is a bug and reaches :func:`crash`."""
    try:
        yield
    except (ToolsmithError, OSError) as exc:
        fail(str(exc), exit_code_for(exc), as_json=as_json)


def crash(exc: BaseException) -> int:
    """Record an unexpected exception's traceback in a file and say where, in one line."""
    from toolsmith.redaction import Redactor

    redactor = Redactor.from_environment()
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    where = _crash_file(redactor.text(text))
    detail = redactor.text(one_line(f"{type(exc).__name__}: {exc}")[:200])
    saved = f"the traceback is in {where}" if where else "the traceback could not be saved"
    print(f"error: internal error ({detail}); {saved}. Please report it.", file=sys.stderr)
    return EXIT_CRASH


def _crash_file(text: str) -> Path | None:
    directory = default_home(os.environ) / "crashes"
    path = directory / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}.txt"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="backslashreplace")
    except OSError:
        return None
    return path


# --- settings, the library, --json ------------------------------------------------------


def load_dotenv(as_json: bool = False) -> None:
    """Read the ``.env`` files (see :mod:`toolsmith.config.envfiles`), saying what was ignored and why."""
    from toolsmith.config.envfiles import load_dotenv_files

    with cli_errors(as_json):
        load_dotenv_files(notify=lambda line: typer.echo(f"note: {line}", err=True))


def load_settings(as_json: bool = False) -> Settings:
    with cli_errors(as_json):
        return Settings.load()


@contextmanager
def open_session(as_json: bool = False, *, browse: bool = False) -> Iterator[tuple[Settings, ToolLibrary]]:
    """The settings and the configured library; every expected failure is a one-line exit.

    The library is held (see :mod:`toolsmith.library.fresh`) so ``--fresh`` never moves it
    meanwhile. ``browse``: the command only reads, so a read-only home will do."""
    from toolsmith.library import ToolLibrary
    from toolsmith.library.fresh import library_in_use

    with cli_errors(as_json):
        settings = Settings.load()
        with library_in_use(settings, browse=browse), ToolLibrary.open(settings) as library:
            yield settings, library


@contextmanager
def open_library(as_json: bool = False, *, browse: bool = False) -> Iterator[ToolLibrary]:
    with open_session(as_json, browse=browse) as (_, library):
        yield library


def emit_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True))


def parse_ref(ref: str, as_json: bool = False) -> tuple[str, int | None]:
    """``NAME`` or ``NAME@VERSION``."""
    name, sep, version = ref.partition("@")
    if not name:
        fail(f"expected NAME or NAME@VERSION, got {short(ref, 100)!r}", EXIT_CONFIG, as_json=as_json)
    if not sep:
        return name, None
    if not version.isdigit() or int(version) < 1:
        fail(f"the version in {short(ref, 100)!r} must be a whole number >= 1", EXIT_CONFIG, as_json=as_json)
    return name, int(version)


def parse_limit(raw: str, as_json: bool = False) -> int:
    text = raw.strip()
    if not text.isdigit() or int(text) < 1:
        fail(f"--limit must be a whole number >= 1 (got {short(raw, 40)!r})", EXIT_CONFIG, as_json=as_json)
    return int(text)


def short(text: str, limit: int = 80) -> str:
    line = one_line(text)
    return line if len(line) <= limit else line[: limit - 1] + "…"
