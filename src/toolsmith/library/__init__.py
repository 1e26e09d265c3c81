"""The persistent tool library: storage, search, bundles, and the records they hold."""

from toolsmith.library.bundle import ImportOutcome, ImportReport, export_tools, import_tools
from toolsmith.library.models import (
    AuditEntry,
    EvidenceEntry,
    Provenance,
    Requirement,
    SearchHit,
    Status,
    ToolSpec,
    ToolVersion,
    UsageStats,
)
from toolsmith.library.store import ToolLibrary, user_actor, utc_now

__all__ = [
    "AuditEntry",
    "EvidenceEntry",
    "ImportOutcome",
    "ImportReport",
    "Provenance",
    "Requirement",
    "SearchHit",
    "Status",
    "ToolLibrary",
    "ToolSpec",
    "ToolVersion",
    "UsageStats",
    "export_tools",
    "import_tools",
    "user_actor",
    "utc_now",
]
