"""The ``--output`` file of ``run`` and ``demo``: checked before the run, written whatever happens.

:func:`check_output_path` runs before any model call, so a directory or a missing
folder is a one-line error and not a lost run. :func:`write_output` writes through a
uniquely named temporary file in the same folder and renames it into place, removing
the temporary file on any failure, so a reader never sees half a file and nothing stray
is left behind. Secrets are redacted.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from contextlib import suppress
from pathlib import Path

from toolsmith.calls import JSONObject
from toolsmith.errors import ConfigError
from toolsmith.redaction import Redactor


def check_output_path(path: Path) -> None:
    """Refuse an ``--output`` that cannot be written, before the run starts."""
    if path.is_dir():
        raise ConfigError(f"--output {path} is a directory; give a file name, such as {path / 'run.json'}.",
                          setting="--output")  # fmt: skip
    if _special(path):
        return  # /dev/stdout and the like are written in place
    folder = path.parent
    if not folder.exists():
        raise ConfigError(f"--output {path}: the folder {folder} does not exist.", setting="--output")
    if not folder.is_dir():
        raise ConfigError(f"--output {path}: {folder} is not a folder.", setting="--output")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".probe")
    except OSError as exc:
        raise ConfigError(f"--output {path}: cannot write in {folder} ({exc.strerror or exc}).",
                          setting="--output") from exc  # fmt: skip
    os.close(fd)
    os.unlink(probe)


def write_output(path: Path, data: JSONObject, redactor: Redactor | None = None) -> None:
    """Write the ``--output`` JSON atomically, with secrets redacted."""
    redactor = redactor or Redactor.from_environment()
    text = json.dumps(redactor.data(data), ensure_ascii=False, indent=2, default=str) + "\n"
    if _special(path):
        with path.open("w", encoding="utf-8") as fh:
            fh.write(text)
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def _special(path: Path) -> bool:
    """An existing file that is not a regular file (a FIFO, /dev/stdout): never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)
