"""The embedded backend: one SQLite file on this machine (the default).

Writers exclude each other with ``BEGIN IMMEDIATE``; the search index is FTS5
(:mod:`toolsmith.library.search`); the file's checks and migrations live in
:mod:`toolsmith.library.db` and :mod:`toolsmith.library.migrations`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from toolsmith.config.home import is_read_only
from toolsmith.errors import CorruptLibraryError, ImmutableVersionError, LibraryPermissionError
from toolsmith.library import db, migrations, search
from toolsmith.library.backend import Backend, Tx
from toolsmith.library.location import LibraryLocation, sqlite_at
from toolsmith.library.models import SearchHit, ToolSpec


class SqliteTx(Tx):
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, args)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def index(self, version_id: int, spec: ToolSpec) -> None:
        search.index(self.conn, version_id, spec)

    def unindex(self, version_id: int) -> None:
        search.unindex(self.conn, version_id)

    def ids_copied(self) -> None:
        pass  # SQLite continues after the largest id (and AUTOINCREMENT records explicit ones)


class SqliteBackend(Backend):
    errors = (sqlite3.Error,)
    bugs = (sqlite3.ProgrammingError, sqlite3.InterfaceError)

    def __init__(self, location: LibraryLocation) -> None:
        assert location.path is not None
        self.location = location
        self.path: Path = location.path
        db.check_file(self.path)
        # A read-only folder (a read-only mount): browse what is there, change nothing.
        self.read_only = is_read_only(self.path.parent)
        if self.read_only:
            self._conn = db.connect_read_only(self.path)
            self._tx = SqliteTx(self._conn)
            self._check_current()
            return
        with suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = db.connect(self.path)
        self._tx = SqliteTx(self._conn)
        try:
            # Identify read-only before anything (even the WAL switch) writes to the file.
            schema = migrations.SqliteSchema(self._conn, self.path)
            migrations.identify(schema, migrations.SQLITE)
            db.enable_wal(self._conn)
            migrations.migrate(schema, migrations.SQLITE)
        except CorruptLibraryError:
            self._conn.close()
            raise
        except sqlite3.Error as exc:
            self._conn.close()
            raise db.as_library_error(self.path, exc) from exc

    def _check_current(self) -> None:
        """A read-only library must already have this toolsmith's schema: it cannot be migrated."""
        try:
            number = migrations.identify(migrations.SqliteSchema(self._conn, self.path), migrations.SQLITE)
        except CorruptLibraryError:
            self._conn.close()
            raise
        except sqlite3.Error as exc:
            self._conn.close()
            raise db.as_library_error(self.path, exc) from exc
        if number < len(migrations.SQLITE):
            self._conn.close()
            raise LibraryPermissionError(
                f"The tool library {self.path} was made by an older toolsmith and needs a schema upgrade, which its "
                f"read-only folder does not allow. Open it once where it can be written.",
                path=self.path.parent,
            )

    @classmethod
    def at(cls, path: Path) -> SqliteBackend:
        return cls(sqlite_at(path))

    @contextmanager
    def reading(self) -> Iterator[Tx]:
        yield self._tx

    @contextmanager
    def snapshot(self) -> Iterator[Tx]:
        self._conn.execute("BEGIN")  # deferred: the first read fixes the WAL snapshot
        try:
            yield self._tx
        finally:
            self._conn.execute("COMMIT")

    @contextmanager
    def writing(self) -> Iterator[Tx]:
        with db.immediate(self._conn):
            yield self._tx

    def translate(self, exc: BaseException) -> Exception:
        assert isinstance(exc, sqlite3.Error)
        if db.is_trigger_refusal(exc):
            # The trigger's message is "toolsmith: <the rule>"; the rule is what the user reads.
            return ImmutableVersionError(str(exc).removeprefix("toolsmith:").strip())
        return db.as_library_error(self.path, exc)

    def search(self, tx: Tx, query: str, limit: int) -> list[SearchHit]:
        assert isinstance(tx, SqliteTx)
        return search.search(tx.conn, query, limit)

    def rebuild_index(self, tx: Tx) -> int:
        assert isinstance(tx, SqliteTx)
        return search.rebuild(tx.conn)

    def close(self) -> None:
        self._conn.close()
