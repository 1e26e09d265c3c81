"""Health of stored tools: every call's outcome is recorded, and repeat failures quarantine.

Both the agent's toolbox and the MCP server call library tools through
:func:`call_stored_tool`, so a tool behaves, and is judged, the same wherever it runs:
in the sandbox, with its pinned requirements, with its latency and outcome recorded,
and quarantined (hidden from search, with an audited reason) once it has failed
``quarantine_after`` times in a row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from toolsmith.config import Settings
from toolsmith.library import Status, ToolLibrary, ToolVersion, UsageStats
from toolsmith.sandbox import Sandbox, ToolCallResult

MACHINE_FAILURES = frozenset({"sandbox", "install"})


@dataclass(frozen=True)
class StoredCall:
    """One call of a library tool and what it did to the tool's health."""

    tool: ToolVersion
    outcome: ToolCallResult
    stats: UsageStats
    latency_ms: float
    quarantined: bool = False


def call_stored_tool(
    tool: ToolVersion,
    args: dict[str, Any],
    *,
    library: ToolLibrary,
    sandbox: Sandbox,
    settings: Settings,
    actor: str,
) -> StoredCall:
    """Run a stored tool in the sandbox and record the outcome as its health."""
    started = time.monotonic()
    outcome = sandbox.call_tool(tool.spec.code, args, requirements=tool.spec.requirements)
    latency_ms = (time.monotonic() - started) * 1000
    if outcome.error_type in MACHINE_FAILURES:
        # The machine could not run the tool at all (no sandbox, packages not installable):
        # that says nothing about the tool, so its health record is left alone.
        return StoredCall(tool=tool, outcome=outcome, stats=tool.stats, latency_ms=latency_ms)
    stats = library.record_call(tool.name, tool.version, ok=outcome.ok, latency_ms=latency_ms, error=outcome.error)
    quarantined = False
    if not outcome.ok and tool.status == Status.ACTIVE and stats.consecutive_failures >= settings.quarantine_after:
        reason = f"{stats.consecutive_failures} consecutive failures; last: {outcome.error}"
        library.set_status(tool.name, tool.version, Status.QUARANTINED, reason=reason, actor=actor)
        quarantined = True
    return StoredCall(tool=tool, outcome=outcome, stats=stats, latency_ms=latency_ms, quarantined=quarantined)


def source_line(tool: ToolVersion) -> str:
    """Where a stored tool's answer comes from, for the model to cite."""
    parts = [f"library tool {tool.ref}"]
    packages = ", ".join(r.pin for r in tool.spec.requirements[:5])
    if packages:
        parts.append(f"packages {packages}")
    sources = ", ".join(tool.provenance.sources[:3])
    if sources:
        parts.append(f"docs {sources}")
    return "; ".join(parts)
