"""The library's SQLite connection: opening safely, identifying the file, transactions.

Opening never writes to a file that is not (yet) a toolsmith library: the header and
the schema are inspected read-only first, and anything unexpected raises
:class:`CorruptLibraryError`. Only a missing file or an empty SQLite database is
initialised. A new file is made under a temporary name and linked into place, so no
other process ever sees a half-made (0-byte) library; a 0-byte ``library.db`` is
therefore damaged, and is left untouched. A file this user may not read, or a folder it
may not write, is a permission problem (:class:`LibraryPermissionError`), not damage. A
library in a read-only folder (a read-only mount) is opened read-only (:func:`connect_read_only`).
"""

from __future__ import annotations

import os
import sqlite3
import struct
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from toolsmith.config.home import on_read_only_mount
from toolsmith.errors import CorruptLibraryError, LibraryError, LibraryPermissionError

# "Tool" in ASCII; stored in the SQLite header so foreign databases are recognised.
APPLICATION_ID = 0x546F6F6C
BUSY_TIMEOUT_MS = 10_000
SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100
# SQLite result codes that mean "this file is damaged or not a database".
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_READONLY = 8  # SQLITE_READONLY
_CANTOPEN = 14  # SQLITE_CANTOPEN: also what a folder we may not write gives
_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
# The extended code of a trigger's RAISE(ABORT, ...): only our schema's rules raise it.
CONSTRAINT_TRIGGER = 1811  # SQLITE_CONSTRAINT_TRIGGER


def check_file(path: Path) -> None:
    """Refuse, without opening it through SQLite, a file that cannot be a sound library."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    except PermissionError as exc:
        raise _unreadable(path, exc) from exc
    except OSError as exc:
        raise CorruptLibraryError(path, f"cannot read the file: {exc.strerror}") from exc
    if path.is_dir():
        raise CorruptLibraryError(path, "it is a directory")
    if size == 0:
        raise CorruptLibraryError(path, "the file is empty (0 bytes), so whatever it held is gone")
    try:
        with path.open("rb") as fh:
            header = fh.read(_HEADER_SIZE)
    except PermissionError as exc:
        raise _unreadable(path, exc) from exc
    except OSError as exc:
        raise CorruptLibraryError(path, f"cannot read the file: {exc.strerror}") from exc
    if len(header) < _HEADER_SIZE or not header.startswith(SQLITE_MAGIC):
        raise CorruptLibraryError(path, "not an SQLite database")
    _check_truncation(path, header, size)


def _unreadable(path: Path, exc: PermissionError) -> LibraryPermissionError:
    # Not being allowed to read a file says nothing about its content: not damage.
    return LibraryPermissionError(
        f"Tool library {path}: cannot read it ({exc.strerror}). Fix its owner or permissions.", path=path
    )


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
        if not os.path.lexists(path):
            _create(path)
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise as_library_error(path, exc) from exc
    conn.row_factory = sqlite3.Row
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as exc:
        conn.close()
        raise as_library_error(path, exc) from exc
    return conn


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that never writes, for a library in a folder that cannot be written.

    A WAL reader needs the ``-shm`` file, which a read-only folder may not hold; then the
    file is opened as immutable (nothing can change it while the folder stays read-only)."""
    if not os.path.lexists(path):
        raise LibraryPermissionError(
            f"There is no tool library at {path}, and its folder {path.parent} is read-only, so none can be made. "
            "Point TOOLSMITH_HOME (or library.url) at a writable folder.",
            path=path.parent,
        )
    failure: sqlite3.Error | None = None
    for mode in ("mode=ro", "immutable=1"):
        conn = sqlite3.connect(
            f"{path.absolute().as_uri()}?{mode}", uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None, check_same_thread=False,
        )  # fmt: skip
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # the open happens here
        except sqlite3.Error as exc:
            conn.close()
            failure = exc
            continue
        return conn
    assert failure is not None
    raise as_library_error(path, failure) from failure


def _create(path: Path) -> None:
    """Make an empty WAL-mode database under a temporary name, then link it into place.

    A link fails rather than replace a file, so when several processes create the
    library at once one file wins and the others open it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.new")
    try:
        conn = sqlite3.connect(str(tmp))
        try:
            conn.execute("PRAGMA journal_mode = WAL")  # writes the header: the file is never 0 bytes
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: open theirs
        except OSError:  # a file system without hard links: a rename, only if still free
            if not os.path.lexists(path):
                os.replace(tmp, path)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            with suppress(FileNotFoundError):
                leftover.unlink()


def enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL (persistent in the file). Retried because the switch needs a lock."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    if str(mode).lower() != "wal":
        raise sqlite3.OperationalError(f"journal_mode is {mode}, expected wal")
    # In WAL mode NORMAL keeps every commit atomic; only the fsync per commit is skipped.
    conn.execute("PRAGMA synchronous = NORMAL")


def error_code(exc: sqlite3.Error) -> int | None:
    """SQLite's extended result code for ``exc``; None on Python 3.10, whose errors carry none."""
    code = getattr(exc, "sqlite_errorcode", None)  # an attribute since Python 3.11
    return int(code) if code is not None else None


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Another connection holds the lock. Without a code (Python 3.10) any operational
    error may be one, so the caller's deadline bounds the retries."""
    code = error_code(exc)
    return code is None or code & 0xFF in _BUSY_CODES


def is_corruption(exc: sqlite3.Error) -> bool:
    code = error_code(exc)
    if code is not None:
        return code & 0xFF in _CORRUPT_CODES
    # Without a code (Python 3.10) the class says it: sqlite3 raises exactly DatabaseError,
    # no subclass, for SQLITE_CORRUPT and SQLITE_NOTADB.
    return type(exc) is sqlite3.DatabaseError


def is_trigger_refusal(exc: sqlite3.Error) -> bool:
    """One of the schema's triggers refused a change (versions are immutable, ...).
    Python 3.10 carries no code, so there the refusal stays a plain LibraryError."""
    return isinstance(exc, sqlite3.IntegrityError) and error_code(exc) == CONSTRAINT_TRIGGER


def as_library_error(path: Path, exc: sqlite3.Error) -> Exception:
    """Translate an SQLite error into our hierarchy, naming the file at fault."""
    if is_corruption(exc):
        return CorruptLibraryError(path, str(exc))
    code = error_code(exc)
    # Without a code (Python 3.10) the file system is asked whether a part is read-only.
    readonly = code & 0xFF in (_READONLY, _CANTOPEN) if code is not None else isinstance(exc, sqlite3.OperationalError)
    culprit = read_only_part(path) if readonly else None
    if culprit is not None and on_read_only_mount(culprit):
        return LibraryPermissionError(
            f"Tool library {path}: {exc}: {culprit} is on a read-only mount, so the library can be browsed but not "
            "changed. Point TOOLSMITH_HOME (or library.url) at a writable folder to change it.",
            path=culprit,
        )
    if culprit is not None:
        hint = " (or, while no toolsmith runs, remove it: SQLite rebuilds it)" if culprit.name.endswith("-shm") else ""
        return LibraryPermissionError(
            f"Tool library {path}: {exc}: {culprit} is not writable by this user. Fix its owner or permissions{hint}.",
            path=culprit,
        )
    return LibraryError(f"Tool library {path}: {exc}")


def read_only_part(path: Path) -> Path | None:
    """Which of the library's files (or its folder) this process cannot write."""
    for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if part.exists() and not os.access(part, os.W_OK):
            return part
    if not os.access(path.parent, os.W_OK):
        return path.parent
    return None


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
