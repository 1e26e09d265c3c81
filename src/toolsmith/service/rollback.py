"""Rollback: serving a tool's parent again when the served version breaks.

When a call quarantines the served version of a tool, every caller of that tool is left
with nothing until a person looks. If the version it was derived from (its parent) still
works, it can serve meanwhile. :func:`after_quarantine` is the hook the one door runs
after a quarantine (:func:`~toolsmith.service.toolcall.call_stored_tool`'s
``on_quarantine``); it serves the parent again only when all of these hold:

* the ``rollback`` setting is on (:func:`hook` returns no hook otherwise);
* the quarantined version records a parent, and that parent was *superseded*: retired
  when a newer version was approved, never rejected, removed or quarantined by anyone;
* nothing else is served meanwhile (a person's decision is never undone);
* the quarantined version fails its own tests now, run again in the sandbox, so a
  quarantine caused by callers' bad inputs serves nothing old;
* the parent passes *its* own tests now, in the same sandbox.

A rollback is one audited state change (action ``rollback``: what was quarantined, why,
and each version's test result); a rollback considered and declined because of a test
result is audited too (``rollback_declined``), so the trail says why the tool serves
nothing. :func:`last_rollback` finds the rollback behind the version served now, for
``tools show`` and the web UI.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolsmith.errors import ToolNotFoundError
from toolsmith.library import AuditEntry, Status, ToolLibrary, ToolVersion
from toolsmith.sandbox import ToolRunner
from toolsmith.service.testrun import TestRun, run_own_tests
from toolsmith.service.toolcall import QuarantineHook, StoredCall

if TYPE_CHECKING:
    from toolsmith.config import Settings

ROLLBACK, DECLINED = "rollback", "rollback_declined"
# retire_served writes this action when an approval supersedes the served version.
_SUPERSEDED_ACTION = "status"


@dataclass(frozen=True)
class RollbackInfo:
    """A rollback as the audit trail recorded it."""

    name: str
    to_version: int
    from_version: int | None
    at: str
    actor: str
    reason: str

    @classmethod
    def from_audit(cls, entry: AuditEntry) -> RollbackInfo:
        replaced = entry.details.get("replaces")
        return cls(
            name=str(entry.name),
            to_version=int(entry.version or 0),
            from_version=replaced if isinstance(replaced, int) else None,
            at=entry.at,
            actor=entry.actor,
            reason=entry.reason or "",
        )

    def line(self) -> str:
        """One line for ``tools show`` and the web UI."""
        since = self.at[:19].replace("T", " ")
        broke = f"v{self.from_version} was quarantined" if self.from_version is not None else "rolled back"
        return f"v{self.to_version} is served again since {since} UTC: {broke} ({self.reason})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "to_version": self.to_version,
            "from_version": self.from_version,
            "at": self.at,
            "actor": self.actor,
            "reason": self.reason,
        }


def hook(settings: Settings, *, library: ToolLibrary, runner: ToolRunner, actor: str) -> QuarantineHook | None:
    """The ``on_quarantine`` hook for a caller, or None when the ``rollback`` setting is off."""
    if not settings.rollback:
        return None

    def roll_back(call: StoredCall) -> StoredCall:
        return after_quarantine(call, library=library, runner=runner, actor=actor)

    return roll_back


def after_quarantine(call: StoredCall, *, library: ToolLibrary, runner: ToolRunner, actor: str) -> StoredCall:
    """Serve the quarantined version's parent again if the rules above allow; say so on the call."""
    served = consider(call.tool, library=library, runner=runner, actor=actor)
    return replace(call, rolled_back_to=served.version) if served is not None else call


def consider(broken: ToolVersion, *, library: ToolLibrary, runner: ToolRunner, actor: str) -> ToolVersion | None:
    """Roll ``broken`` (just quarantined) back to its parent when allowed; the parent now served, or None."""
    parent = _candidate(library, broken)
    if parent is None:
        return None
    own = run_own_tests(library.get(broken.name, broken.version), library=library, runner=runner, actor=actor)
    if not own.failed:
        why = "its own tests pass now" if own.passed else "its own tests could not run here"
        _decline(library, broken, parent, own, None, why, actor)
        return None
    theirs = run_own_tests(parent, library=library, runner=runner, actor=actor)
    if not theirs.passed:
        why = f"v{parent.version} fails its own tests too" if theirs.conclusive else "the parent's tests could not run"
        _decline(library, broken, parent, own, theirs, why, actor)
        return None
    reason = f"v{broken.version} quarantined failing its own tests ({_first_error(own)}); v{parent.version} passes its"
    details = {"replaces": broken.version, "broken": _result(own), "parent": _result(theirs)}
    return library.serve_again(broken.name, parent.version, reason=reason, actor=actor, details=details)


def _candidate(library: ToolLibrary, broken: ToolVersion) -> ToolVersion | None:
    """The parent that may serve again: superseded, not otherwise retired, and nothing served now."""
    if broken.parent_version is None or library.served(broken.name) is not None:
        return None
    try:
        parent = library.get(broken.name, broken.parent_version)
    except ToolNotFoundError:
        return None
    if parent.status is not Status.RETIRED or not _superseded(library, parent):
        return None
    return parent


def _superseded(library: ToolLibrary, version: ToolVersion) -> bool:
    """Whether ``version`` was last retired by the approval of a newer version (not by a person)."""
    changes = [e for e in library.audit_log(version.name) if e.version == version.version and "to" in e.details]
    if not changes:
        return False
    last = changes[-1]
    return last.action == _SUPERSEDED_ACTION and last.details.get("to") == Status.RETIRED.value


def _decline(
    library: ToolLibrary,
    broken: ToolVersion,
    parent: ToolVersion,
    own: TestRun,
    theirs: TestRun | None,
    why: str,
    actor: str,
) -> None:
    details: dict[str, Any] = {"parent": parent.version, "broken": _result(own)}
    if theirs is not None:
        details["parent_tests"] = _result(theirs)
    reason = f"v{parent.version} not served again: {why}"
    library.note(broken.name, broken.version, action=DECLINED, reason=reason, actor=actor, details=details)


def _result(run: TestRun) -> dict[str, Any]:
    return {"passed": run.passed, "summary": run.summary(), "cases": [c.to_dict() for c in run.cases]}


def _first_error(run: TestRun) -> str:
    bad = run.first_failure()
    text = f"{bad.label}: {bad.error}" if bad is not None else "no case failed"
    return text if len(text) <= 160 else text[:159] + "…"


def last_rollback(library: ToolLibrary, name: str) -> RollbackInfo | None:
    """The rollback that made the served version served, if that is how it came to serve."""
    served = library.served(name)
    if served is None:
        return None
    for entry in reversed(library.audit_log(name)):
        if entry.version != served.version or "to" not in entry.details:
            continue
        return RollbackInfo.from_audit(entry) if entry.action == ROLLBACK else None
    return None
