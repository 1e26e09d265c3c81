"""``toolsmith tools review | approve | reject | quarantine`` and what list/audit/search show after.

Every test runs the ``tools`` app in a private TOOLSMITH_HOME whose config.toml says
``review = "required"``, and checks the library's real state afterwards.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_helpers import as_json, assert_error, invoke
from toolsmith import __version__
from toolsmith.cli import tools as cli
from toolsmith.library import Provenance, Requirement, Status, ToolLibrary, ToolSpec

CODE = "def run(text):\n    return {'upper': text.upper()}\n"
SHOUT = ToolSpec(
    name="shout",
    description="Upper-case a text.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    code=CODE,
    test_args={"text": "hi"},
)
SHOUT_V2 = replace(
    SHOUT,
    code=CODE.replace("text.upper()", "text.upper() + '!'"),
    requirements=(Requirement("humanize", "4.9.0", "cd" * 32),),
)
WHISPER = replace(SHOUT, name="whisper", description="Lower-case a text.", code=CODE.replace("upper", "lower"))
PROV = Provenance(
    task="Shout this text",
    model="scripted-model",
    sources=("https://docs.example.org/shout",),
    created_at="2024-05-01T10:00:00Z",
    session_id="sess-42",
)
GATE = {
    "ok": True,
    "reason": None,
    "checks": [
        {"check": "name", "ok": True, "message": ""},
        {"check": "test_run", "ok": True, "message": "run(**test_args) returned JSON-serialisable data"},
    ],
}
ME = f"user:{getpass.getuser()}"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = Path(os.environ["TOOLSMITH_HOME"])  # private per test (conftest)
    monkeypatch.delenv("TOOLSMITH_REVIEW", raising=False)
    (home / "config.toml").write_text('review = "required"\n', encoding="utf-8")
    with ToolLibrary(home / "library.db") as library:
        library.add(SHOUT, provenance=PROV, gate=GATE, actor="agent:sess-1")
        library.add(
            SHOUT_V2, provenance=PROV, gate=GATE, status=Status.PENDING, parent_version=1, actor="agent:sess-42"
        )
        library.add(WHISPER, provenance=PROV, gate=GATE, status=Status.PENDING, actor="agent:sess-42")
    yield home


def lib(home: Path) -> ToolLibrary:
    return ToolLibrary(home / "library.db")


def state(home: Path) -> dict[str, str]:
    with lib(home) as library:
        return {f"{v.ref}": v.status.value for n in ("shout", "whisper") for v in library.history(n)}


# --- the interactive walk --------------------------------------------------------------


def test_review_walk_shows_everything_and_records_decisions(home: Path) -> None:
    # shout@2's pin is made up, so its tests cannot install: approved without a test run.
    result = invoke("review", "--reason", "checked by hand", "--no-tests", input="a\nr\n")
    assert result.exit_code == 0, result.output
    out = result.stdout
    # oldest first: shout@2 then whisper@1
    assert out.index("shout@2") < out.index("whisper@1")
    assert "(1/2 pending)" in out and "(2/2 pending)" in out
    # code, diff against the parent, pins, provenance and the gate's checks
    assert "def run(text):" in out
    assert "--- shout@1/tool.py" in out and "+    return {'upper': text.upper() + '!'}" in out
    assert "humanize==4.9.0 sha256:cdcdcdcdcdcd" in out
    for text in (
        "Shout this text",
        "scripted-model",
        "https://docs.example.org/shout",
        "2024-05-01T10:00:00Z",
        "sess-42",
        "test_run",
        "returned JSON-serialisable",
    ):
        assert text in out, text
    assert "shout@1 (retired on approval)" in out
    assert "No earlier version: this is a new tool." in out  # whisper
    assert "Approved 1, rejected 1, skipped 0." in out

    assert state(home) == {"shout@1": "retired", "shout@2": "active", "whisper@1": "retired"}
    with lib(home) as library:
        decisions = [
            (e.actor, e.action, e.name, e.version, e.reason)
            for e in library.audit_log()
            if e.action in ("approve", "reject")
        ]
        assert decisions == [
            (ME, "approve", "shout", 2, "checked by hand"),
            (ME, "reject", "whisper", 1, "checked by hand"),
        ]
        assert library.get("whisper", 1).status_reason == "checked by hand"
        assert [h.tool.ref for h in library.search("upper-case a text")] == ["shout@2"]


def test_review_skip_quit_and_end_of_input_change_nothing(home: Path) -> None:
    before = state(home)
    skipped = invoke("review", input="s\nq\n")
    assert skipped.exit_code == 0 and "Approved 0, rejected 0, skipped 1, 1 not reached." in skipped.stdout
    assert invoke("review", input="").exit_code == 0  # EOF at the prompt: quit
    assert invoke("review", input="what\n\n\n").stdout.count("Please answer a, r, s or q.") == 1  # then default skip
    assert state(home) == before
    with lib(home) as library:
        assert not [e for e in library.audit_log() if e.actor == ME]


def test_review_reject_asks_for_a_reason(home: Path) -> None:
    result = invoke("review", input="s\nr\ncopies a known tool\n")
    assert result.exit_code == 0, result.output
    with lib(home) as library:
        whisper = library.get("whisper", 1)
        assert (whisper.status, whisper.status_reason) == (Status.RETIRED, "copies a known tool")
        assert library.get("shout", 2).status is Status.PENDING


def test_review_with_nothing_pending(home: Path) -> None:
    invoke("approve", "shout", "--no-tests")
    invoke("approve", "whisper")
    result = invoke("review")
    assert result.exit_code == 0 and "Nothing is waiting for review." in result.stdout


# --- non-interactive decisions ---------------------------------------------------------


def test_approve_reject_quarantine_commands(home: Path) -> None:
    approved = as_json(invoke("approve", "shout", "--json", "--no-tests"))
    assert approved == {
        "ok": True,
        "action": "approve",
        "name": "shout",
        "version": 2,
        "from": "pending",
        "to": "active",
        "reason": "approved in review",
        "actor": ME,
        "superseded": 1,
        "evidence": {
            "cases": [],
            "failed": 0,
            "not_run": "approved without a test run (--no-tests)",
            "passed": 0,
            "toolsmith": __version__,
        },
    }
    rejected = invoke("reject", "whisper@1", "--reason", "duplicate of shout")
    assert rejected.exit_code == 0
    assert "whisper@1: pending -> retired (duplicate of shout)." in rejected.stdout
    quarantined = as_json(invoke("quarantine", "shout", "--reason", "upstream API changed", "--json"))
    assert (quarantined["version"], quarantined["to"]) == (2, "quarantined")
    assert state(home) == {"shout@1": "retired", "shout@2": "quarantined", "whisper@1": "retired"}
    assert as_json(invoke("search", "upper-case", "--json")) == []

    listed = invoke("list", "--all")
    assert "quarantined" in listed.stdout and "upstream API changed" in listed.stdout  # status and why
    assert "duplicate of shout" in listed.stdout
    reasons = {t["name"]: (t["status"], t["status_reason"]) for t in as_json(invoke("list", "--all", "--json"))}
    assert reasons == {"shout": ("quarantined", "upstream API changed"), "whisper": ("retired", "duplicate of shout")}
    entries = as_json(invoke("audit", "shout", "--json"))
    assert [(e["actor"], e["action"], e["version"], e["details"].get("to")) for e in entries][-3:] == [
        (ME, "status", 1, "retired"),  # superseded by the approval, in the same transaction
        (ME, "approve", 2, "active"),
        (ME, "quarantine", 2, "quarantined"),
    ]
    assert entries[-1]["reason"] == "upstream API changed" and entries[-1]["at"].endswith("Z")
    assert entries[0]["actor"] == "agent:sess-1"
    text = invoke("audit", "shout").stdout
    for shown in ("agent:sess-1", ME, "approve", "quarantine", "upstream API changed", "pending ->"):
        assert shown in text, shown


def test_wrong_state_and_bad_refs(home: Path) -> None:
    invoke("approve", "shout", "--no-tests")
    assert_error(invoke("approve", "shout@2"), 1, "already active")
    assert_error(invoke("approve", "shout"), 1, "no version pending review")
    assert_error(invoke("reject", "shout@2", "--json"), 1, "only a pending version can be rejected")
    assert_error(invoke("quarantine", "whisper"), 1, "no active version to quarantine")
    assert_error(invoke("quarantine", "whisper@1"), 1, "reject a pending one instead")
    assert_error(invoke("approve", "nope"), 1, "No tool named 'nope'")
    assert_error(invoke("approve", "shout@9"), 1, "shout@9")
    assert_error(invoke("approve", "shout@x"), 2, "whole number")
    failed = invoke("reject", "shout@1", "--json")
    assert json.loads(failed.stdout)["ok"] is False
    assert state(home) == {"shout@1": "retired", "shout@2": "active", "whisper@1": "pending"}


def test_approve_by_name_readmits_the_only_quarantined_version(home: Path) -> None:
    invoke("approve", "shout", "--no-tests")  # its pin is made up: no tests can run here
    invoke("quarantine", "shout", "--reason", "upstream API changed")
    readmitted = as_json(invoke("approve", "shout", "--reason", "upstream fixed", "--json", "--no-tests"))
    assert (readmitted["version"], readmitted["from"], readmitted["to"]) == (2, "quarantined", "active")
    assert state(home)["shout@2"] == "active"
    assert [h["name"] for h in as_json(invoke("search", "upper-case", "--json"))] == ["shout"]


def test_approve_by_name_with_two_quarantined_versions_asks_for_one(home: Path) -> None:
    with lib(home) as library:
        library.set_status("shout", 1, Status.QUARANTINED, reason="broken", actor=ME, action="quarantine")
        library.set_status("shout", 2, Status.ACTIVE, reason="ok", actor=ME, action="approve")
        library.set_status("shout", 2, Status.QUARANTINED, reason="broken too", actor=ME, action="quarantine")
    assert state(home)["shout@1"] == state(home)["shout@2"] == "quarantined"
    assert_error(invoke("approve", "shout"), 1, "2 quarantined (shout@1, shout@2); name one as shout@N")


def test_list_notes_pending_versions_and_search_hides_them(home: Path) -> None:
    listed = invoke("list")
    assert "2 version(s) await review (shout@2, whisper@1)" in listed.stdout
    assert [t["name"] for t in as_json(invoke("list", "--json"))] == ["shout", "whisper"]
    assert as_json(invoke("search", "whisper", "--json")) == []
    invoke("approve", "whisper")
    assert [h["name"] for h in as_json(invoke("search", "whisper", "--json"))] == ["whisper"]


def test_help_lists_the_new_commands() -> None:
    out = CliRunner().invoke(cli.app, ["--help"]).stdout
    for command in ("review", "approve", "reject", "quarantine", "test", "sync", "keygen"):
        assert command in out, command


@pytest.mark.slow
def test_agent_created_pending_tool_reviewed_then_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    """create_tool under review = required, reviewed with the CLI, then reused by a later task."""
    from agent_helpers import answer_from_tool, evolve_script, rig
    from toolsmith.testing import reply, tool_call

    monkeypatch.delenv("TOOLSMITH_REVIEW", raising=False)
    home = Path(os.environ["TOOLSMITH_HOME"])
    with rig(home, review="required") as r:
        r.model.add(*evolve_script())
        first = r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert r.library.get("days_between").status is Status.PENDING
        walk = invoke("review", input="a\n")
        assert walk.exit_code == 0, walk.output
        assert "days between 2020-01-01 and 2020-03-01" in walk.stdout  # the task, as provenance
        session = r.library.get("days_between").provenance.session_id
        assert first.answer.startswith("60 days") and session
        assert "scripted" in walk.stdout and session in walk.stdout
        entries = r.library.audit_log("days_between")
        assert [(e.actor, e.action) for e in entries] == [(f"agent:{session}", "add"), (ME, "approve")]
        r.model.add(
            reply(tool_call("search_tools", {"query": "days between two dates"})),
            reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})),
            answer_from_tool,
        )
        second = r.agent().run_task("days between 2021-01-01 and 2021-12-31", index=1)
        assert second.reuse_verdict()["reused"] and second.answer.startswith("364 days")
