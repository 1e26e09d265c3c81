"""Approval evidence: the version's own tests, run in the sandbox, recorded with the approval.

On both library backends: what an approval was given (each case and its outcome, the
sandbox backend and its version, toolsmith's version) is stored bound to the version's
hash, a failing run refuses the approval, the database refuses evidence naming another
hash, and ``tools show`` and the web UI show it with the version.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agent_helpers import make_settings
from cli_helpers import invoke
from library_backends import BACKENDS, library_target, postgres_schema
from toolsmith import __version__
from toolsmith.errors import LibraryError, ReviewError
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.library.transfer import copy_library
from toolsmith.sandbox import Sandbox
from toolsmith.service import evidence
from toolsmith.service import review as rv

pytestmark = pytest.mark.slow  # approvals run the sandbox

SHOUT = ToolSpec(
    name="shout",
    description="Upper-case a text.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    code="def run(text):\n    return {'upper': text.upper()}\n",
    test_args={"text": "hi"},
    tests=({"args": {"text": "ok"}, "expect": {"upper": "OK"}},),
)
WRONG = replace(SHOUT, code="def run(text):\n    return {'upper': text.lower()}\n")


@pytest.fixture(params=BACKENDS)
def library(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ToolLibrary]:
    with library_target(request.param, tmp_path) as url, ToolLibrary(url) as lib:
        yield lib


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox(make_settings(tmp_path / "home"))


def test_an_approval_records_its_evidence_bound_to_the_hash(library: ToolLibrary, sandbox: Sandbox) -> None:
    tool = library.add(SHOUT, provenance=Provenance(), gate={"ok": True}, status=Status.PENDING)
    proof = evidence.gather(tool, library=library, runner=sandbox, actor="user:r")
    decision = rv.approve(library, "shout", reason="read it", actor="user:r", evidence=proof)
    assert decision.tool.status is Status.ACTIVE
    [entry] = library.evidence("shout", 1)
    assert entry.bound and entry.hash == tool.hash == SHOUT.content_hash() and entry.actor == "user:r"
    details = entry.details
    assert [(c["case"], c["ok"], c["checked"]) for c in details["cases"]] == [
        ("test_args", True, False),
        ("case 1", True, True),
    ]
    assert details["cases"][1]["args"] == {"text": "ok"}
    assert (details["passed"], details["failed"], details["toolsmith"]) == (2, 0, __version__)
    assert details["sandbox"]["backend"] == sandbox.backend.name
    assert details["sandbox"]["version"] not in ("", "unknown")
    if sandbox.backend.name == "bwrap":
        assert details["sandbox"]["version"].startswith("bubblewrap ") and details["sandbox"]["isolating"]
    assert library.get("shout", 1).stats.calls == 2  # the evidence runs were recorded as calls
    line = evidence.describe(entry)
    assert "by user:r: 2 of 2 test case(s) passed in" in line and line.endswith("bound to its hash")


def test_failing_tests_refuse_the_approval(library: ToolLibrary, sandbox: Sandbox) -> None:
    tool = library.add(WRONG, provenance=Provenance(), gate={"ok": True}, status=Status.PENDING)
    proof = evidence.gather(tool, library=library, runner=sandbox, actor="user:r")
    assert proof.run is not None and proof.run.failed
    with pytest.raises(ReviewError, match=r"Cannot approve shout@1: it fails its own tests \(1 of 2 case\(s\) passed"):
        rv.approve(library, "shout", actor="user:r", evidence=proof)
    assert library.get("shout", 1).status is Status.PENDING
    assert library.evidence("shout", 1) == []
    assert [e.action for e in library.audit_log("shout")] == ["add"]


def test_evidence_for_another_version_is_refused(library: ToolLibrary, sandbox: Sandbox) -> None:
    library.add(SHOUT, provenance=Provenance(), gate={"ok": True}, status=Status.PENDING)
    other = library.add(replace(SHOUT, description="Shout."), provenance=Provenance(), gate={"ok": True},
                        status=Status.PENDING)  # fmt: skip
    proof = evidence.none_given(other)
    with pytest.raises(ReviewError, match="The evidence is for shout@2, not shout@1"):
        rv.approve(library, "shout", 1, actor="user:r", evidence=proof)
    # The database itself refuses evidence that names another hash.
    with pytest.raises(LibraryError, match="evidence must carry its version's hash"):
        library.add_evidence("shout", 1, hash=other.hash, actor="user:r", details={})
    assert library.evidence("shout", 1) == []


def test_no_tests_is_recorded_as_evidence_of_nothing(library: ToolLibrary) -> None:
    tool = library.add(SHOUT, provenance=Provenance(), gate={"ok": True}, status=Status.PENDING)
    rv.approve(library, "shout", actor="user:r", evidence=evidence.none_given(tool))
    [entry] = library.evidence("shout", 1)
    assert entry.details["not_run"] == evidence.NOT_RUN and entry.details["cases"] == []
    assert "approved without a test run" in evidence.describe(entry)


def test_purge_removes_evidence_with_the_tool(library: ToolLibrary) -> None:
    tool = library.add(SHOUT, provenance=Provenance(), gate={"ok": True}, status=Status.PENDING)
    rv.approve(library, "shout", actor="user:r", evidence=evidence.none_given(tool))
    library.purge("shout", actor="user:r")
    assert "shout" not in library


@pytest.mark.postgres
def test_library_migrate_copies_the_evidence(tmp_path: Path) -> None:
    with ToolLibrary(tmp_path / "library.db") as source:
        tool = source.add(SHOUT, provenance=Provenance(), gate={"ok": True}, status=Status.PENDING)
        rv.approve(source, "shout", actor="user:r", evidence=evidence.none_given(tool))
        with postgres_schema() as url, ToolLibrary(url) as target:
            copy_library(source, target)
            [copied] = target.evidence("shout", 1)
            assert copied.bound and copied.details == source.evidence("shout", 1)[0].details
            target.add_evidence("shout", 1, hash=tool.hash, actor="user:r", details={})  # ids continue


def test_cli_approve_runs_the_tests_and_show_displays_the_evidence() -> None:
    home = Path(os.environ["TOOLSMITH_HOME"])  # private per test (conftest)
    with ToolLibrary(home / "library.db") as library:
        library.add(SHOUT, provenance=Provenance(), gate={"ok": True}, status=Status.PENDING)
    approved = invoke("approve", "shout", "--reason", "tests pass")
    assert approved.exit_code == 0, approved.output
    assert "shout@1: pending -> active (tests pass)." in approved.stdout
    assert "evidence: 2 of 2 case(s) passed in " in approved.stdout
    shown = invoke("show", "shout", "--no-code")
    assert "evidence" in shown.stdout and "2 of 2 test case(s) passed" in shown.stdout
    data = json.loads(invoke("show", "shout", "--json").stdout)
    [entry] = data["evidence"]
    assert entry["bound"] and entry["hash"] == data["hash"] and entry["details"]["passed"] == 2


def test_the_tool_page_shows_the_evidence_and_a_rollback(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from toolsmith.config import Settings
    from toolsmith.ui import create_app

    home = tmp_path / "ui-home"
    settings = Settings.load(home=home, env={})
    with ToolLibrary(home / "library.db") as library:
        tool = library.add(SHOUT, provenance=Provenance(), gate={"ok": True}, status=Status.PENDING)
        proof = evidence.gather(tool, library=library, runner=Sandbox(settings), actor="user:r")
        rv.approve(library, "shout", actor="user:r", evidence=proof)
        library.add(WRONG, provenance=Provenance(), gate={"ok": True}, parent_version=1)
        library.set_status("shout", 2, Status.QUARANTINED, reason="fails its tests", actor="agent:s")
        library.serve_again("shout", 1, reason="v2 fails its own tests; v1 passes its", actor="agent:s",
                            details={"replaces": 2})  # fmt: skip
    token = "t" * 24
    with TestClient(create_app(settings, token), base_url="http://127.0.0.1:8765") as client:
        page = client.get(f"/tools/shout/1?token={token}", follow_redirects=True)
    assert page.status_code == 200
    text = page.text
    assert 'id="rollback"' in text and "v2 was quarantined (v2 fails its own tests; v1 passes its)" in text
    assert 'id="evidence"' in text and "2 of 2 test case(s) passed in" in text and "bound to its hash" in text
    assert "case 1" in text
