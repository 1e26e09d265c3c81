"""The library's SQLite connection: opening safely, identifying the file, transactions.

Opening never writes to a file that is not (yet) a toolsmith library: the header and
the schema are inspected read-only first, and anything unexpected raises
:class:`CorruptLibraryError`. Only a missing file, a 0-byte file or an empty SQLite
database is initialised.
"""

from __future__ import annotations

import sqlite3
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolsmith.errors import CorruptLibraryError, LibraryError

# "Tool" in ASCII; stored in the SQLite header so foreign databases are recognised.
APPLICATION_ID = 0x546F6F6C
BUSY_TIMEOUT_MS = 10_000
SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100
# SQLite result codes that mean "this file is damaged or not a database".
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def check_file(path: Path) -> None:
    """Refuse, without opening it through SQLite, a file that cannot be a sound library."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise CorruptLibraryError(path, f"cannot read the file: {exc.strerror}") from exc
    if path.is_dir():
        raise CorruptLibraryError(path, "it is a directory")
    if size == 0:
        return
    try:
        with path.open("rb") as fh:
            header = fh.read(_HEADER_SIZE)
    except OSError as exc:
        raise CorruptLibraryError(path, f"cannot read the file: {exc.strerror}") from exc
    if len(header) < _HEADER_SIZE or not header.startswith(SQLITE_MAGIC):
        raise CorruptLibraryError(path, "not an SQLite database")
    _check_truncation(path, header, size)


def _check_truncation(path: Path, header: bytes, size: int) -> None:
    # While a WAL file holds frames, the main file may legitimately lag behind its header.
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return
    (page_size,) = struct.unpack(">H", header[16:18])
    page_size = 65536 if page_size == 1 else page_size
    change_counter, pages = struct.unpack(">II", header[24:32])
    (valid_for,) = struct.unpack(">I", header[92:96])
    if valid_for == change_counter and pages and size < pages * page_size:
        raise CorruptLibraryError(path, f"the file is truncated ({size} bytes, header says {pages * page_size})")


def connect(path: Path) -> sqlite3.Connection:
    """An autocommit connection (transactions are explicit) with our per-connection pragmas."""
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise CorruptLibraryError(path, f"cannot open it: {exc}") from exc
    conn.row_factory = sqlite3.Row
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as exc:
        conn.close()
        raise as_library_error(path, exc) from exc
    return conn


def enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL (persistent in the file). Retried because the switch needs a lock."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    if str(mode).lower() != "wal":
        raise sqlite3.OperationalError(f"journal_mode is {mode}, expected wal")
    # In WAL mode NORMAL keeps every commit atomic; only the fsync per commit is skipped.
    conn.execute("PRAGMA synchronous = NORMAL")


def is_corruption(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return int(code) & 0xFF in _CORRUPT_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def as_library_error(path: Path, exc: sqlite3.Error) -> Exception:
    """Translate an SQLite error into our hierarchy; corruption names the file."""
    if is_corruption(exc):
        return CorruptLibraryError(path, str(exc))
    return LibraryError(f"Tool library {path}: {exc}")


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction. BEGIN IMMEDIATE takes the write lock up front, so two
    processes never both read-then-write the same state (no lost updates)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
