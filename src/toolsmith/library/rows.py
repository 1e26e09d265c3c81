"""Turning database rows into library records (and records into column values).

Every query that returns versions selects :data:`VERSION_COLUMNS` from ``versions v``
left-joined with ``stats s``, so a single statement (one consistent snapshot) yields
complete :class:`ToolVersion` objects.

This is the one place where stored values are decoded, and the only place that may call
a row damaged: a value that does not decode (JSON that does not parse, a JSON value or a
column of the wrong kind, a requirement without its name, an unknown status) raises
:class:`~toolsmith.errors.DamagedRecordError`, which the library reports as a corrupt
library. Only the decoding of a stored value is guarded, so a bug anywhere else (in this
module too) stays the bug it is.
"""

from __future__ import annotations

import json
from typing import Any

from toolsmith.errors import DamagedRecordError
from toolsmith.library.models import (
    AuditEntry,
    EvidenceEntry,
    Provenance,
    Requirement,
    Status,
    ToolSpec,
    ToolVersion,
    UsageStats,
)

VERSION_COLUMNS = (
    "v.id, v.name, v.version, v.hash, v.description, v.parameters, v.code, v.test_args, v.tests, "
    "v.requirements, v.keywords, v.gate, v.task, v.model, v.sources, v.prov_created_at, "
    "v.session_id, v.origin, v.parent_version, v.status, v.status_reason, "
    "s.calls, s.failures, s.consecutive_failures, s.last_error, s.total_latency_ms, "
    "s.last_called_at"
)


def dumps(value: Any) -> str:
    """Canonical JSON for storage: stable key order, real Unicode."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _label(row: Any) -> str:
    return f"{row['name']}@{row['version']}"


def _json(row: Any, column: str, label: str) -> Any:
    raw = row[column]
    if not isinstance(raw, str):
        raise DamagedRecordError(f"{label}: {column} holds {type(raw).__name__}, not JSON text")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise DamagedRecordError(f"{label}: {column} is not JSON: {exc}") from exc


def _json_object(row: Any, column: str, label: str) -> dict[str, Any]:
    value = _json(row, column, label)
    if not isinstance(value, dict):
        raise DamagedRecordError(f"{label}: {column} holds a JSON {type(value).__name__}, not an object")
    return value


def _json_list(row: Any, column: str, label: str) -> list[Any]:
    value = _json(row, column, label)
    if not isinstance(value, list):
        raise DamagedRecordError(f"{label}: {column} holds a JSON {type(value).__name__}, not a list")
    return value


def _text(row: Any, column: str, label: str) -> str:
    value = row[column]
    if not isinstance(value, str):
        raise DamagedRecordError(f"{label}: {column} holds {type(value).__name__}, not text")
    return value


def _optional_text(row: Any, column: str, label: str) -> str | None:
    return None if row[column] is None else _text(row, column, label)


def _integer(row: Any, column: str, label: str) -> int:
    value = row[column]
    if isinstance(value, bool) or not isinstance(value, int):
        raise DamagedRecordError(f"{label}: {column} holds {type(value).__name__}, not a whole number")
    return value


def _optional_integer(row: Any, column: str, label: str) -> int | None:
    return None if row[column] is None else _integer(row, column, label)


def _count(row: Any, column: str, label: str) -> int:
    """A stats counter; NULL (a version without a stats row) counts as 0."""
    return 0 if row[column] is None else _integer(row, column, label)


def _requirement(entry: Any, label: str) -> Requirement:
    if not isinstance(entry, dict):
        raise DamagedRecordError(f"{label}: a requirement is a JSON {type(entry).__name__}, not an object")
    name, version, sha256 = entry.get("name"), entry.get("version"), entry.get("sha256")
    if not isinstance(name, str) or not isinstance(version, str) or not isinstance(sha256, (str, type(None))):
        raise DamagedRecordError(f"{label}: the requirement {entry!r} lacks a text name, version or sha256")
    return Requirement(name=name, version=version, sha256=sha256)


def status_of(row: Any) -> Status:
    """The stored status of a version row."""
    value = row["status"]
    try:
        return Status(value)
    except ValueError as exc:
        raise DamagedRecordError(f"{_label(row)}: unknown status {value!r}") from exc


def to_spec(row: Any) -> ToolSpec:
    label = _label(row)
    tests = [] if row["tests"] is None else _json_list(row, "tests", label)
    return ToolSpec(
        name=_text(row, "name", label),
        description=_text(row, "description", label),
        parameters=_json_object(row, "parameters", label),
        code=_text(row, "code", label),
        test_args=_json_object(row, "test_args", label),
        requirements=tuple(_requirement(r, label) for r in _json_list(row, "requirements", label)),
        keywords=tuple(_json_list(row, "keywords", label)),
        tests=tuple(tests),
    )


def to_stats(row: Any, label: str = "usage stats") -> UsageStats:
    calls = _count(row, "calls", label)
    total = row["total_latency_ms"] or 0.0
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        raise DamagedRecordError(f"{label}: total_latency_ms holds {type(total).__name__}, not a number")
    return UsageStats(
        calls=calls,
        failures=_count(row, "failures", label),
        consecutive_failures=_count(row, "consecutive_failures", label),
        last_error=_optional_text(row, "last_error", label),
        mean_latency_ms=round(float(total) / calls, 3) if calls else None,
        last_called_at=_optional_text(row, "last_called_at", label),
    )


def to_version(row: Any) -> ToolVersion:
    label = _label(row)
    provenance = Provenance(
        task=_text(row, "task", label),
        model=_text(row, "model", label),
        sources=tuple(_json_list(row, "sources", label)),
        created_at=_text(row, "prov_created_at", label),
        session_id=_text(row, "session_id", label),
        origin=_text(row, "origin", label),
    )
    return ToolVersion(
        spec=to_spec(row),
        version=_integer(row, "version", label),
        hash=_text(row, "hash", label),
        status=status_of(row),
        provenance=provenance,
        gate=_json_object(row, "gate", label),
        parent_version=_optional_integer(row, "parent_version", label),
        status_reason=_optional_text(row, "status_reason", label),
        stats=to_stats(row, label),
    )


def to_audit(row: Any) -> AuditEntry:
    label = f"audit entry {row['id']}"
    return AuditEntry(
        id=_integer(row, "id", label),
        at=_text(row, "at", label),
        actor=_text(row, "actor", label),
        action=_text(row, "action", label),
        name=_optional_text(row, "name", label),
        version=_optional_integer(row, "version", label),
        reason=_optional_text(row, "reason", label),
        details=_json_object(row, "details", label),
    )


EVIDENCE_SELECT = (
    "SELECT e.id, v.name, v.version, e.hash, v.hash AS version_hash, e.at, e.actor, e.details "
    "FROM evidence e JOIN versions v ON v.id = e.version_id"
)


def to_evidence(row: Any) -> EvidenceEntry:
    label = f"evidence {row['id']}"
    return EvidenceEntry(
        id=_integer(row, "id", label),
        name=_text(row, "name", label),
        version=_integer(row, "version", label),
        hash=_text(row, "hash", label),
        version_hash=_text(row, "version_hash", label),
        at=_text(row, "at", label),
        actor=_text(row, "actor", label),
        details=_json_object(row, "details", label),
    )
