"""The persistent tool library: versioned, content-hashed, audited tools in one SQLite file.

Rules the store enforces (the schema's triggers enforce the same ones underneath):

* versions never change; re-creating a tool adds version N+1, identical content is a
  no-op returning the existing version;
* at most one version per tool is active, and that one is *served* (found by search,
  returned by :meth:`ToolLibrary.get`); activating a version retires the previous one;
* every state change writes an audit row in the same transaction, and every logical
  operation is one ``BEGIN IMMEDIATE`` transaction, so a crash leaves the old or the
  new state and two processes never lose each other's updates.
"""

from __future__ import annotations

import getpass
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from toolsmith.errors import (
    CorruptLibraryError,
    ImmutableVersionError,
    LibraryError,
    ToolNotFoundError,
)
from toolsmith.library import db, migrations, search
from toolsmith.library.models import (
    AuditEntry,
    Provenance,
    SearchHit,
    Status,
    ToolSpec,
    ToolVersion,
    UsageStats,
)
from toolsmith.library.rows import VERSION_COLUMNS, dumps, to_audit, to_stats, to_version

if TYPE_CHECKING:
    from toolsmith.config import Settings

_SELECT = f"SELECT {VERSION_COLUMNS} FROM versions v LEFT JOIN stats s ON s.version_id = v.id"
# The version a tool is shown as: the served one, else the newest live one, else the newest.
_DISPLAY = (
    "COALESCE(t.active_version, (SELECT MAX(x.version) FROM versions x "
    "WHERE x.name = t.name AND x.status != 'retired'), t.latest_version)"
)
_MAX_ERROR_CHARS = 2000


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def user_actor() -> str:
    """The audit actor for a person at the command line."""
    try:
        return f"user:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name (e.g. a container without /etc/passwd entry)
        return "user:unknown"


