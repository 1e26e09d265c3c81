"""Turning database rows into library records (and records into column values).

Every query that returns versions selects :data:`VERSION_COLUMNS` from ``versions v``
left-joined with ``stats s``, so a single statement (one consistent snapshot) yields
complete :class:`ToolVersion` objects.
"""

from __future__ import annotations

import json
from typing import Any

from toolsmith.library.models import (
    AuditEntry,
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


def to_spec(row: Any) -> ToolSpec:
    return ToolSpec(
        name=row["name"],
        description=row["description"],
        parameters=json.loads(row["parameters"]),
        code=row["code"],
        test_args=json.loads(row["test_args"]),
        requirements=tuple(Requirement.from_dict(r) for r in json.loads(row["requirements"])),
        keywords=tuple(json.loads(row["keywords"])),
        tests=tuple(json.loads(row["tests"] or "[]")),
    )


def to_stats(row: Any) -> UsageStats:
    calls = int(row["calls"] or 0)
    total = float(row["total_latency_ms"] or 0.0)
    return UsageStats(
        calls=calls,
        failures=int(row["failures"] or 0),
        consecutive_failures=int(row["consecutive_failures"] or 0),
        last_error=row["last_error"],
        mean_latency_ms=round(total / calls, 3) if calls else None,
        last_called_at=row["last_called_at"],
    )


def to_version(row: Any) -> ToolVersion:
    provenance = Provenance(
        task=row["task"],
        model=row["model"],
        sources=tuple(json.loads(row["sources"])),
        created_at=row["prov_created_at"],
        session_id=row["session_id"],
        origin=row["origin"],
    )
    return ToolVersion(
        spec=to_spec(row),
        version=int(row["version"]),
        hash=row["hash"],
        status=Status(row["status"]),
        provenance=provenance,
        gate=json.loads(row["gate"]),
        parent_version=row["parent_version"],
        status_reason=row["status_reason"],
        stats=to_stats(row),
    )


def to_audit(row: Any) -> AuditEntry:
    return AuditEntry(
        id=int(row["id"]),
        at=row["at"],
        actor=row["actor"],
        action=row["action"],
        name=row["name"],
        version=row["version"],
        reason=row["reason"],
        details=json.loads(row["details"]),
    )
