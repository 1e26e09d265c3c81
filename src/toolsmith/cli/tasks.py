"""Where ``toolsmith run`` gets its tasks: the command line, standard input (``-``) or files.

A task too long for an argument list (the shell's limit is near 128 KiB per argument)
comes from standard input or ``--task-file``. Each source holds one task, read whole, so
a task may span lines. Reading stops at four bytes per allowed character
(``budget.max_task_chars``), so a huge file is refused without being read into memory.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from toolsmith.config import Settings
from toolsmith.errors import ConfigError, TaskTooLongError

STDIN = "-"
_BYTES_PER_CHAR = 4  # UTF-8's longest character


def read_tasks(
    arguments: Sequence[str], files: Sequence[Path], settings: Settings, stdin: BinaryIO | None = None
) -> list[str]:
    """The tasks in order: the arguments (``-`` read from ``stdin``), then each file's text."""
    if list(arguments).count(STDIN) > 1:
        raise ConfigError("`-` (read the task from standard input) may be given once.", setting="TASKS")
    tasks = []
    for argument in arguments:
        if argument == STDIN:
            source = stdin or sys.stdin.buffer
            tasks.append(_decode(_read(source, settings, "standard input"), "standard input"))
        else:
            tasks.append(argument)
    for path in files:
        tasks.append(_decode(_read_file(path, settings), str(path)))
    if not tasks:
        raise ConfigError(
            "no task given. Usage: toolsmith run TASK..., toolsmith run - (one task from standard input) "
            "or toolsmith run --task-file FILE.",
            setting="TASKS",
        )
    for task in tasks:
        if not task.strip():
            raise ConfigError("a task must not be empty", setting="TASKS")
        settings.check_task(task)
    return tasks


def _read_file(path: Path, settings: Settings) -> bytes:
    if path.is_dir():
        raise ConfigError(f"--task-file {path} is a directory; give a file holding the task.", setting="--task-file")
    try:
        with path.open("rb") as fh:  # a pipe works too: --task-file <(command)
            return _read(fh, settings, str(path))
    except FileNotFoundError as exc:
        raise ConfigError(f"--task-file {path} does not exist.", setting="--task-file") from exc
    except OSError as exc:
        raise ConfigError(
            f"--task-file {path}: cannot read it ({exc.strerror or exc}).", setting="--task-file"
        ) from exc


def _read(source: BinaryIO, settings: Settings, name: str) -> bytes:
    cap = settings.max_task_chars
    if not cap:
        return source.read()
    data = source.read(cap * _BYTES_PER_CHAR + 1)
    if len(data) > cap * _BYTES_PER_CHAR:  # more bytes than any task of ``cap`` characters has
        raise TaskTooLongError(None, cap, source=name)
    return data


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"the task in {name} is not UTF-8 text ({exc.reason} at byte {exc.start}).", setting="TASKS"
        ) from exc
