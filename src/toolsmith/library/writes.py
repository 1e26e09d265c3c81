"""Statements used inside the library's write transactions, shared by every backend.

Each helper takes the transaction's :class:`~toolsmith.library.backend.Tx` and writes
through it, so the rules (gap-free numbers, one served version, an audit row for every
change, the search index following the served version) are written once.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from toolsmith.errors import LibraryError, ToolNotFoundError
from toolsmith.library.backend import Tx
from toolsmith.library.models import Provenance, Status, ToolSpec, ToolVersion
from toolsmith.library.rows import VERSION_COLUMNS, dumps, status_of, to_version

_MAX_ERROR_CHARS = 2000
SELECT = f"SELECT {VERSION_COLUMNS} FROM versions v LEFT JOIN stats s ON s.version_id = v.id"


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def as_status(value: Status | str) -> Status:
    try:
        return Status(value)
    except ValueError as exc:
        allowed = ", ".join(s.value for s in Status)
        raise LibraryError(f"Unknown tool status {value!r}; use one of {allowed}.") from exc


def fetch(tx: Tx, name: str, version: int) -> ToolVersion:
    return to_version(version_row(tx, name, version))


def version_row(tx: Tx, name: str, version: int) -> Any:
    row = tx.execute(f"{SELECT} WHERE v.name = ? AND v.version = ?", (name, version)).fetchone()
    if row is None:
        raise ToolNotFoundError(name, version)
    return row


def next_number(tx: Tx, name: str, parent_version: int | None) -> int:
    tool = tx.execute("SELECT latest_version FROM tools WHERE name = ?", (name,)).fetchone()
    if tool is None:
        tx.execute(
            "INSERT INTO tools (name, created_at, latest_version) VALUES (?, ?, 0)",
            (name, utc_now()),
        )
    number = (int(tool[0]) if tool is not None else 0) + 1
    if parent_version is not None and not 1 <= parent_version < number:
        raise LibraryError(f"Tool {name!r} has no version {parent_version} to derive from.")
    return number


def insert_version(
    tx: Tx,
    spec: ToolSpec,
    digest: str,
    number: int,
    provenance: Provenance,
    gate_json: str,
    parent_version: int | None,
    status: Status,
    now: str,
) -> int:
    row = tx.execute(
        "INSERT INTO versions (name, version, hash, code_hash, description, parameters, code, test_args, "
        "tests, requirements, keywords, gate, task, model, sources, prov_created_at, session_id, "
        "origin, parent_version, status, status_reason, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?) RETURNING id",
        (
            spec.name, number, digest, spec.code_hash(), spec.description, dumps(spec.parameters), spec.code,
            dumps(spec.test_args), dumps(list(spec.tests)), dumps(spec.canonical()["requirements"]),
            dumps(list(spec.keywords)), gate_json, provenance.task, provenance.model,
            dumps(list(provenance.sources)), provenance.created_at, provenance.session_id,
            provenance.origin, parent_version, status.value, now,
        ),
    ).fetchone()  # fmt: skip
    return int(row[0])


def insert_stats(tx: Tx, version_id: int) -> None:
    tx.execute("INSERT INTO stats (version_id) VALUES (?)", (version_id,))


def retire_served(tx: Tx, name: str, successor: int, actor: str) -> None:
    current = tx.execute("SELECT active_version FROM tools WHERE name = ?", (name,)).fetchone()
    if current is None or current[0] is None or int(current[0]) == successor:
        return
    row = version_row(tx, name, int(current[0]))
    change_status(tx, row, Status.RETIRED, f"superseded by v{successor}", actor)


def change_status(
    tx: Tx,
    row: Any,
    status: Status,
    reason: str,
    actor: str,
    *,
    action: str = "status",
    details: dict[str, Any] | None = None,
) -> None:
    old = status_of(row)
    if old is status:
        return
    name, number, version_id = row["name"], int(row["version"]), int(row["id"])
    noted: dict[str, Any] = {**(details or {}), "from": old.value, "to": status.value}
    if status is Status.ACTIVE:
        retire_served(tx, name, number, actor)
    tx.execute(
        "UPDATE versions SET status = ?, status_reason = ? WHERE id = ?",
        (status.value, reason or None, version_id),
    )
    if status is Status.ACTIVE:
        tx.index(version_id, to_version(row).spec)
        tx.execute("UPDATE tools SET active_version = ? WHERE name = ?", (number, name))
        noted.update(_restart_failure_count(tx, version_id))
    elif old is Status.ACTIVE:
        tx.unindex(version_id)
        tx.execute("UPDATE tools SET active_version = NULL WHERE name = ?", (name,))
    audit(tx, actor, action, name, number, reason or None, noted)


def _restart_failure_count(tx: Tx, version_id: int) -> dict[str, int]:
    """A version made active (re-admitted, rolled back) starts its failures in a row from zero.

    Otherwise a re-admitted tool would carry the count that quarantined it, and its next
    failure alone would quarantine it again. The totals (calls, failures) stay. The audit
    row says how many were cleared.
    """
    found = tx.execute("SELECT consecutive_failures FROM stats WHERE version_id = ?", (version_id,)).fetchone()
    cleared = int(found[0] or 0) if found is not None else 0
    if not cleared:
        return {}
    tx.execute("UPDATE stats SET consecutive_failures = 0 WHERE version_id = ?", (version_id,))
    return {"cleared_consecutive_failures": cleared}


def audit(
    tx: Tx,
    actor: str,
    action: str,
    name: str | None,
    version: int | None,
    reason: str | None,
    details: dict[str, Any],
) -> None:
    tx.execute(
        "INSERT INTO audit (at, actor, action, name, version, reason, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (utc_now(), actor, action, name, version, reason, dumps(details)),
    )
