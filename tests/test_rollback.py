"""Rollback: when the served version is quarantined failing its own tests, its parent serves again.

On both library backends, with the real sandbox running each version's own tests: the
parent is served again only when it passes its tests (and was superseded, not turned down
by a person), and the audit trail shows the rollback or why there was none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agent_helpers import make_settings
from library_backends import BACKENDS, DAYS_SPEC, library_target
from toolsmith.config import Settings
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.sandbox import Sandbox
from toolsmith.service import review as rv
from toolsmith.service import rollback
from toolsmith.service.toolcall import call_stored_tool

pytestmark = pytest.mark.slow  # every test runs several sandboxed processes

V1 = replace(
    DAYS_SPEC,
    tests=({"args": {"start": "2024-02-01", "end": "2024-03-01"}, "expect": {"days": 29}},),
)
# A "repair" whose every call breaks: it fails its own tests.
BROKEN = replace(V1, code="def run(start, end):\n    raise RuntimeError('upstream format changed')\n")
# Fails only for one caller's input: its own tests still pass.
PICKY = replace(
    V1,
    code=V1.code.replace(
        "    return", "    if start == '1999-01-01':\n        raise ValueError('no data that far back')\n    return"
    ),
)
ARGS = {"start": "2024-02-01", "end": "2024-03-01"}


@pytest.fixture(params=BACKENDS)
def library(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ToolLibrary]:
    with library_target(request.param, tmp_path) as url, ToolLibrary(url) as lib:
        yield lib


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "home", quarantine_after=1)


def two_versions(library: ToolLibrary, parent: ToolSpec, child: ToolSpec) -> None:
    """v1 served, then v2 derived from it and approved: v1 is retired as superseded."""
    library.add(parent, provenance=Provenance(), gate={"ok": True})
    library.add(child, provenance=Provenance(), gate={"ok": True}, parent_version=1)
    assert library.get(child.name, 1).status_reason == "superseded by v2"


def call_and_quarantine(library: ToolLibrary, settings: Settings, args: dict[str, object]) -> object:
    sandbox = Sandbox(settings)
    return call_stored_tool(
        library.get("days_between", 2), args, library=library, runner=sandbox, actor="agent:s1",
        quarantine_after=settings.quarantine_after,
        on_quarantine=rollback.hook(settings, library=library, runner=sandbox, actor="agent:s1"),
    )  # fmt: skip


def test_a_quarantined_version_rolls_back_to_a_parent_that_passes(library: ToolLibrary, settings: Settings) -> None:
    two_versions(library, V1, BROKEN)
    call = call_and_quarantine(library, settings, ARGS)
    assert call.quarantined and call.rolled_back_to == 1  # type: ignore[attr-defined]
    assert call.result().to_message()["now_served"] == "days_between@1"  # type: ignore[attr-defined]
    assert library.get("days_between", 2).status is Status.QUARANTINED
    served = library.served("days_between")
    assert served is not None and served.version == 1
    assert [h.tool.ref for h in library.search("days between two dates")] == ["days_between@1"]
    entry = library.audit_log("days_between")[-1]
    assert (entry.action, entry.version, entry.actor) == ("rollback", 1, "agent:s1")
    assert entry.details["from"] == "retired" and entry.details["to"] == "active"
    assert entry.details["replaces"] == 2
    assert entry.details["parent"]["passed"] is True and len(entry.details["parent"]["cases"]) == 2
    assert entry.details["broken"]["passed"] is False
    assert entry.reason is not None and "upstream format changed" in entry.reason
    info = rollback.last_rollback(library, "days_between")
    assert info is not None and (info.to_version, info.from_version) == (1, 2)
    assert "v2 was quarantined" in info.line()


def test_no_rollback_when_the_parent_fails_its_own_tests(library: ToolLibrary, settings: Settings) -> None:
    two_versions(library, replace(BROKEN, code=BROKEN.code.replace("upstream", "old")), BROKEN)
    call = call_and_quarantine(library, settings, ARGS)
    assert call.quarantined and call.rolled_back_to is None  # type: ignore[attr-defined]
    assert library.served("days_between") is None
    assert library.get("days_between", 1).status is Status.RETIRED
    entry = library.audit_log("days_between")[-1]
    assert (entry.action, entry.version) == ("rollback_declined", 2)
    assert entry.reason == "v1 not served again: v1 fails its own tests too"
    assert entry.details["parent_tests"]["passed"] is False
    assert rollback.last_rollback(library, "days_between") is None


def test_no_rollback_when_the_failing_version_passes_its_own_tests(library: ToolLibrary, settings: Settings) -> None:
    """Its failures were the callers' inputs (issue #18): it is not quarantined, so there is
    nothing to roll back, and the served version stays."""
    two_versions(library, V1, PICKY)
    call = call_and_quarantine(library, settings, {"start": "1999-01-01", "end": "2000-01-01"})
    assert not call.quarantined and call.rolled_back_to is None and call.kept_after == settings.quarantine_after  # type: ignore[attr-defined]
    assert library.served("days_between") is not None and library.served("days_between").version == 2  # type: ignore[union-attr]
    assert [e.action for e in library.audit_log("days_between")][-1] == "kept"


def test_tools_test_quarantine_failing_rolls_back_too(library: ToolLibrary, settings: Settings) -> None:
    two_versions(library, V1, BROKEN)
    sandbox = Sandbox(settings)
    check = rv.health_check(
        library.get("days_between", 2), library=library, runner=sandbox, actor="user:t", quarantine_failing=True,
        on_quarantine=rollback.hook(settings, library=library, runner=sandbox, actor="user:t"),
    )  # fmt: skip
    assert check.quarantined and check.rolled_back_to == 1
    assert [e.action for e in library.audit_log("days_between")][-2:] == ["quarantine", "rollback"]


def test_the_setting_switches_rollback_off(library: ToolLibrary, settings: Settings) -> None:
    two_versions(library, V1, BROKEN)
    off = replace(settings, rollback=False)
    assert rollback.hook(off, library=library, runner=Sandbox(off), actor="t") is None
    call = call_and_quarantine(library, off, ARGS)
    assert call.quarantined and call.rolled_back_to is None  # type: ignore[attr-defined]
    assert library.served("days_between") is None
    assert [e.action for e in library.audit_log("days_between")][-1] == "quarantine"


def test_a_parent_a_person_turned_down_is_never_served_again(library: ToolLibrary, settings: Settings) -> None:
    library.add(V1, provenance=Provenance(), gate={"ok": True})
    library.set_status("days_between", 1, Status.QUARANTINED, reason="wrong for leap years", actor="user:p")
    library.add(BROKEN, provenance=Provenance(), gate={"ok": True}, parent_version=1)
    call = call_and_quarantine(library, settings, ARGS)
    assert call.quarantined and call.rolled_back_to is None  # type: ignore[attr-defined]
    assert library.get("days_between", 1).status is Status.QUARANTINED
    assert library.served("days_between") is None
    assert [e.action for e in library.audit_log("days_between")][-1] == "quarantine"  # not even considered


def test_a_rollback_never_undoes_a_decision_made_meanwhile(library: ToolLibrary) -> None:
    two_versions(library, V1, BROKEN)
    library.set_status("days_between", 2, Status.QUARANTINED, reason="broken", actor="agent:s1")
    library.set_status("days_between", 1, Status.ACTIVE, reason="a person re-admitted it", actor="user:p")
    # The rollback's own check-and-change finds v1 already served: it changes nothing.
    assert library.serve_again("days_between", 1, reason="r", actor="agent:s1", details={}) is None
    assert [e.action for e in library.audit_log("days_between")][-1] == "status"


def test_tools_show_names_the_rollback(tmp_path: Path) -> None:
    import json
    import os

    from cli_helpers import invoke

    home = Path(os.environ["TOOLSMITH_HOME"])  # private per test (conftest)
    with ToolLibrary(home / "library.db") as library:
        two_versions(library, V1, BROKEN)
        library.set_status("days_between", 2, Status.QUARANTINED, reason="fails", actor="agent:s")
        library.serve_again("days_between", 1, reason="v2 fails its own tests; v1 passes its", actor="agent:s",
                            details={"replaces": 2})  # fmt: skip
    shown = invoke("show", "days_between", "--no-code")
    assert "rollback" in shown.stdout and "v1 is served again since" in shown.stdout
    assert "v2 was quarantined (v2 fails its own tests; v1 passes its)" in shown.stdout
    data = json.loads(invoke("show", "days_between@2", "--json").stdout)
    assert data["rollback"]["to_version"] == 1 and data["rollback"]["from_version"] == 2
    audit = invoke("audit", "days_between")
    assert "rollback" in audit.stdout and "retired -> active" in audit.stdout
