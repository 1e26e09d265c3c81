"""The persistent tool library: versioned, content-hashed, audited tools.

The library lives in one SQLite file (the default) or in a PostgreSQL database a team
shares (``library.url``); :mod:`toolsmith.library.backend` is the seam between the rules
below and the database.

Rules the store enforces (the schema's triggers enforce the same ones underneath):

* versions never change; re-creating a tool adds version N+1, identical content is a
  no-op returning the existing version;
* at most one version per tool is active, and that one is *served* (found by search,
  returned by :meth:`ToolLibrary.get`); activating a version retires the previous one;
* every state change writes an audit row in the same transaction, and every logical
  operation is one write transaction that excludes every other writer, so a crash
  leaves the old or the new state and two processes (or machines) never lose each
  other's updates.
"""

from __future__ import annotations

import getpass
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from toolsmith.calls import JSONObject
from toolsmith.errors import ConfigError, CorruptLibraryError, DamagedRecordError, LibraryError, ToolNotFoundError
from toolsmith.library import location as locations
from toolsmith.library import relevance
from toolsmith.library.backend import Backend, Tx
from toolsmith.library.location import LibraryLocation
from toolsmith.library.models import (
    AuditEntry,
    EvidenceEntry,
    Provenance,
    SearchHit,
    Status,
    ToolSpec,
    ToolVersion,
    UsageStats,
    tool_name_problem,
)
from toolsmith.library.rows import EVIDENCE_SELECT, dumps, status_of, to_audit, to_evidence, to_stats, to_version
from toolsmith.library.writes import (
    SELECT,
    as_status,
    audit,
    change_status,
    fetch,
    insert_stats,
    insert_version,
    next_number,
    retire_served,
    utc_now,
    version_row,
)

if TYPE_CHECKING:
    from toolsmith.config import Settings

__all__ = ["ToolLibrary", "user_actor", "utc_now"]

# The version a tool is shown as: the served one, else the newest live one, else the newest.
_DISPLAY = (
    "COALESCE(t.active_version, (SELECT MAX(x.version) FROM versions x "
    "WHERE x.name = t.name AND x.status != 'retired'), t.latest_version)"
)
_MAX_ERROR_CHARS = 2000
_MAX_REASON_CHARS = 500


def user_actor() -> str:
    """The audit actor for a person at the command line."""
    try:
        return f"user:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name (e.g. a container without /etc/passwd entry)
        return "user:unknown"


def open_backend(where: LibraryLocation) -> Backend:
    """Connect to the library at ``where`` (creating or migrating its schema)."""
    if where.is_postgres:
        try:  # psycopg is an optional extra, imported only for a PostgreSQL library
            from toolsmith.library.postgres.backend import PostgresBackend
        except ImportError as exc:
            raise ConfigError(
                f"The library at {where.display} needs psycopg: pip install 'toolsmith[postgres]'.",
                setting="library.url",
            ) from exc
        return PostgresBackend(where)
    from toolsmith.library.sqlite_backend import SqliteBackend

    return SqliteBackend(where)


