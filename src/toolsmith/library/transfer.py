"""Copying a whole library to another location (``toolsmith library migrate --to URL``).

Everything is copied (every version in every status, usage stats, the audit trail, the
evidence approvals were given)
in one transaction of the target, which must be empty: the copy lands whole or not at
all. Each version's hash is recomputed from its content before anything is written and
again from the target afterwards, so a damaged source is refused and a bad copy is
reported, never silently kept. Row ids are kept, so audit ids (and their order) match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsmith.errors import CorruptLibraryError, DamagedRecordError, LibraryError, LibraryNotEmptyError
from toolsmith.library.rows import VERSION_COLUMNS, to_version
from toolsmith.library.store import ToolLibrary

_TOOL_COLUMNS = ("name", "created_at", "latest_version", "active_version")
_VERSION_COLUMNS = (
    "id", "name", "version", "hash", "code_hash", "description", "parameters", "code", "test_args", "tests",
    "requirements",
    "keywords", "gate", "task", "model", "sources", "prov_created_at", "session_id", "origin",
    "parent_version", "status", "status_reason", "created_at",
)  # fmt: skip
_STAT_COLUMNS = ("calls", "failures", "consecutive_failures", "last_error", "total_latency_ms", "last_called_at")
_AUDIT_COLUMNS = ("id", "at", "actor", "action", "name", "version", "reason", "details")
_EVIDENCE_COLUMNS = ("id", "version_id", "hash", "at", "actor", "details")


@dataclass(frozen=True)
class CopyReport:
    source: str
    target: str
    tools: int
    versions: int
    audit_entries: int
    verified_hashes: int

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _insert(columns: tuple[str, ...], table: str) -> str:
    marks = ", ".join("?" * len(columns))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"


def _read_all(source: ToolLibrary) -> dict[str, list[Any]]:
    with source._snapshot() as tx:
        return {
            "tools": tx.execute(f"SELECT {', '.join(_TOOL_COLUMNS)} FROM tools ORDER BY name").fetchall(),
            "versions": tx.execute(
                f"SELECT {VERSION_COLUMNS}, v.code_hash, v.created_at FROM versions v "
                "LEFT JOIN stats s ON s.version_id = v.id ORDER BY v.id"
            ).fetchall(),
            "audit": tx.execute(f"SELECT {', '.join(_AUDIT_COLUMNS)} FROM audit ORDER BY id").fetchall(),
            "evidence": tx.execute(f"SELECT {', '.join(_EVIDENCE_COLUMNS)} FROM evidence ORDER BY id").fetchall(),
        }


def _check_hashes(where: str, versions: list[Any]) -> dict[tuple[str, int], str]:
    hashes: dict[tuple[str, int], str] = {}
    for row in versions:
        try:
            tool = to_version(row)
        except DamagedRecordError as exc:
            raise CorruptLibraryError(where, str(exc)) from exc
        if tool.spec.content_hash() != tool.hash:
            raise CorruptLibraryError(where, f"{tool.ref}: its content does not match its hash {tool.hash[:12]}")
        hashes[(tool.name, tool.version)] = tool.hash
    return hashes


def _stats(row: Any) -> tuple[Any, ...]:
    counters = tuple(row[c] or 0 for c in ("calls", "failures", "consecutive_failures"))
    return (row["id"], *counters, row["last_error"], row["total_latency_ms"] or 0.0, row["last_called_at"])


def copy_library(source: ToolLibrary, target: ToolLibrary) -> CopyReport:
    """Copy ``source`` into the empty ``target``; verify every hash on both sides."""
    rows = _read_all(source)
    expected = _check_hashes(source.display, rows["versions"])
    with target._write() as tx:
        if (
            tx.execute("SELECT COUNT(*) FROM tools").fetchone()[0]
            or tx.execute("SELECT COUNT(*) FROM audit").fetchone()[0]
        ):
            raise LibraryNotEmptyError(target.display)
        tx.executemany(_insert(_TOOL_COLUMNS, "tools"), [tuple(r[c] for c in _TOOL_COLUMNS) for r in rows["tools"]])
        versions = rows["versions"]
        tx.executemany(_insert(_VERSION_COLUMNS, "versions"), [tuple(r[c] for c in _VERSION_COLUMNS) for r in versions])
        tx.executemany(_insert(("version_id", *_STAT_COLUMNS), "stats"), [_stats(r) for r in versions])
        tx.executemany(_insert(_AUDIT_COLUMNS, "audit"), [tuple(r[c] for c in _AUDIT_COLUMNS) for r in rows["audit"]])
        evidence = [tuple(r[c] for c in _EVIDENCE_COLUMNS) for r in rows["evidence"]]
        tx.executemany(_insert(_EVIDENCE_COLUMNS, "evidence"), evidence)
        tx.ids_copied()
    target.rebuild_search_index()
    copied = _read_all(target)
    same_counts = all(len(copied[k]) == len(rows[k]) for k in ("audit", "evidence"))
    if _check_hashes(target.display, copied["versions"]) != expected or not same_counts:
        raise LibraryError(f"The copy in {target.display} does not match {source.display}; do not use it.")
    return CopyReport(
        source=source.display, target=target.display, tools=len(rows["tools"]),
        versions=len(expected), audit_entries=len(rows["audit"]), verified_hashes=len(expected),
    )  # fmt: skip
