"""``--fresh``: move the library aside so evolution starts from zero, never losing one.

A backup name is claimed with an exclusive create (``O_EXCL``) before anything moves
into it, so two runs in the same second (or microsecond) never share a name and a move
never replaces a backup. The WAL is checkpointed into the main file first, so each
backup is whole on its own.

Moving an SQLite file that another process has open is not safe (its connection would
later delete the new library's WAL by name), so every session holds a shared lock on
``<library file>.lock`` while it uses the library (:func:`library_in_use`), and
``--fresh`` takes the lock exclusively to move the file: it waits for running sessions
to finish, and parallel ``--fresh`` runs take turns. The file is the one ``library.url``
names (the home's ``library.db`` by default); a PostgreSQL library is never moved.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from toolsmith.config import Settings
from toolsmith.config.home import is_read_only
from toolsmith.errors import ConfigError, LibraryError, LibraryPermissionError
from toolsmith.library import location as locations

_SIDE_FILES = ("-wal", "-shm")


@contextmanager
def library_in_use(
    settings: Settings, *, fresh: bool = False, on_wait: Callable[[], None] | None = None, browse: bool = False
) -> Iterator[Path | None]:
    """Hold the library for a session; with ``fresh``, first move it aside (yields the backup).

    In a read-only folder (a read-only mount) nothing can move the library, and no lock can
    be taken: ``browse`` (a command that only reads) goes on without one, any other command
    is refused with a sentence saying what still works."""
    where = locations.parse(settings.library_url, settings.db_path)
    if where.path is not None and is_read_only(where.path.parent):
        if not browse or fresh:
            raise LibraryPermissionError(_read_only_message(settings, where.path.parent), path=where.path.parent)
        yield None
        return
    if where.path is None:
        if fresh:
            raise ConfigError(
                f"--fresh moves a library file aside, and the library at {where.display} is a PostgreSQL "
                "database, which it never touches. Unset library.url (or point it at an empty library) "
                "to start from zero.",
                setting="library.url",
            )
        yield None
        return
    db = where.path
    db.parent.mkdir(parents=True, exist_ok=True)
    with db.with_name(db.name + ".lock").open("a") as fh:
        backup = None
        if fresh:
            _lock(fh.fileno(), exclusive=True, on_wait=on_wait)
            backup = _move_aside(db)
        _lock(fh.fileno(), exclusive=False, on_wait=None)  # from exclusive, a downgrade
        try:
            yield backup
        finally:
            _unlock(fh.fileno())


def _read_only_message(settings: Settings, folder: Path) -> str:
    what = (
        f"The toolsmith home {folder} (TOOLSMITH_HOME)" if folder == settings.home else f"The library's folder {folder}"
    )
    return (
        f"{what} is read-only, and this command writes to the library. Browsing works read-only: "
        "`toolsmith tools list`, `tools show`, `tools search`, `library where` and `ui`. To run tasks or change "
        "tools, point TOOLSMITH_HOME (or library.url) at a writable folder."
    )


def fresh_library(settings: Settings, on_wait: Callable[[], None] | None = None) -> Path | None:
    """Move the library aside now (waiting for sessions using it); return the backup."""
    with library_in_use(settings, fresh=True, on_wait=on_wait) as backup:
        return backup


def _move_aside(db: Path) -> Path | None:
    if not os.path.lexists(db):
        return None
    _checkpoint(db)
    backup = _claim_unique(db)
    try:
        for suffix in _SIDE_FILES:
            side = db.with_name(db.name + suffix)
            if os.path.lexists(side):
                target = backup.with_name(backup.name + suffix)
                _claim(target)
                os.replace(side, target)
        os.replace(db, backup)
    except OSError as exc:
        raise LibraryError(f"--fresh could not move {db} aside to {backup}: {exc.strerror or exc}") from exc
    return backup


def _claim_unique(db: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    for attempt in range(1000):
        extra = f".{attempt}" if attempt else ""
        candidate = db.with_name(f"library.{stamp}.{os.getpid()}{extra}.bak.db")
        with suppress(FileExistsError):
            _claim(candidate)
            return candidate
    raise LibraryError(f"--fresh found no free backup name next to {db}")


def _claim(path: Path) -> None:
    """Create ``path`` empty, failing if anything has that name: the name is now ours."""
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _checkpoint(db: Path) -> None:
    """Fold the WAL into the main file, so the backup does not depend on its side files.

    Best effort: a damaged or foreign file is moved as it is."""
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?mode=rw", uri=True, timeout=10)
    except sqlite3.Error:
        return
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error:
        pass
    finally:
        conn.close()


def _lock(fd: int, *, exclusive: bool, on_wait: Callable[[], None] | None) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux or macOS: no locking
        return
    kind = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except BlockingIOError:
        if on_wait is not None:
            on_wait()
        fcntl.flock(fd, kind)


def _unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover
        return
    fcntl.flock(fd, fcntl.LOCK_UN)
