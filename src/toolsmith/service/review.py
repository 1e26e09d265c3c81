"""What a person does to the library: review decisions, health checks, rebuilding packages.

The ``toolsmith tools`` commands stay thin; the rules live here:

* **decisions** (:func:`approve`, :func:`reject`, :func:`quarantine`): each checks the
  version's state and changes it in one library transaction, so two reviewers racing on
  the same version cannot both succeed; the library writes the audit row (who, when,
  what, why) in that same transaction;
* **what a reviewer sees** (:func:`previous_version`, :func:`review_diff`,
  :func:`gate_checks`): the version a pending one is compared with, and the diff of its
  code and pinned requirements against it;
* **health checks** (:func:`health_check`): re-running a tool's stored ``test_args``;
* **sync** (:func:`sync_pins`): rebuilding the package environment from recorded pins.

Which states a decision accepts: *approve* a pending version (the default target), or,
named explicitly, a quarantined or retired one (re-admitting or rolling back, both
audited); *reject* only a pending version; *quarantine* only an active one.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolsmith.errors import PackageError, ReviewError, ToolNotFoundError
from toolsmith.isolation.result import Blame, FailureKind
from toolsmith.library import Requirement, Status, ToolLibrary, ToolVersion
from toolsmith.library import testcases as tooltests
from toolsmith.packages.env import SyncReport
from toolsmith.packages.index import normalize_name
from toolsmith.sandbox import ToolRunner
from toolsmith.service.evidence import Evidence, refusal
from toolsmith.service.toolcall import QuarantineHook, StoredCall, call_stored_tool

APPROVE, REJECT, QUARANTINE = "approve", "reject", "quarantine"
DEFAULT_REASONS = {
    APPROVE: "approved in review",
    REJECT: "rejected in review",
    QUARANTINE: "quarantined by a person",
}
_TARGET = {APPROVE: Status.ACTIVE, REJECT: Status.RETIRED, QUARANTINE: Status.QUARANTINED}
_ACCEPTS = {
    APPROVE: (Status.PENDING, Status.QUARANTINED, Status.RETIRED),
    REJECT: (Status.PENDING,),
    QUARANTINE: (Status.ACTIVE,),
}


# --- decisions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """One review decision: which version, from which state to which, and why."""

    action: str
    tool: ToolVersion  # the version after the change
    before: Status
    reason: str
    actor: str
    superseded: int | None = None  # the served version an approval retired

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True,
            "action": self.action,
            "name": self.tool.name,
            "version": self.tool.version,
            "from": self.before.value,
            "to": self.tool.status.value,
            "reason": self.reason,
            "actor": self.actor,
            "superseded": self.superseded,
        }


def approve(
    library: ToolLibrary,
    name: str,
    version: int | None = None,
    *,
    reason: str | None = None,
    actor: str,
    evidence: Evidence | None = None,
) -> Decision:
    """Make a version active (default: the tool's newest pending one, else its only quarantined
    one); the served one retires.

    ``evidence`` (see :mod:`toolsmith.service.evidence`) is recorded with the approval in
    the same transaction; evidence of failing tests, or of another version, refuses it.
    """
    return _decide(library, APPROVE, name, version, reason, actor, evidence)


def reject(
    library: ToolLibrary, name: str, version: int | None = None, *, reason: str | None = None, actor: str
) -> Decision:
    """Retire a pending version (default: the tool's newest pending one) with a reason."""
    return _decide(library, REJECT, name, version, reason, actor)


def quarantine(
    library: ToolLibrary, name: str, version: int | None = None, *, reason: str | None = None, actor: str
) -> Decision:
    """Hide an active version from search (default: the served one) with a reason."""
    return _decide(library, QUARANTINE, name, version, reason, actor)


def decide(
    library: ToolLibrary,
    action: str,
    name: str,
    version: int | None = None,
    *,
    reason: str | None = None,
    actor: str,
    evidence: Evidence | None = None,
) -> Decision:
    """:func:`approve`, :func:`reject` or :func:`quarantine`, chosen by ``action``."""
    if action not in _TARGET:
        raise ReviewError(f"Unknown review action {action!r}; use one of {', '.join(_TARGET)}.", name=name)
    return _decide(library, action, name, version, reason, actor, evidence)


def target(library: ToolLibrary, action: str, name: str, version: int | None = None) -> ToolVersion:
    """The version a decision would act on, refused now if its state does not allow ``action``.

    For gathering evidence before an approval (the decision checks the state again)."""
    tool = _target(library, action, name, version)
    if tool.status not in _ACCEPTS[action]:
        raise ReviewError(_wrong_state(action, tool), name=name, version=tool.version)
    return tool


def _decide(
    library: ToolLibrary,
    action: str,
    name: str,
    version: int | None,
    reason: str | None,
    actor: str,
    evidence: Evidence | None = None,
) -> Decision:
    why = " ".join((reason or "").split()) or DEFAULT_REASONS[action]
    # One transaction: the state checked is the state changed, even with other processes.
    with library.batch():
        tool = _target(library, action, name, version)
        if tool.status not in _ACCEPTS[action]:
            raise ReviewError(_wrong_state(action, tool), name=name, version=tool.version)
        if evidence is not None and action == APPROVE:
            _record_evidence(library, tool, evidence, actor)
        served = library.served(name) if action == APPROVE else None
        after = library.set_status(name, tool.version, _TARGET[action], reason=why, actor=actor, action=action)
    superseded = served.version if served is not None and served.version != tool.version else None
    return Decision(action=action, tool=after, before=tool.status, reason=why, actor=actor, superseded=superseded)


def _record_evidence(library: ToolLibrary, tool: ToolVersion, evidence: Evidence, actor: str) -> None:
    if evidence.tool.hash != tool.hash:
        raise ReviewError(
            f"The evidence is for {evidence.tool.ref}, not {tool.ref}; gather it again.", name=tool.name,
            version=tool.version,
        )  # fmt: skip
    problem = refusal(evidence)
    if problem:
        raise ReviewError(f"Cannot approve {tool.ref}: {problem}.", name=tool.name, version=tool.version)
    library.add_evidence(tool.name, tool.version, hash=tool.hash, actor=actor, details=evidence.details())


def _target(library: ToolLibrary, action: str, name: str, version: int | None) -> ToolVersion:
    if version is not None:
        return library.get(name, version)
    if action == QUARANTINE:
        served = library.served(name)
        if served is None:
            shown = library.get(name)  # raises ToolNotFoundError for an unknown tool
            raise ReviewError(
                f"{name} has no active version to quarantine ({shown.ref} is {shown.status.value}).", name=name
            )
        return served
    history = library.history(name)
    pending = [v for v in history if v.status is Status.PENDING]
    if pending:
        return pending[-1]
    # Re-admitting a quarantined tool by its name: unambiguous when one version is quarantined.
    quarantined = [v for v in history if v.status is Status.QUARANTINED] if action == APPROVE else []
    if len(quarantined) == 1:
        return quarantined[0]
    shown = library.get(name)
    if quarantined:
        refs = ", ".join(v.ref for v in quarantined)
        raise ReviewError(
            f"{name} has no version pending review and {len(quarantined)} quarantined ({refs}); "
            f"name one as {name}@N to {action} it.", name=name,
        )  # fmt: skip
    raise ReviewError(
        f"{name} has no version pending review ({shown.ref} is {shown.status.value}); "
        f"name a version as {name}@N to {action} it.", name=name,
    )  # fmt: skip


def _wrong_state(action: str, tool: ToolVersion) -> str:
    state = tool.status.value + (f" ({tool.status_reason})" if tool.status_reason else "")
    hints = {
        (APPROVE, Status.ACTIVE): "it is already active and served",
        (REJECT, Status.ACTIVE): "only a pending version can be rejected; use `toolsmith tools quarantine` "
        "or `toolsmith tools rm` for an active one",
        (REJECT, Status.QUARANTINED): "only a pending version can be rejected; it is already hidden from search",
        (REJECT, Status.RETIRED): "only a pending version can be rejected; it is already retired",
        (QUARANTINE, Status.PENDING): "only an active version can be quarantined; reject a pending one instead",
        (QUARANTINE, Status.QUARANTINED): "it is already quarantined",
        (QUARANTINE, Status.RETIRED): "only an active version can be quarantined; it is retired",
    }
    return f"Cannot {action} {tool.ref}: it is {state}; {hints.get((action, tool.status), 'wrong state')}."


def pending_versions(library: ToolLibrary) -> list[ToolVersion]:
    """Every version waiting for review, oldest first."""
    return library.with_status(Status.PENDING)


# --- what a reviewer sees --------------------------------------------------------------


def previous_version(library: ToolLibrary, tool: ToolVersion) -> ToolVersion | None:
    """The version ``tool`` is compared with: its recorded parent, else the one before it."""
    try:
        history = library.history(tool.name)
    except ToolNotFoundError:
        return None
    by_number = {v.version: v for v in history}
    if tool.parent_version is not None and tool.parent_version in by_number:
        return by_number[tool.parent_version]
    earlier = [v for v in history if v.version < tool.version]
    return earlier[-1] if earlier else None


def requirement_lines(tool: ToolVersion) -> list[str]:
    """``name==version sha256:<12 hex>`` per pinned requirement (``no hash`` when unknown)."""
    return [
        f"{r.pin} {('sha256:' + r.sha256[:12]) if r.sha256 else '(no hash recorded)'}"
        for r in sorted(tool.spec.requirements, key=lambda r: normalize_name(r.name))
    ]


def review_diff(previous: ToolVersion | None, tool: ToolVersion) -> str:
    """Unified diff of the code and the requirement pins; empty when nothing differs."""
    if previous is None:
        return ""
    parts = []
    for label, old, new in (
        ("tool.py", previous.spec.code, tool.spec.code),
        ("requirements.txt", _pins_text(previous), _pins_text(tool)),
    ):
        lines = difflib.unified_diff(
            _lines(old), _lines(new),
            fromfile=f"{previous.ref}/{label}", tofile=f"{tool.ref}/{label}",
        )  # fmt: skip
        parts.append("".join(lines))
    return "".join(parts)


def changed_fields(previous: ToolVersion | None, tool: ToolVersion) -> list[str]:
    """Which parts of the spec differ from ``previous`` (code, description, parameters, ...)."""
    if previous is None:
        return []
    old, new = previous.spec.canonical(), tool.spec.canonical()
    return [
        key
        for key in ("code", "description", "parameters", "test_args", "requirements", "keywords")
        if old[key] != new[key]
    ]


def _pins_text(tool: ToolVersion) -> str:
    return "".join(line + "\n" for line in requirement_lines(tool))


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


def gate_checks(gate: dict[str, Any]) -> list[dict[str, Any]]:
    """The gate's checks as ``{"check", "ok", "message"}`` (``ok`` None when not recorded)."""
    checks = gate.get("checks")
    if not isinstance(checks, list):
        return []
    found: list[dict[str, Any]] = []
    for check in checks:
        if isinstance(check, dict):
            ok = check.get("ok")
            found.append(
                {
                    "check": str(check.get("check", "?")),
                    "ok": ok if isinstance(ok, bool) else None,
                    "message": str(check.get("message") or ""),
                }
            )
        else:
            found.append({"check": str(check), "ok": None, "message": ""})
    return found


# --- health checks ---------------------------------------------------------------------


@dataclass(frozen=True)
class HealthCheck:
    """One re-run of a tool's stored ``test_args``."""

    tool: ToolVersion
    ok: bool
    latency_ms: float
    error: str | None = None
    error_type: FailureKind | None = None
    value: Any = None
    quarantined: bool = False
    note: str | None = None
    rolled_back_to: int | None = None  # the parent served again after this check's quarantine

    def to_dict(self) -> dict[str, Any]:
        return {
            "rolled_back_to": self.rolled_back_to,
            "note": self.note,
            "name": self.tool.name,
            "version": self.tool.version,
            "status": self.tool.status.value,
            "ok": self.ok,
            "error": self.error,
            "error_type": self.error_type,
            "latency_ms": round(self.latency_ms, 1),
            "value": self.value,
            "quarantined": self.quarantined,
        }


def health_check(
    tool: ToolVersion,
    *,
    library: ToolLibrary,
    runner: ToolRunner,
    actor: str,
    quarantine_failing: bool = False,
    on_quarantine: QuarantineHook | None = None,
) -> HealthCheck:
    """Re-run ``run(**test_args)`` in the sandbox, record it as a call, optionally quarantine.

    Passing means what the gate required when the tool was stored: ``run`` returned JSON
    and the value is not empty. The call goes through :mod:`toolsmith.service.toolcall` like any
    other, so it is recorded (``tools show`` shows the last error), but a check never
    quarantines on its own count of failures in a row: whether it changes a tool's state
    is the ``quarantine_failing`` flag's call, and then only for the tool's own failure.
    A failure that is the machine's (no sandbox, packages not installable here) is not
    recorded and never quarantines: it says nothing about the tool. ``on_quarantine`` runs
    after a quarantine (the rollback hook).
    """
    call = call_stored_tool(
        tool,
        dict(tool.spec.test_args),
        library=library,
        runner=runner,
        actor=actor,
        quarantine_after=1 if quarantine_failing else None,
        require_data=True,
        reason="tools test failed",
        on_quarantine=on_quarantine,
    )
    outcome = call.run
    if outcome.ok and tool.spec.tests:
        failed = _failed_case(
            tool, library=library, runner=runner, actor=actor, quarantine_failing=quarantine_failing,
            on_quarantine=on_quarantine,
        )  # fmt: skip
        if failed is not None:
            case_call, error, kind = failed
            outcome = replace(outcome, ok=False, error=error, error_type=kind)
            call = replace(
                call,
                quarantined=call.quarantined or case_call.quarantined,
                rolled_back_to=call.rolled_back_to or case_call.rolled_back_to,
            )
    note = None
    if outcome.error_type is FailureKind.INSTALL:
        note = "its packages could not be installed here; run `toolsmith tools sync` (not quarantined)"
    elif outcome.blame is Blame.MACHINE:
        note = "the sandbox could not run it on this machine; see `toolsmith doctor` (not quarantined)"
    return HealthCheck(
        tool=library.get(tool.name, tool.version),
        ok=outcome.ok,
        latency_ms=call.latency_ms,
        error=outcome.error,
        error_type=outcome.error_type,
        value=outcome.value if outcome.ok else None,
        quarantined=call.quarantined,
        note=note,
        rolled_back_to=call.rolled_back_to,
    )


def _failed_case(
    tool: ToolVersion,
    *,
    library: ToolLibrary,
    runner: ToolRunner,
    actor: str,
    quarantine_failing: bool,
    on_quarantine: QuarantineHook | None,
) -> tuple[StoredCall, str, FailureKind] | None:
    """Run the tool's further test cases (each recorded as a call): the first failure, or None.

    A case that runs but gets another value than it expects is not a failed call, so it
    never quarantines; a case whose call fails counts like the first run's would.
    """
    for number, case in enumerate(tool.spec.tests, 1):
        call = call_stored_tool(
            tool,
            dict(case["args"]),
            library=library,
            runner=runner,
            actor=actor,
            quarantine_after=1 if quarantine_failing else None,
            reason="tools test failed",
            on_quarantine=on_quarantine,
        )
        if not call.run.ok:
            kind = call.run.error_type or FailureKind.EXCEPTION
            return call, f"test case {number} failed: {call.run.error}", kind
        wrong = tooltests.problem(case, call.run.value)
        if wrong:
            return call, f"test case {number}: {wrong}", FailureKind.WRONG_VALUE
    return None


# --- rebuilding the package environment ------------------------------------------------


@dataclass(frozen=True)
class SyncFailure:
    tools: tuple[str, ...]
    pins: tuple[str, ...]
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {"tools": list(self.tools), "pins": list(self.pins), "error": self.error}


@dataclass(frozen=True)
class SyncOutcome:
    """What :func:`sync_pins` requested, installed, found present, and could not install."""

    tools: tuple[str, ...]
    requested: tuple[Requirement, ...] = ()
    installed: tuple[Requirement, ...] = ()
    already: tuple[Requirement, ...] = ()
    failed: tuple[SyncFailure, ...] = ()
    conflicts: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    hash_checked: bool = False
    env: str = ""

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "env": self.env,
            "tools": list(self.tools),
            "requested": [r.pin for r in self.requested],
            "installed": [r.pin for r in self.installed],
            "already": [r.pin for r in self.already],
            "failed": [f.to_dict() for f in self.failed],
            "conflicts": list(self.conflicts),
            "notes": list(self.notes),
            "hash_checked": self.hash_checked,
        }


