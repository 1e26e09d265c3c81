"""The PostgreSQL backend: one psycopg connection, writers serialised by an advisory lock.

Every write transaction first takes a transaction-scoped advisory lock keyed by the
library's schema, so writers on any machine run one after another, exactly as
``BEGIN IMMEDIATE`` makes them on SQLite: version numbers stay gap-free and no update
is lost. Reads take no lock. A connection the server dropped (a restart) is replaced
on the next operation; the transaction it was in is rolled back by the server, so a
half-done change is never visible.
"""

from __future__ import annotations

import hashlib
import select
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import pq
from psycopg import sql as pgsql

from toolsmith.errors import ImmutableVersionError, LibraryError, LibraryUnavailableError
from toolsmith.library import migrations
from toolsmith.library.backend import Backend, Tx
from toolsmith.library.location import LibraryLocation
from toolsmith.library.models import SearchHit, ToolSpec
from toolsmith.library.postgres import search

CONNECT_TIMEOUT_S = 10


class PgRow:
    """A row readable by column name and by position, like ``sqlite3.Row``."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: Sequence[Any]) -> None:
        self._names = names
        self._values = values

    def __getitem__(self, key: str | int) -> Any:
        return self._values[self._names[key] if isinstance(key, str) else key]

    def keys(self) -> list[str]:
        return list(self._names)


def _row_factory(cursor: Any) -> Any:
    names = {col.name: i for i, col in enumerate(cursor.description or ())}
    return lambda values: PgRow(names, values)


@lru_cache(maxsize=256)
def _placeholders(text: str) -> str:
    # Shared SQL uses "?" and contains no literal "?" or "%".
    return text.replace("%", "%%").replace("?", "%s")


class PgTx(Tx):
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self.conn.execute(_placeholders(sql), tuple(args))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(_placeholders(sql), rows)

    def index(self, version_id: int, spec: ToolSpec) -> None:
        search.index(self.conn, version_id, spec)

    def ids_copied(self) -> None:
        # Identity columns do not notice explicit ids; without this the next insert collides.
        for table in ("versions", "audit", "evidence"):
            self.conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM {table}"
            )

    def unindex(self, version_id: int) -> None:
        search.unindex(self.conn, version_id)


class PostgresBackend(Backend):
    errors = (psycopg.Error,)
    bugs = (psycopg.InterfaceError, psycopg.errors.SyntaxError)
    announces_changes = True

    def __init__(self, location: LibraryLocation) -> None:
        self.location = location
        self._conn = self._connect()
        self._listener: psycopg.Connection[Any] | None = None
        self._writing = False
        try:
            self.schema_name = str(self._conn.execute("SELECT current_schema()").fetchone()[0] or "")  # type: ignore[index]
            self._lock_key = lock_key(self.schema_name)
            migrations.migrate(
                migrations.PostgresSchema(self._conn, location.display, self._lock_key), migrations.POSTGRESQL
            )
        except psycopg.Error as exc:
            self._conn.close()
            raise self.translate(exc) from exc
        except LibraryError:
            self._conn.close()
            raise
        self._tx = PgTx(self._conn)

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(
                self.location.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                row_factory=_row_factory,
                application_name="toolsmith",
            )
        except psycopg.Error as exc:
            raise LibraryUnavailableError(self.location.display, self._scrub(exc)) from exc

    def _live(self) -> PgTx:
        """The connection, replaced first if the server dropped it (e.g. restarted)."""
        if self._conn.closed or self._conn.broken or _dropped(self._conn):
            self._conn.close()
            self._conn = self._connect()
            self._tx = PgTx(self._conn)
        return self._tx

    @contextmanager
    def reading(self) -> Iterator[Tx]:
        # Inside a write transaction a dropped connection must fail the transaction, not
        # be replaced: the rest of it would run outside it and commit half a change.
        yield self._tx if self._writing else self._live()

    @contextmanager
    def snapshot(self) -> Iterator[Tx]:
        tx = self._live()
        self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield tx
        finally:
            if not self._conn.closed:
                self._conn.execute("COMMIT")

    @contextmanager
    def writing(self) -> Iterator[Tx]:
        tx = self._live()
        self._writing = True
        try:
            with self._conn.transaction():
                self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                yield tx
        finally:
            self._writing = False

    def translate(self, exc: BaseException) -> Exception:
        assert isinstance(exc, psycopg.Error)
        primary = (exc.diag.message_primary or str(exc)).strip()
        if isinstance(exc, psycopg.errors.RaiseException):
            # SQLSTATE P0001, a PL/pgSQL RAISE EXCEPTION: only the schema's triggers raise
            # it, with "toolsmith: <the rule>"; the rule is what the user reads.
            return ImmutableVersionError(primary.removeprefix("toolsmith:").strip())
        if isinstance(exc, psycopg.OperationalError):
            return LibraryUnavailableError(self.location.display, self._scrub(exc))
        return LibraryError(f"Tool library {self.location.display}: {primary}")

    def _scrub(self, exc: BaseException) -> str:
        text = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
        from urllib.parse import unquote, urlsplit

        password = urlsplit(self.location.url).password
        for secret in filter(None, {password, unquote(password or "")}):
            text = text.replace(secret, "***")
        return text

    def search(self, tx: Tx, query: str, limit: int) -> list[SearchHit]:
        assert isinstance(tx, PgTx)
        return search.search(tx.conn, query, limit)

    def rebuild_index(self, tx: Tx) -> int:
        assert isinstance(tx, PgTx)
        return search.rebuild(tx.conn)

    def close(self) -> None:
        self._conn.close()
        if self._listener is not None:
            self._listener.close()

    def wait_for_change(self, timeout_s: float) -> bool:
        """LISTEN for the audit trigger's notices; another library's schema does not count.

        Returns True at once when listening (re)starts: changes made before it was in
        place were not announced to us, so the caller should look.
        """
        deadline = time.monotonic() + max(timeout_s, 0.0)
        try:
            if self._listener is None or self._listener.closed or self._listener.broken:
                self._listener = self._listen()
                return True
            while (left := deadline - time.monotonic()) > 0:
                for notice in self._listener.notifies(timeout=left, stop_after=1):
                    if notice.payload == self.schema_name:
                        return True
        except (psycopg.Error, LibraryError):
            # The server is away (or the library was closed): drop the listener; the next
            # call starts it again. Waiting out a short while keeps callers from spinning.
            if self._listener is not None:
                self._listener.close()
            self._listener = None
            time.sleep(min(max(deadline - time.monotonic(), 0.0), 1.0))
        return False

    def _listen(self) -> psycopg.Connection[Any]:
        listener = self._connect()
        listener.execute(pgsql.SQL("LISTEN {}").format(pgsql.Identifier(migrations.CHANNEL)))
        return listener


def _dropped(conn: psycopg.Connection[Any]) -> bool:
    """Whether the server has hung up an idle connection (a restart, an admin's terminate).

    Nobody LISTENs on this connection, so while it is idle the server sends nothing
    unless it is saying goodbye (a FATAL message, then end of file). Checking costs one
    non-blocking syscall; reconnecting an idle connection is always safe. So the first
    operation after a restart reconnects instead of failing.
    """
    if conn.info.transaction_status != pq.TransactionStatus.IDLE:
        return conn.pgconn.status == pq.ConnStatus.BAD
    try:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(readable) or conn.pgconn.status == pq.ConnStatus.BAD


def lock_key(schema_name: str) -> int:
    """The advisory-lock key of a library: a signed 64-bit number from its schema's name."""
    digest = hashlib.sha256(f"toolsmith:{schema_name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
