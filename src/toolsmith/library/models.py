"""The records the tool library stores: specs, versions, provenance and usage.

A :class:`ToolSpec` is what a model (or an import) proposes. Once the gate has passed
it, the library stores it as an immutable :class:`ToolVersion` whose identity is the
SHA-256 of the spec's canonical JSON, so the same content always gets the same hash on
every machine.
"""

from __future__ import annotations

import hashlib
import json
import keyword
import re
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

# A version's pins are the packages subsystem's record; the library re-exports it.
from toolsmith.packages.requirement import Requirement as Requirement

# What model APIs accept as a function name; a tool name is also a Python identifier.
TOOL_NAME_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,64}")
NAME_ECHO_LIMIT = 100  # error messages show at most this much of a bad name


def tool_name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a tool, or None when it can."""
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        return (
            f"{shown_name(name)} is not a tool name: use 1 to 64 ASCII letters, digits and "
            f"underscores, in snake_case such as get_exchange_rate"
        )
    if not name.isidentifier() or keyword.iskeyword(name):
        return f"{shown_name(name)} is not a valid Python identifier; use snake_case such as get_exchange_rate"
    return None


def shown_name(name: object) -> str:
    """``name`` quoted for a message, cut to about :data:`NAME_ECHO_LIMIT` characters."""
    text = repr(name)
    return text if len(text) <= NAME_ECHO_LIMIT else text[: NAME_ECHO_LIMIT - 4] + "...'"


class Status(str, Enum):
    """Life cycle of one tool version."""

    ACTIVE = "active"  # served by search and callable
    PENDING = "pending"  # waiting for a person's review
    QUARANTINED = "quarantined"  # failed too often or flagged; hidden from search
    RETIRED = "retired"  # removed, rejected or superseded by a newer version

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ToolSpec:
    """The content of a tool: everything that goes into its hash."""

    name: str
    description: str
    parameters: dict[str, Any]
    code: str
    test_args: dict[str, Any] = field(default_factory=dict)
    requirements: tuple[Requirement, ...] = ()
    keywords: tuple[str, ...] = ()
    # further test cases beyond test_args: {"args": {...}, "expect"?: ..., "contains"?: {...}}
    tests: tuple[dict[str, Any], ...] = ()

    def canonical(self) -> dict[str, Any]:
        data = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "code": self.code,
            "test_args": self.test_args,
            "requirements": sorted((r.to_dict() for r in self.requirements), key=lambda r: r["name"]),
            "keywords": list(self.keywords),
        }
        if self.tests:  # absent when empty, so versions stored before tests keep their hash
            data["tests"] = list(self.tests)
        return data

    def content_hash(self) -> str:
        blob = json.dumps(self.canonical(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def code_hash(self) -> str:
        return hashlib.sha256(self.code.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Provenance:
    """Where a tool version came from."""

    task: str = ""
    model: str = ""
    sources: tuple[str, ...] = ()
    created_at: str = ""
    session_id: str = ""
    origin: str = "agent"  # agent | import | offline-demo | ...

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["sources"] = list(self.sources)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Provenance:
        return cls(
            task=str(data.get("task", "")),
            model=str(data.get("model", "")),
            sources=tuple(str(s) for s in data.get("sources", ())),
            created_at=str(data.get("created_at", "")),
            session_id=str(data.get("session_id", "")),
            origin=str(data.get("origin", "agent")),
        )


@dataclass(frozen=True)
class UsageStats:
    calls: int = 0
    failures: int = 0
    consecutive_failures: int = 0
    last_error: str | None = None
    mean_latency_ms: float | None = None
    last_called_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ToolVersion:
    """One stored, immutable version of a tool, plus its mutable status and stats."""

    spec: ToolSpec
    version: int
    hash: str
    status: Status
    provenance: Provenance
    gate: dict[str, Any]
    parent_version: int | None = None
    status_reason: str | None = None
    stats: UsageStats = field(default_factory=UsageStats)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def ref(self) -> str:
        return f"{self.spec.name}@{self.version}"

    def openai_schema(self) -> dict[str, Any]:
        """The tool as a function definition for an OpenAI-compatible model."""
        return {
            "type": "function",
            "function": {
                "name": self.spec.name,
                "description": self.spec.description,
                "parameters": self.spec.parameters,
            },
        }

    def to_dict(self, *, include_code: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.spec.name,
            "version": self.version,
            "hash": self.hash,
            "status": self.status.value,
            "status_reason": self.status_reason,
            "parent_version": self.parent_version,
            "description": self.spec.description,
            "parameters": self.spec.parameters,
            "test_args": self.spec.test_args,
            "tests": list(self.spec.tests),
            "requirements": [r.to_dict() for r in self.spec.requirements],
            "keywords": list(self.spec.keywords),
            "provenance": self.provenance.to_dict(),
            "gate": self.gate,
            "stats": self.stats.to_dict(),
        }
        if include_code:
            data["code"] = self.spec.code
        return data


@dataclass(frozen=True)
class SearchHit:
    """A search result: the served version of a tool and its BM25 relevance (higher is better).

    ``match`` is the share of the query the tool covers (the relevance floor's measure);
    ``ToolLibrary.search`` always sets it.
    """

    tool: ToolVersion
    score: float
    match: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.tool.name,
            "version": self.tool.version,
            "score": round(self.score, 4),
            **({"match": self.match} if self.match is not None else {}),
            "description": self.tool.spec.description,
            "parameters": self.tool.spec.parameters,
        }


@dataclass(frozen=True)
class AuditEntry:
    """One row of the append-only audit trail: who changed what, when and why."""

    id: int
    at: str
    actor: str
    action: str  # add | import | status | approve | reject | quarantine | retire | purge
    name: str | None
    version: int | None
    reason: str | None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EvidenceEntry:
    """What one approval of a version was given: its tests as they ran, and where (append-only).

    ``hash`` is the hash of the version the evidence was gathered for; the database
    refuses evidence whose hash is not its version's, and :attr:`bound` checks it again on
    the way out. ``details`` holds the cases (args, outcome), the sandbox backend and its
    version, and toolsmith's version.
    """

    id: int
    name: str
    version: int
    hash: str
    version_hash: str
    at: str
    actor: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def bound(self) -> bool:
        return self.hash == self.version_hash

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "bound": self.bound}