Syncer = Callable[[Sequence[Requirement]], SyncReport]


def sync_pins(library: ToolLibrary, sync: Syncer, *, env: str = "") -> SyncOutcome:
    """Install the recorded pins of every active and pending version through ``sync``.

    All pins go to the installer at once; when that fails, each tool's pins are synced on
    their own, so one bad record does not stop the others and the failure names its tool.
    Two tools pinning one package at different versions cannot share the environment:
    the newer tool's pin is synced, and the other is installed when its tool is called.
    """
    tools = [t for t in library.with_status(Status.ACTIVE, Status.PENDING) if t.spec.requirements]
    merged, conflicts = _merge_pins(tools)
    refs = tuple(t.ref for t in tools)
    if not merged:
        return SyncOutcome(tools=refs, conflicts=conflicts, env=env)
    try:
        report = sync(merged)
    except PackageError as exc:
        return _sync_each(tools, sync, merged, conflicts, env, first_error=str(exc))
    return SyncOutcome(
        tools=refs,
        requested=tuple(merged),
        installed=report.installed,
        already=report.already,
        conflicts=conflicts,
        notes=report.notes,
        hash_checked=report.hash_checked,
        env=env or str(report.env),
    )


def _merge_pins(tools: list[ToolVersion]) -> tuple[list[Requirement], tuple[str, ...]]:
    chosen: dict[str, tuple[Requirement, str]] = {}
    wanted_by: dict[str, dict[str, list[str]]] = {}
    for tool in tools:  # oldest first, so the newest tool's pin wins
        for req in tool.spec.requirements:
            key = normalize_name(req.name)
            chosen[key] = (req, tool.ref)
            wanted_by.setdefault(key, {}).setdefault(req.pin, []).append(tool.ref)
    conflicts = []
    for key, pins in sorted(wanted_by.items()):
        if len({pin.partition("==")[2] for pin in pins}) > 1:
            listed = "; ".join(f"{pin} for {', '.join(refs)}" for pin, refs in pins.items())
            conflicts.append(
                f"{listed}: synced {chosen[key][0].pin}; the others are installed when their tool is called"
            )
    return [req for req, _ in chosen.values()], tuple(conflicts)


def _sync_each(
    tools: list[ToolVersion],
    sync: Syncer,
    merged: list[Requirement],
    conflicts: tuple[str, ...],
    env: str,
    *,
    first_error: str,
) -> SyncOutcome:
    installed: dict[str, Requirement] = {}
    already: dict[str, Requirement] = {}
    failed: list[SyncFailure] = []
    notes = [f"installing every pin at once failed ({first_error}); synced tool by tool instead"]
    for tool in tools:
        try:
            report = sync(tool.spec.requirements)
        except PackageError as exc:
            failed.append(SyncFailure((tool.ref,), tuple(r.pin for r in tool.spec.requirements), str(exc)))
            continue
        installed.update((r.pin, r) for r in report.installed)
        already.update((r.pin, r) for r in report.already if r.pin not in installed)
        notes.extend(n for n in report.notes if n not in notes)
        env = env or str(report.env)
    return SyncOutcome(
        tools=tuple(t.ref for t in tools),
        requested=tuple(merged),
        installed=tuple(installed.values()),
        already=tuple(r for p, r in already.items() if p not in installed),
        failed=tuple(failed),
        conflicts=conflicts,
        notes=tuple(notes),
        env=env,
    )