class ToolLibrary:
    """The tool library. Safe to share between threads, processes and (on PostgreSQL) machines.

    ``target`` is a path (an SQLite file), a library URL, or a parsed location.
    """

    def __init__(self, target: Path | str | LibraryLocation) -> None:
        if isinstance(target, LibraryLocation):
            self.location = target
        elif isinstance(target, str) and "://" in target:
            self.location = locations.parse(target, Path("library.db"))
        else:
            self.location = locations.sqlite_at(Path(target))
        self._lock = threading.RLock()
        self._depth = 0
        self._backend = open_backend(self.location)

    @property
    def path(self) -> Path:
        """The SQLite file (for messages about a file); a PostgreSQL library has none."""
        if self.location.path is None:
            raise LibraryError(f"The library at {self.location.display} is not a file.")
        return self.location.path

    @property
    def display(self) -> str:
        """Where the library lives, safe to show (no password)."""
        return self.location.display

    @classmethod
    def open(cls, settings: Settings) -> ToolLibrary:
        """The library ``settings`` name (``library.url``, else the home's SQLite file)."""
        where = locations.parse(settings.library_url, settings.db_path)
        if not where.is_postgres:
            # A home that cannot be made (a read-only mount) is the backend's to explain.
            with suppress(OSError):
                settings.home.mkdir(parents=True, exist_ok=True)
        return cls(where)

    def close(self) -> None:
        with self._lock:
            self._backend.close()

    def __enter__(self) -> ToolLibrary:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ToolLibrary({self.location.display!r})"

    # --- transactions ----------------------------------------------------------------

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except self._backend.bugs:
            raise
        except self._backend.errors as exc:
            raise self._backend.translate(exc) from exc
        except DamagedRecordError as exc:
            # Only rows.py raises it, for a stored value that does not decode. Anything
            # else (a ValueError from a bug, say) is not evidence of damage and goes on as it is.
            raise CorruptLibraryError(self.display, str(exc)) from exc

    @contextmanager
    def _read(self) -> Iterator[Tx]:
        with self._lock, self._errors(), self._backend.reading() as tx:
            yield tx

    @contextmanager
    def _snapshot(self) -> Iterator[Tx]:
        """Several reads that see one consistent state (a copy or a backup reads through it)."""
        with self._lock, self._errors(), self._backend.snapshot() as tx:
            yield tx

    @contextmanager
    def _write(self) -> Iterator[Tx]:
        with self._lock, self._errors():
            if self._depth:  # inside batch(): the outer transaction commits or rolls back
                with self._backend.reading() as tx:
                    yield tx
                return
            self._depth += 1
            try:
                with self._backend.writing() as tx:
                    yield tx
            finally:
                self._depth -= 1

    @property
    def announces_changes(self) -> bool:
        """True when :meth:`wait_for_change` wakes on changes (else callers should poll)."""
        return self._backend.announces_changes

    def wait_for_change(self, timeout_s: float) -> bool:
        """Wait until another process changes the library's state, at most ``timeout_s``.

        True: a change notice arrived (PostgreSQL pushes them), or listening just began,
        so look now. False: the time ran out; look for yourself (SQLite has no notices,
        so callers poll).
        """
        with self._errors():
            return self._backend.wait_for_change(timeout_s)

    def rebuild_search_index(self) -> int:
        """Re-create the search index from the served versions; returns how many it holds."""
        with self._write() as tx:
            return self._backend.rebuild_index(tx)

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
        gate: JSONObject,
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
        gate: JSONObject,
        status: Status = Status.ACTIVE,
        parent_version: int | None = None,
        actor: str = "agent",
        action: str = "add",
        details: JSONObject | None = None,
    ) -> tuple[ToolVersion, bool]:
        """Like :meth:`add`, also saying whether a new version was created."""
        status = as_status(status)
        problem = tool_name_problem(spec.name)
        if problem is not None:
            raise LibraryError(f"Refused to store the tool: {problem}.")
        try:
            digest = spec.content_hash()
            gate_json = dumps(gate)
        except (TypeError, ValueError) as exc:
            raise LibraryError(f"Tool {spec.name!r} is not JSON-serialisable: {exc}") from exc
        with self._write() as tx:
            same = tx.execute(
                "SELECT version FROM versions WHERE name = ? AND hash = ?", (spec.name, digest)
            ).fetchone()
            if same is not None:
                return fetch(tx, spec.name, int(same[0])), False
            number = next_number(tx, spec.name, parent_version)
            now = utc_now()
            if not provenance.created_at:
                provenance = replace(provenance, created_at=now)
            audit_details = {"hash": digest, "status": status.value, "origin": provenance.origin}
            audit(tx, actor, action, spec.name, number, None, {**audit_details, **(details or {})})
            if status is Status.ACTIVE:
                retire_served(tx, spec.name, number, actor)
            row = (spec, digest, number, provenance, gate_json, parent_version, status, now)
            version_id = insert_version(tx, *row)
            insert_stats(tx, version_id)
            if status is Status.ACTIVE:
                tx.index(version_id, spec)
            tx.execute(
                "UPDATE tools SET latest_version = ?, active_version = "
                "CASE WHEN ? THEN ? ELSE active_version END WHERE name = ?",
                (number, status is Status.ACTIVE, number, spec.name),
            )
            return fetch(tx, spec.name, number), True

    # --- reading ---------------------------------------------------------------------

    def _versions(self, sql: str, args: tuple[Any, ...] = ()) -> list[ToolVersion]:
        # Rows are decoded inside the guard, so a damaged record becomes CorruptLibraryError.
        with self._read() as tx:
            return [to_version(r) for r in tx.execute(sql, args).fetchall()]

    def get(self, name: str, version: int | None = None) -> ToolVersion:
        """A version; without ``version`` the served one, else the newest live, else newest."""
        if version is None:
            sql = f"{SELECT} JOIN tools t ON t.name = v.name WHERE t.name = ? AND v.version = {_DISPLAY}"
            found = self._versions(sql, (name,))
        else:
            found = self._versions(f"{SELECT} WHERE v.name = ? AND v.version = ?", (name, version))
        if not found:
            raise ToolNotFoundError(name, version)
        return found[0]

    def served(self, name: str) -> ToolVersion | None:
        found = self._versions(
            f"{SELECT} JOIN tools t ON t.name = v.name AND v.version = t.active_version WHERE t.name = ?",
            (name,),
        )
        return found[0] if found else None

    def history(self, name: str) -> list[ToolVersion]:
        """Every version of a tool, oldest first."""
        found = self._versions(f"{SELECT} WHERE v.name = ? ORDER BY v.version", (name,))
        if not found:
            raise ToolNotFoundError(name)
        return found

    def list_tools(self, *, include_retired: bool = False) -> list[ToolVersion]:
        """One entry per tool (its served version, else its newest), sorted by name."""
        where = "" if include_retired else "WHERE v.status != 'retired'"
        return self._versions(
            f"{SELECT} JOIN tools t ON t.name = v.name AND v.version = {_DISPLAY} {where} ORDER BY t.name"
        )

    def search(self, query: str, *, limit: int = 5, floor: float = relevance.DEFAULT_FLOOR) -> list[SearchHit]:
        """The best ``limit`` served active tools for a task description, best first.

        Hits that cover less than ``floor`` of the query are left out (0 keeps every
        BM25 hit), so a task nothing in the library fits gets [].
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise LibraryError(f"Search limit must be a whole number >= 1; got {limit!r}.")
        with self._read() as tx:
            found = self._backend.search(tx, query, relevance.candidates(limit, floor))
        return relevance.above_floor(query, found, floor, limit)

    def audit_log(self, name: str | None = None, *, limit: int | None = None) -> list[AuditEntry]:
        """Audit entries, oldest first; with ``limit`` the most recent ``limit`` of them."""
        where, args = ("WHERE name = ?", [name]) if name is not None else ("", [])
        cap = "" if limit is None else f"LIMIT {max(int(limit), 0)}"
        with self._read() as tx:
            rows = tx.execute(
                f"SELECT * FROM (SELECT * FROM audit {where} ORDER BY id DESC {cap}) AS recent ORDER BY id",
                args,
            ).fetchall()
            return [to_audit(r) for r in rows]

    def evidence(self, name: str, version: int) -> list[EvidenceEntry]:
        """The evidence each approval of ``name@version`` was given, oldest first."""
        with self._read() as tx:
            rows = tx.execute(f"{EVIDENCE_SELECT} WHERE v.name = ? AND v.version = ? ORDER BY e.id", (name, version))
            return [to_evidence(r) for r in rows.fetchall()]

    def add_evidence(self, name: str, version: int, *, hash: str, actor: str, details: JSONObject) -> EvidenceEntry:
        """Record what an approval of ``name@version`` was given; ``hash`` must be that version's."""
        with self._write() as tx:
            version_id = int(version_row(tx, name, version)["id"])
            row = tx.execute(
                "INSERT INTO evidence (version_id, hash, at, actor, details) VALUES (?, ?, ?, ?, ?) RETURNING id",
                (version_id, hash, utc_now(), actor, dumps(details)),
            ).fetchone()
            found = tx.execute(f"{EVIDENCE_SELECT} WHERE e.id = ?", (int(row[0]),)).fetchone()
            return to_evidence(found)

    def with_status(self, *statuses: Status) -> list[ToolVersion]:
        """Every version (of any tool) in one of ``statuses``, oldest first."""
        wanted = [as_status(s).value for s in statuses]
        if not wanted:
            return []
        marks = ", ".join("?" * len(wanted))
        return self._versions(f"{SELECT} WHERE v.status IN ({marks}) ORDER BY v.id", tuple(wanted))

    def find_by_code_hash(self, code_hash: str) -> list[ToolVersion]:
        """Served active versions whose code is exactly the code with this SHA-256."""
        return self._versions(
            f"{SELECT} JOIN tools t ON t.name = v.name AND v.version = t.active_version "
            "WHERE v.code_hash = ? ORDER BY v.name",
            (code_hash,),
        )

    def __len__(self) -> int:
        with self._read() as tx:
            row = tx.execute(
                "SELECT COUNT(*) FROM tools t WHERE EXISTS (SELECT 1 FROM versions v "
                "WHERE v.name = t.name AND v.status != 'retired')"
            ).fetchone()
        return int(row[0])

    def __contains__(self, name: object) -> bool:
        with self._read() as tx:
            row = tx.execute("SELECT 1 FROM tools WHERE name = ?", (name,)).fetchone()
        return row is not None

    # --- changing status, removing ---------------------------------------------------

    def set_status(
        self, name: str, version: int, status: Status, *, reason: str, actor: str, action: str = "status"
    ) -> ToolVersion:
        """Change one version's status (activating it retires the served version).

        ``action`` names the change in the audit trail (``approve``, ``reject``, ...).
        """
        status = as_status(status)
        with self._write() as tx:
            row = version_row(tx, name, version)
            change_status(tx, row, status, reason, actor, action=action)
            return fetch(tx, name, version)

    def serve_again(
        self, name: str, version: int, *, reason: str, actor: str, details: JSONObject
    ) -> ToolVersion | None:
        """Serve a retired version again (a rollback), audited as ``rollback`` with ``details``.

        Only while the tool serves nothing and the version is still retired, checked in the
        same transaction as the change, so a person's decision meanwhile is never undone.
        Returns the version now served, or None when the state had moved on.
        """
        with self._write() as tx:
            current = tx.execute("SELECT active_version FROM tools WHERE name = ?", (name,)).fetchone()
            if current is None or current[0] is not None:
                return None
            row = version_row(tx, name, version)
            if status_of(row) is not Status.RETIRED:
                return None
            change_status(tx, row, Status.ACTIVE, reason, actor, action="rollback", details=details)
            return fetch(tx, name, version)

    def note(
        self, name: str, version: int | None, *, action: str, reason: str, actor: str, details: JSONObject
    ) -> None:
        """Append an audit entry that changes no state (a rollback that was considered and declined)."""
        with self._write() as tx:
            audit(tx, actor, action, name, version, reason, details)

    def retire(self, name: str, *, reason: str, actor: str) -> None:
        """Retire every live version of a tool (``tools rm``); history and audit stay."""
        with self._write() as tx:
            rows = tx.execute(f"{SELECT} WHERE v.name = ? ORDER BY v.version", (name,)).fetchall()
            if not rows:
                raise ToolNotFoundError(name)
            for row in rows:
                change_status(tx, row, Status.RETIRED, reason, actor, action="retire")

    def purge(self, name: str, *, actor: str, reason: str = "") -> None:
        """Delete a tool and all its versions for good; the audit trail keeps the record."""
        with self._write() as tx:
            rows = tx.execute(
                "SELECT id, version, hash FROM versions WHERE name = ? ORDER BY version", (name,)
            ).fetchall()
            if not rows:
                raise ToolNotFoundError(name)
            tx.execute("INSERT INTO purge_allow (name) VALUES (?)", (name,))
            for row in rows:
                tx.unindex(int(row["id"]))
                tx.execute("DELETE FROM stats WHERE version_id = ?", (row["id"],))
                tx.execute("DELETE FROM evidence WHERE version_id = ?", (row["id"],))
            tx.execute("DELETE FROM versions WHERE name = ?", (name,))
            tx.execute("DELETE FROM tools WHERE name = ?", (name,))
            tx.execute("DELETE FROM purge_allow WHERE name = ?", (name,))
            hashes = {str(r["version"]): r["hash"] for r in rows}
            audit(tx, actor, "purge", name, None, reason or None, {"versions": hashes})

    # --- usage -----------------------------------------------------------------------

    def record_call(
        self, name: str, version: int, *, ok: bool, latency_ms: float, error: str | None = None
    ) -> UsageStats:
        """Count one call of a version; failures in a row are tracked for quarantine."""
        try:
            latency = max(float(latency_ms), 0.0)
        except (TypeError, ValueError) as exc:
            raise LibraryError(f"latency_ms must be a number; got {latency_ms!r}.") from exc
        with self._write() as tx:
            version_id = int(version_row(tx, name, version)["id"])
            if ok:
                tx.execute(
                    "UPDATE stats SET calls = calls + 1, consecutive_failures = 0, "
                    "total_latency_ms = total_latency_ms + ?, last_called_at = ? "
                    "WHERE version_id = ?",
                    (latency, utc_now(), version_id),
                )
            else:
                tx.execute(
                    "UPDATE stats SET calls = calls + 1, failures = failures + 1, "
                    "consecutive_failures = consecutive_failures + 1, last_error = ?, "
                    "total_latency_ms = total_latency_ms + ?, last_called_at = ? "
                    "WHERE version_id = ?",
                    ((error or "unknown error")[:_MAX_ERROR_CHARS], latency, utc_now(), version_id),
                )
            row = tx.execute("SELECT * FROM stats WHERE version_id = ?", (version_id,)).fetchone()
            return to_stats(row)

    def record_undelivered(self, name: str, version: int, *, error: str, streak_before: int = 0) -> UsageStats:
        """Turn a call already counted as a success into a failure: its result never reached the caller.

        The success reset the count of failures in a row; ``streak_before`` is that count as
        the call found it, so the failure it becomes continues the streak rather than
        starting one (results that keep failing to arrive must reach the quarantine policy).
        """
        with self._write() as tx:
            version_id = int(version_row(tx, name, version)["id"])
            row = tx.execute("SELECT consecutive_failures FROM stats WHERE version_id = ?", (version_id,)).fetchone()
            streak = max(int(row[0]), max(int(streak_before), 0)) + 1
            tx.execute(
                "UPDATE stats SET failures = failures + 1, consecutive_failures = ?, last_error = ? "
                "WHERE version_id = ?",
                (streak, error[:_MAX_ERROR_CHARS], version_id),
            )
            row = tx.execute("SELECT * FROM stats WHERE version_id = ?", (version_id,)).fetchone()
            return to_stats(row)

    def record_call_and_quarantine(
        self,
        name: str,
        version: int,
        *,
        ok: bool,
        latency_ms: float,
        error: str | None = None,
        quarantine_after: int | None,
        actor: str,
        reason: str | None = None,
    ) -> tuple[UsageStats, bool]:
        """Count one call and, in the same transaction, quarantine the version if this
        failure makes ``quarantine_after`` in a row (``None``: never) and it is still active.

        Returns the new stats and whether this call quarantined the version. ``reason``
        replaces the audit reason ("N consecutive failures; last: <error>").
        """
        with self.batch():
            stats = self.record_call(name, version, ok=ok, latency_ms=latency_ms, error=error)
            if ok or quarantine_after is None or stats.consecutive_failures < quarantine_after:
                return stats, False
            return stats, self.quarantine_failing(name, version, stats=stats, error=error, actor=actor, reason=reason)

    def quarantine_failing(
        self, name: str, version: int, *, stats: UsageStats, error: str | None, actor: str, reason: str | None = None
    ) -> bool:
        """Quarantine a version for its failures in a row, if it is still active (whether it was)."""
        with self._write() as tx:
            row = version_row(tx, name, version)
            if status_of(row) is not Status.ACTIVE:
                return False  # pending, retired or already quarantined: nothing served to hide
            why = reason or f"{stats.consecutive_failures} consecutive failures; last: {error or 'unknown error'}"
            if len(why) > _MAX_REASON_CHARS:
                why = why[: _MAX_REASON_CHARS - 1] + "…"
            change_status(tx, row, Status.QUARANTINED, why, actor, action="quarantine")
        return True

    def keep_after_caller_failures(self, name: str, version: int, *, failures: int, actor: str, reason: str) -> None:
        """A version failed ``failures`` times in a row, yet its own tests pass: the failures
        were its callers' inputs. Its count starts again, and the audit trail says why it stayed."""
        with self._write() as tx:
            version_id = int(version_row(tx, name, version)["id"])
            tx.execute("UPDATE stats SET consecutive_failures = 0 WHERE version_id = ?", (version_id,))
            audit(tx, actor, "kept", name, version, reason[:_MAX_REASON_CHARS], {"consecutive_failures": failures})