class ToolLibrary:
    """The tool library stored in one SQLite file. Safe to share between processes."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._depth = 0
        db.check_file(self.path)
        with suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = db.connect(self.path)
        try:
            # Identify read-only before anything (even the WAL switch) writes to the file.
            migrations.identify(self._conn, self.path)
            db.enable_wal(self._conn)
            migrations.migrate(self._conn, self.path)
        except CorruptLibraryError:
            self._conn.close()
            raise
        except sqlite3.Error as exc:
            self._conn.close()
            raise db.as_library_error(self.path, exc) from exc

    @classmethod
    def open(cls, settings: Settings) -> ToolLibrary:
        settings.home.mkdir(parents=True, exist_ok=True)
        return cls(settings.db_path)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ToolLibrary:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ToolLibrary({str(self.path)!r})"

    # --- transactions ----------------------------------------------------------------

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            text = str(exc)
            if text.startswith("toolsmith:"):
                raise ImmutableVersionError(text.removeprefix("toolsmith:").strip()) from exc
            raise db.as_library_error(self.path, exc) from exc
        except (ValueError, TypeError, KeyError) as exc:  # a stored record that does not decode
            raise CorruptLibraryError(self.path, f"a stored record is damaged ({exc})") from exc

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._errors():
            yield self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._errors():
            if self._depth:  # inside batch(): the outer transaction commits or rolls back
                yield self._conn
                return
            self._depth += 1
            try:
                with db.immediate(self._conn) as conn:
                    yield conn
            finally:
                self._depth -= 1

    @contextmanager
    def batch(self) -> Iterator[ToolLibrary]:
        """Group several writes into one transaction: all of them happen, or none."""
        with self._write():
            yield self

    # --- adding ----------------------------------------------------------------------

    def add(
        self,
        spec: ToolSpec,
        *,
        provenance: Provenance,
        gate: dict[str, Any],
        status: Status = Status.ACTIVE,
        parent_version: int | None = None,
        actor: str = "agent",
    ) -> ToolVersion:
        """Store ``spec`` as the tool's next version (or return the version with the same hash)."""
        version, _ = self.add_or_get(
            spec, provenance=provenance, gate=gate, status=status,
            parent_version=parent_version, actor=actor,
        )  # fmt: skip
        return version

    def add_or_get(
        self,
        spec: ToolSpec,
        *,
        provenance: Provenance,
        gate: dict[str, Any],
        status: Status = Status.ACTIVE,
        parent_version: int | None = None,
        actor: str = "agent",
        action: str = "add",
        details: dict[str, Any] | None = None,
    ) -> tuple[ToolVersion, bool]:
        """Like :meth:`add`, also saying whether a new version was created."""
        status = _as_status(status)
        if not spec.name.isidentifier():
            raise LibraryError(f"Tool name {spec.name!r} is not a valid identifier.")
        try:
            digest = spec.content_hash()
            gate_json = dumps(gate)
        except (TypeError, ValueError) as exc:
            raise LibraryError(f"Tool {spec.name!r} is not JSON-serialisable: {exc}") from exc
        with self._write() as conn:
            same = conn.execute(
                "SELECT version FROM versions WHERE name = ? AND hash = ?", (spec.name, digest)
            ).fetchone()
            if same is not None:
                return _fetch(conn, spec.name, int(same[0])), False
            number = _next_number(conn, spec.name, parent_version)
            now = utc_now()
            if not provenance.created_at:
                provenance = replace(provenance, created_at=now)
            audit_details = {"hash": digest, "status": status.value, "origin": provenance.origin}
            _audit(conn, actor, action, spec.name, number, None, {**audit_details, **(details or {})})
            if status is Status.ACTIVE:
                _retire_served(conn, spec.name, number, actor)
            row = (spec, digest, number, provenance, gate_json, parent_version, status, now)
            version_id = _insert_version(conn, *row)
            _insert_stats(conn, version_id)
            if status is Status.ACTIVE:
                search.index(conn, version_id, spec)
            conn.execute(
                "UPDATE tools SET latest_version = ?, active_version = "
                "CASE WHEN ? THEN ? ELSE active_version END WHERE name = ?",
                (number, status is Status.ACTIVE, number, spec.name),
            )
            return _fetch(conn, spec.name, number), True

    # --- reading ---------------------------------------------------------------------

    def _versions(self, sql: str, args: tuple[Any, ...] = ()) -> list[ToolVersion]:
        # Rows are decoded inside the guard, so a damaged record becomes CorruptLibraryError.
        with self._read() as conn:
            return [to_version(r) for r in conn.execute(sql, args).fetchall()]

    def get(self, name: str, version: int | None = None) -> ToolVersion:
        """A version; without ``version`` the served one, else the newest live, else newest."""
        if version is None:
            sql = f"{_SELECT} JOIN tools t ON t.name = v.name WHERE t.name = ? AND v.version = {_DISPLAY}"
            found = self._versions(sql, (name,))
        else:
            found = self._versions(f"{_SELECT} WHERE v.name = ? AND v.version = ?", (name, version))
        if not found:
            raise ToolNotFoundError(name, version)
        return found[0]

    def served(self, name: str) -> ToolVersion | None:
        found = self._versions(
            f"{_SELECT} JOIN tools t ON t.name = v.name AND v.version = t.active_version WHERE t.name = ?",
            (name,),
        )
        return found[0] if found else None

    def history(self, name: str) -> list[ToolVersion]:
        """Every version of a tool, oldest first."""
        found = self._versions(f"{_SELECT} WHERE v.name = ? ORDER BY v.version", (name,))
        if not found:
            raise ToolNotFoundError(name)
        return found

    def list_tools(self, *, include_retired: bool = False) -> list[ToolVersion]:
        """One entry per tool (its served version, else its newest), sorted by name."""
        where = "" if include_retired else "WHERE v.status != 'retired'"
        return self._versions(
            f"{_SELECT} JOIN tools t ON t.name = v.name AND v.version = {_DISPLAY} {where} ORDER BY t.name"
        )

    def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """The best ``limit`` served active tools for a task description, best first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise LibraryError(f"Search limit must be a whole number >= 1; got {limit!r}.")
        with self._read() as conn:
            return search.search(conn, query, limit)

    def audit_log(self, name: str | None = None, *, limit: int | None = None) -> list[AuditEntry]:
        """Audit entries, oldest first; with ``limit`` the most recent ``limit`` of them."""
        where, args = ("WHERE name = ?", [name]) if name is not None else ("", [])
        cap = "" if limit is None else f"LIMIT {max(int(limit), 0)}"
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT * FROM (SELECT * FROM audit {where} ORDER BY id DESC {cap}) ORDER BY id",
                args,
            ).fetchall()
            return [to_audit(r) for r in rows]

    def with_status(self, *statuses: Status) -> list[ToolVersion]:
        """Every version (of any tool) in one of ``statuses``, oldest first."""
        wanted = [_as_status(s).value for s in statuses]
        if not wanted:
            return []
        marks = ", ".join("?" * len(wanted))
        return self._versions(f"{_SELECT} WHERE v.status IN ({marks}) ORDER BY v.id", tuple(wanted))

    def find_by_code_hash(self, code_hash: str) -> list[ToolVersion]:
        """Served active versions whose code is exactly the code with this SHA-256."""
        return self._versions(
            f"{_SELECT} JOIN tools t ON t.name = v.name AND v.version = t.active_version "
            "WHERE v.code_hash = ? ORDER BY v.name",
            (code_hash,),
        )

    def __len__(self) -> int:
        with self._read() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM tools t WHERE EXISTS (SELECT 1 FROM versions v "
                "WHERE v.name = t.name AND v.status != 'retired')"
            ).fetchone()
        return int(row[0])

    def __contains__(self, name: object) -> bool:
        with self._read() as conn:
            row = conn.execute("SELECT 1 FROM tools WHERE name = ?", (name,)).fetchone()
        return row is not None

    # --- changing status, removing ---------------------------------------------------

    def set_status(
        self, name: str, version: int, status: Status, *, reason: str, actor: str, action: str = "status"
    ) -> ToolVersion:
        """Change one version's status (activating it retires the served version).

        ``action`` names the change in the audit trail (``approve``, ``reject``, ...).
        """
        status = _as_status(status)
        with self._write() as conn:
            row = _version_row(conn, name, version)
            _change_status(conn, row, status, reason, actor, action=action)
            return _fetch(conn, name, version)

    def retire(self, name: str, *, reason: str, actor: str) -> None:
        """Retire every live version of a tool (``tools rm``); history and audit stay."""
        with self._write() as conn:
            rows = conn.execute(f"{_SELECT} WHERE v.name = ? ORDER BY v.version", (name,)).fetchall()
            if not rows:
                raise ToolNotFoundError(name)
            for row in rows:
                _change_status(conn, row, Status.RETIRED, reason, actor, action="retire")

    def purge(self, name: str, *, actor: str, reason: str = "") -> None:
        """Delete a tool and all its versions for good; the audit trail keeps the record."""
        with self._write() as conn:
            rows = conn.execute(
                "SELECT id, version, hash FROM versions WHERE name = ? ORDER BY version", (name,)
            ).fetchall()
            if not rows:
                raise ToolNotFoundError(name)
            conn.execute("INSERT INTO purge_allow (name) VALUES (?)", (name,))
            for row in rows:
                search.unindex(conn, int(row["id"]))
                conn.execute("DELETE FROM stats WHERE version_id = ?", (row["id"],))
            conn.execute("DELETE FROM versions WHERE name = ?", (name,))
            conn.execute("DELETE FROM tools WHERE name = ?", (name,))
            conn.execute("DELETE FROM purge_allow WHERE name = ?", (name,))
            hashes = {str(r["version"]): r["hash"] for r in rows}
            _audit(conn, actor, "purge", name, None, reason or None, {"versions": hashes})

    # --- usage -----------------------------------------------------------------------

    def record_call(
        self, name: str, version: int, *, ok: bool, latency_ms: float, error: str | None = None
    ) -> UsageStats:
        """Count one call of a version; failures in a row are tracked for quarantine."""
        try:
            latency = max(float(latency_ms), 0.0)
        except (TypeError, ValueError) as exc:
            raise LibraryError(f"latency_ms must be a number; got {latency_ms!r}.") from exc
        with self._write() as conn:
            version_id = int(_version_row(conn, name, version)["id"])
            if ok:
                conn.execute(
                    "UPDATE stats SET calls = calls + 1, consecutive_failures = 0, "
                    "total_latency_ms = total_latency_ms + ?, last_called_at = ? "
                    "WHERE version_id = ?",
                    (latency, utc_now(), version_id),
                )
            else:
                conn.execute(
                    "UPDATE stats SET calls = calls + 1, failures = failures + 1, "
                    "consecutive_failures = consecutive_failures + 1, last_error = ?, "
                    "total_latency_ms = total_latency_ms + ?, last_called_at = ? "
                    "WHERE version_id = ?",
                    ((error or "unknown error")[:_MAX_ERROR_CHARS], latency, utc_now(), version_id),
                )
            row = conn.execute("SELECT * FROM stats WHERE version_id = ?", (version_id,)).fetchone()
            return to_stats(row)


# --- statements used inside write transactions -----------------------------------------


def _as_status(value: Status | str) -> Status:
    try:
        return Status(value)
    except ValueError as exc:
        allowed = ", ".join(s.value for s in Status)
        raise LibraryError(f"Unknown tool status {value!r}; use one of {allowed}.") from exc


def _fetch(conn: sqlite3.Connection, name: str, version: int) -> ToolVersion:
    return to_version(_version_row(conn, name, version))


def _version_row(conn: sqlite3.Connection, name: str, version: int) -> sqlite3.Row:
    row = conn.execute(f"{_SELECT} WHERE v.name = ? AND v.version = ?", (name, version)).fetchone()
    if row is None:
        raise ToolNotFoundError(name, version)
    return row  # type: ignore[no-any-return]


def _next_number(conn: sqlite3.Connection, name: str, parent_version: int | None) -> int:
    tool = conn.execute("SELECT latest_version FROM tools WHERE name = ?", (name,)).fetchone()
    if tool is None:
        conn.execute(
            "INSERT INTO tools (name, created_at, latest_version) VALUES (?, ?, 0)",
            (name, utc_now()),
        )
    number = (int(tool[0]) if tool is not None else 0) + 1
    if parent_version is not None and not 1 <= parent_version < number:
        raise LibraryError(f"Tool {name!r} has no version {parent_version} to derive from.")
    return number


def _insert_version(
    conn: sqlite3.Connection,
    spec: ToolSpec,
    digest: str,
    number: int,
    provenance: Provenance,
    gate_json: str,
    parent_version: int | None,
    status: Status,
    now: str,
) -> int:
    cursor = conn.execute(
        "INSERT INTO versions (name, version, hash, code_hash, description, parameters, code, test_args, "
        "requirements, keywords, gate, task, model, sources, prov_created_at, session_id, "
        "origin, parent_version, status, status_reason, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
        (
            spec.name, number, digest, spec.code_hash(), spec.description, dumps(spec.parameters), spec.code,
            dumps(spec.test_args), dumps(spec.canonical()["requirements"]),
            dumps(list(spec.keywords)), gate_json, provenance.task, provenance.model,
            dumps(list(provenance.sources)), provenance.created_at, provenance.session_id,
            provenance.origin, parent_version, status.value, now,
        ),
    )  # fmt: skip
    return int(cursor.lastrowid or 0)


def _insert_stats(conn: sqlite3.Connection, version_id: int) -> None:
    conn.execute("INSERT INTO stats (version_id) VALUES (?)", (version_id,))


def _retire_served(conn: sqlite3.Connection, name: str, successor: int, actor: str) -> None:
    current = conn.execute("SELECT active_version FROM tools WHERE name = ?", (name,)).fetchone()
    if current is None or current[0] is None or int(current[0]) == successor:
        return
    row = _version_row(conn, name, int(current[0]))
    _change_status(conn, row, Status.RETIRED, f"superseded by v{successor}", actor)


def _change_status(
    conn: sqlite3.Connection,
    row: sqlite3.Row,
    status: Status,
    reason: str,
    actor: str,
    *,
    action: str = "status",
) -> None:
    old = Status(row["status"])
    if old is status:
        return
    name, number, version_id = row["name"], int(row["version"]), int(row["id"])
    if status is Status.ACTIVE:
        _retire_served(conn, name, number, actor)
    conn.execute(
        "UPDATE versions SET status = ?, status_reason = ? WHERE id = ?",
        (status.value, reason or None, version_id),
    )
    if status is Status.ACTIVE:
        search.index(conn, version_id, to_version(row).spec)
        conn.execute("UPDATE tools SET active_version = ? WHERE name = ?", (number, name))
    elif old is Status.ACTIVE:
        search.unindex(conn, version_id)
        conn.execute("UPDATE tools SET active_version = NULL WHERE name = ?", (name,))
    _audit(conn, actor, action, name, number, reason or None, {"from": old.value, "to": status.value})


def _audit(
    conn: sqlite3.Connection,
    actor: str,
    action: str,
    name: str | None,
    version: int | None,
    reason: str | None,
    details: dict[str, Any],
) -> None:
    conn.execute(
        "INSERT INTO audit (at, actor, action, name, version, reason, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (utc_now(), actor, action, name, version, reason, dumps(details)),
    )
