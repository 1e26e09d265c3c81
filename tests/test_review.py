"""Review rules (toolsmith.service.review): decisions and their states, diffs, health checks, sync."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from library_backends import BACKENDS, library_target
from runner_helpers import ScriptedRunner
from toolsmith.errors import InstallError, ReviewError, ToolNotFoundError
from toolsmith.isolation import FailureKind, ToolCallResult
from toolsmith.library import Provenance, Requirement, Status, ToolLibrary, ToolSpec
from toolsmith.packages.env import SyncReport
from toolsmith.service import review as rv

CODE = "def run(text):\n    return {'upper': text.upper()}\n"
SPEC = ToolSpec(
    name="shout",
    description="Upper-case a text.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    code=CODE,
    test_args={"text": "hi"},
)
V2 = replace(
    SPEC,
    code=CODE.replace("text.upper()", "text.upper() + '!'"),
    requirements=(Requirement("humanize", "4.9.0", "ab" * 32),),
)
PROV = Provenance(task="shout it", model="m", session_id="s1")
GATE = {
    "ok": True,
    "checks": [
        {"check": "name", "ok": True, "message": ""},
        {"check": "test_run", "ok": True, "message": "returned JSON"},
    ],
}


@pytest.fixture
def lib(tmp_path: Path) -> Iterator[ToolLibrary]:
    with ToolLibrary(tmp_path / "library.db") as library:
        library.add(SPEC, provenance=PROV, gate=GATE)  # v1 active
        library.add(V2, provenance=PROV, gate=GATE, status=Status.PENDING, actor="agent:s1")  # v2 pending
        yield library


def statuses(lib: ToolLibrary, name: str = "shout") -> list[tuple[int, str]]:
    return [(v.version, v.status.value) for v in lib.history(name)]


# --- decisions -------------------------------------------------------------------------


def test_approve_newest_pending_supersedes_served(lib: ToolLibrary) -> None:
    assert lib.search("upper-case text")[0].tool.version == 1
    decision = rv.approve(lib, "shout", actor="user:alice", reason="looks right")
    assert (decision.tool.version, decision.before, decision.tool.status) == (2, Status.PENDING, Status.ACTIVE)
    assert decision.superseded == 1
    assert statuses(lib) == [(1, "retired"), (2, "active")]
    assert lib.get("shout", 1).status_reason == "superseded by v2"
    assert lib.search("upper-case text")[0].tool.version == 2
    entries = [(e.actor, e.action, e.version, e.reason, e.details.get("to")) for e in lib.audit_log("shout")]
    assert ("user:alice", "approve", 2, "looks right", "active") in entries
    assert ("user:alice", "status", 1, "superseded by v2", "retired") in entries
    assert decision.to_dict()["from"] == "pending"


def test_approve_picks_the_newest_of_several_pending(lib: ToolLibrary) -> None:
    lib.add(replace(V2, description="v3"), provenance=PROV, gate=GATE, status=Status.PENDING)
    assert rv.approve(lib, "shout", actor="user:a").tool.version == 3
    assert statuses(lib) == [(1, "retired"), (2, "pending"), (3, "active")]


def test_wrong_states_are_refused_without_change(lib: ToolLibrary) -> None:
    audit_before = len(lib.audit_log())
    with pytest.raises(ReviewError, match="already active"):
        rv.approve(lib, "shout", 1, actor="user:a")
    with pytest.raises(ReviewError, match="only a pending version can be rejected"):
        rv.reject(lib, "shout", 1, actor="user:a")
    with pytest.raises(ReviewError, match="reject a pending one instead"):
        rv.quarantine(lib, "shout", 2, actor="user:a")
    with pytest.raises(ToolNotFoundError):
        rv.approve(lib, "nope", actor="user:a")
    with pytest.raises(ToolNotFoundError):
        rv.reject(lib, "shout", 9, actor="user:a")
    with pytest.raises(ReviewError, match="Unknown review action"):
        rv.decide(lib, "bless", "shout", actor="user:a")
    assert statuses(lib) == [(1, "active"), (2, "pending")]
    assert len(lib.audit_log()) == audit_before


def test_reject_retires_with_reason_then_nothing_is_pending(lib: ToolLibrary) -> None:
    decision = rv.reject(lib, "shout", actor="user:bob", reason="  calls   an unknown host ")
    assert decision.reason == "calls an unknown host"
    assert statuses(lib) == [(1, "active"), (2, "retired")]
    assert lib.get("shout", 2).status_reason == "calls an unknown host"
    with pytest.raises(ReviewError, match="no version pending review"):
        rv.reject(lib, "shout", actor="user:bob")
    with pytest.raises(ReviewError, match="already retired"):
        rv.reject(lib, "shout", 2, actor="user:bob")
    assert rv.pending_versions(lib) == []


def test_quarantine_served_then_readmit_and_roll_back(lib: ToolLibrary) -> None:
    decision = rv.quarantine(lib, "shout", actor="user:c")
    assert (decision.tool.version, decision.reason) == (1, rv.DEFAULT_REASONS["quarantine"])
    assert lib.served("shout") is None and lib.search("upper-case text") == []
    with pytest.raises(ReviewError, match="no active version to quarantine"):
        rv.quarantine(lib, "shout", actor="user:c")
    with pytest.raises(ReviewError, match="already quarantined"):
        rv.quarantine(lib, "shout", 1, actor="user:c")
    # Re-admitting a quarantined version needs its number (the default target is pending).
    assert rv.approve(lib, "shout", 1, actor="user:c", reason="upstream fixed").tool.status is Status.ACTIVE
    rv.approve(lib, "shout", actor="user:c")  # v2 replaces v1
    back = rv.approve(lib, "shout", 1, actor="user:c", reason="roll back")  # a retired version: a rollback
    assert (back.before, back.superseded) == (Status.RETIRED, 2)
    assert statuses(lib) == [(1, "active"), (2, "retired")]


def test_decision_sees_a_change_made_by_another_process(lib: ToolLibrary) -> None:
    with ToolLibrary(lib.path) as other:
        rv.approve(other, "shout", actor="user:other")
    with pytest.raises(ReviewError, match="already active"):
        rv.approve(lib, "shout", 2, actor="user:me")
    approvals = [e for e in lib.audit_log("shout") if e.action == "approve"]
    assert [e.actor for e in approvals] == ["user:other"]


def test_pending_versions_are_oldest_first_across_tools(lib: ToolLibrary) -> None:
    other = replace(SPEC, name="whisper", code=CODE.replace("upper", "lower"))
    lib.add(other, provenance=PROV, gate=GATE, status=Status.PENDING)
    assert [v.ref for v in rv.pending_versions(lib)] == ["shout@2", "whisper@1"]


# --- what a reviewer sees --------------------------------------------------------------


def test_previous_version_diff_and_changed_fields(lib: ToolLibrary) -> None:
    v2 = lib.get("shout", 2)
    previous = rv.previous_version(lib, v2)
    assert previous is not None and previous.version == 1
    diff = rv.review_diff(previous, v2)
    assert "--- shout@1/tool.py" in diff and "+++ shout@2/tool.py" in diff
    assert "-    return {'upper': text.upper()}" in diff
    assert "+    return {'upper': text.upper() + '!'}" in diff
    assert "+humanize==4.9.0 sha256:abababababab" in diff
    assert rv.changed_fields(previous, v2) == ["code", "requirements"]
    assert rv.review_diff(None, v2) == "" and rv.changed_fields(None, v2) == []
    assert rv.previous_version(lib, lib.get("shout", 1)) is None
    assert rv.requirement_lines(v2) == ["humanize==4.9.0 sha256:abababababab"]


def test_previous_version_prefers_the_recorded_parent(lib: ToolLibrary) -> None:
    v3 = lib.add(
        replace(SPEC, description="third"), provenance=PROV, gate=GATE, status=Status.PENDING, parent_version=1
    )
    previous = rv.previous_version(lib, v3)
    assert previous is not None and previous.version == 1
    assert rv.changed_fields(previous, v3) == ["description"]
    assert rv.review_diff(previous, v3) == ""  # code and pins are the same


def test_gate_checks_normalised() -> None:
    assert rv.gate_checks(GATE)[1] == rv.RecordedCheck("test_run", True, "returned JSON")
    assert rv.gate_checks({"ok": True, "checks": ["name"]}) == [rv.RecordedCheck("name", None, "")]
    assert rv.gate_checks({"ok": True}) == []


# --- health checks ---------------------------------------------------------------------


def test_health_check_records_outcomes_and_never_quarantines_on_its_own(lib: ToolLibrary) -> None:
    tool = lib.get("shout")
    runner = ScriptedRunner(
        ToolCallResult(ok=True, value={"upper": "HI"}),
        *[ToolCallResult(ok=False, error="boom", error_type=FailureKind.EXCEPTION)] * 4,
    )
    ok = rv.health_check(tool, library=lib, runner=runner, actor="user:t")
    assert ok.ok and ok.value == {"upper": "HI"} and runner.calls[0].args == {"text": "hi"}
    for _ in range(4):  # more than quarantine_after failures in a row
        bad = rv.health_check(tool, library=lib, runner=runner, actor="user:t")
    assert not bad.ok and bad.error == "boom" and not bad.quarantined
    stats = lib.get("shout", 1).stats
    assert (stats.calls, stats.failures, stats.consecutive_failures, stats.last_error) == (5, 4, 4, "boom")
    assert lib.get("shout", 1).status is Status.ACTIVE


def test_health_check_quarantine_failing(lib: ToolLibrary) -> None:
    runner = ScriptedRunner(ToolCallResult(ok=True, value={}), ToolCallResult(ok=False, error="still empty"))
    empty = rv.health_check(lib.get("shout"), library=lib, runner=runner, actor="user:t", quarantine_failing=True)
    assert (empty.ok, empty.error_type, empty.quarantined) == (False, FailureKind.EMPTY, True)
    assert empty.tool.status is Status.QUARANTINED
    assert empty.tool.status_reason is not None and empty.tool.status_reason.startswith("tools test failed: run(")
    entry = lib.audit_log("shout")[-1]
    assert (entry.actor, entry.action, entry.version) == ("user:t", "quarantine", 1)
    # A pending version that fails is reported, not quarantined: nothing of it is served.
    pending = rv.health_check(lib.get("shout", 2), library=lib, runner=runner, actor="user:t", quarantine_failing=True)
    assert not pending.ok and not pending.quarantined and pending.tool.status is Status.PENDING
    assert runner.calls[1].requirements == V2.requirements  # the pins go to the sandbox


# --- sync ------------------------------------------------------------------------------


class Syncer:
    def __init__(self, present: set[str], broken: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.present, self.broken = present, broken
        self.calls: list[list[str]] = []

    def __call__(self, requirements: Sequence[Requirement]) -> SyncReport:
        pins = [r.pin for r in requirements]
        self.calls.append(pins)
        if self.broken & set(pins):
            raise InstallError(f"no such file: {sorted(self.broken & set(pins))[0]}")
        missing = tuple(r for r in requirements if r.pin not in self.present)
        self.present |= {r.pin for r in missing}
        already = tuple(r for r in requirements if r not in missing)
        return SyncReport(
            env=Path("/env"), requested=tuple(requirements), already=already, installed=missing, hash_checked=True
        )


def tool_with(lib: ToolLibrary, name: str, *pins: str, status: Status = Status.ACTIVE) -> None:
    reqs = tuple(Requirement(p.split("==")[0], p.split("==")[1], None) for p in pins)
    spec = replace(SPEC, name=name, code=CODE + f"# {name}\n", requirements=reqs)
    lib.add(spec, provenance=PROV, gate=GATE, status=status)


def test_sync_pins_merges_active_and_pending_tools(lib: ToolLibrary) -> None:
    tool_with(lib, "a_tool", "six==1.16.0", "idna==3.7")
    tool_with(lib, "b_tool", "idna==3.7", "Humanize==4.10.0")  # pending v2 of shout pins humanize==4.9.0
    tool_with(lib, "old_tool", "left-pad==1.0")
    lib.retire("old_tool", reason="gone", actor="user:x")
    syncer = Syncer(present={"idna==3.7"})
    outcome = rv.sync_pins(lib, syncer, env="/env")
    assert outcome.ok and len(syncer.calls) == 1
    assert sorted(syncer.calls[0]) == ["Humanize==4.10.0", "idna==3.7", "six==1.16.0"]
    assert sorted(r.pin for r in outcome.installed) == ["Humanize==4.10.0", "six==1.16.0"]
    assert [r.pin for r in outcome.already] == ["idna==3.7"]
    assert "shout@2" in outcome.tools and "old_tool@1" not in outcome.tools
    assert len(outcome.conflicts) == 1 and "synced Humanize==4.10.0" in outcome.conflicts[0]
    assert "humanize==4.9.0 for shout@2" in outcome.conflicts[0]
    assert outcome.to_dict()["hash_checked"] is True


def test_sync_pins_falls_back_to_each_tool_and_names_the_failure(lib: ToolLibrary) -> None:
    tool_with(lib, "a_tool", "six==1.16.0")
    tool_with(lib, "b_tool", "nosuch==0.0.1")
    outcome = rv.sync_pins(lib, Syncer(present=set(), broken={"nosuch==0.0.1"}), env="/env")
    assert not outcome.ok
    assert [(f.tools, f.pins) for f in outcome.failed] == [(("b_tool@1",), ("nosuch==0.0.1",))]
    assert "no such file" in outcome.failed[0].error
    assert sorted(r.pin for r in outcome.installed) == ["humanize==4.9.0", "six==1.16.0"]
    assert "synced tool by tool" in outcome.notes[0]


def test_sync_pins_with_nothing_pinned(tmp_path: Path) -> None:
    with ToolLibrary(tmp_path / "empty.db") as library:
        library.add(SPEC, provenance=PROV, gate=GATE)
        syncer = Syncer(present=set())
        outcome = rv.sync_pins(library, syncer)
    assert outcome.ok and outcome.requested == () and syncer.calls == []


def test_install_failures_are_not_quarantined(lib: ToolLibrary) -> None:
    runner = ScriptedRunner(
        ToolCallResult(
            ok=False, error="the tool's packages could not be installed: offline", error_type=FailureKind.INSTALL
        )
    )
    check = rv.health_check(lib.get("shout"), library=lib, runner=runner, actor="user:t", quarantine_failing=True)
    assert not check.ok and not check.quarantined and "tools sync" in str(check.note)
    # The machine's failure says nothing about the tool: not even recorded against it.
    assert lib.get("shout", 1).status is Status.ACTIVE and lib.get("shout", 1).stats.failures == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_readmitting_a_quarantined_tool_restarts_its_failures_in_a_row(backend: str, tmp_path: Path) -> None:
    """Three failures quarantine; after a person re-admits, one more failure does not (issue #22 §6)."""
    with library_target(backend, tmp_path) as url, ToolLibrary(url) as library:
        library.add(SPEC, provenance=PROV, gate=GATE)
        for _ in range(3):
            stats, quarantined = library.record_call_and_quarantine(
                "shout", 1, ok=False, latency_ms=1.0, error="boom", quarantine_after=3, actor="mcp"
            )
        assert quarantined and stats.consecutive_failures == 3
        assert library.get("shout", 1).status is Status.QUARANTINED

        decision = rv.approve(library, "shout", 1, actor="user:alice", reason="fixed upstream")
        assert decision.tool.status is Status.ACTIVE
        stats = library.get("shout", 1).stats
        assert (stats.calls, stats.failures, stats.consecutive_failures) == (3, 3, 0)  # totals kept
        assert library.audit_log("shout")[-1].details["cleared_consecutive_failures"] == 3

        stats, quarantined = library.record_call_and_quarantine(
            "shout", 1, ok=False, latency_ms=1.0, error="boom", quarantine_after=3, actor="mcp"
        )
        assert not quarantined and stats.consecutive_failures == 1
        assert library.served("shout") is not None
