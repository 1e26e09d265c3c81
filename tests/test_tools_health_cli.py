"""``toolsmith tools test`` (stored test_args re-run in the real sandbox) and ``tools sync``."""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from library_backends import DAYS_SPEC
from toolsmith.cli import review as review_cli
from toolsmith.cli import tools as cli
from toolsmith.config import Settings
from toolsmith.errors import InstallError
from toolsmith.isolation.bwrap import BwrapBackend
from toolsmith.library import Provenance, Requirement, Status, ToolLibrary, ToolSpec
from toolsmith.packages.env import SyncReport
from toolsmith.sandbox import Sandbox

GOOD = DAYS_SPEC
BROKEN = replace(
    GOOD,
    name="parse_feed",
    description="Parse a feed.",
    code="def run(start, end):\n    raise RuntimeError('the feed format changed')\n",
)
EMPTY = replace(
    GOOD, name="list_events", description="Events between two dates.", code="def run(start, end):\n    return []\n"
)
PROV = Provenance(task="t", model="m")
ME = f"user:{getpass.getuser()}"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = Path(os.environ["TOOLSMITH_HOME"])
    monkeypatch.delenv("TOOLSMITH_REVIEW", raising=False)
    # quarantine_after = 1: a recorded failure would quarantine at once if tools test counted it so.
    (home / "config.toml").write_text("quarantine_after = 1\n[sandbox]\ntimeout_s = 20\n", encoding="utf-8")
    with ToolLibrary(home / "library.db") as library:
        for spec in (GOOD, BROKEN, EMPTY):
            library.add(spec, provenance=PROV, gate={"ok": True})
    yield home


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli.app, list(args), env={"COLUMNS": "200"})
    assert "Traceback (most recent call last)" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def assert_error(result: Result, code: int, text: str) -> None:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("error: ") and text in lines[-1], result.stderr


def library_state(home: Path) -> dict[str, tuple[str, int, int]]:
    with ToolLibrary(home / "library.db") as library:
        return {
            t.name: (t.status.value, t.stats.calls, t.stats.failures) for t in library.list_tools(include_retired=True)
        }


# --- tools test ------------------------------------------------------------------------


def test_test_all_reports_and_records_without_changing_state(home: Path) -> None:
    result = invoke("test", "--all", "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    by_name = {t["name"]: t for t in report["tools"]}
    assert (report["ok"], report["passed"], report["failed"]) == (False, 1, 2)
    assert by_name["days_between"]["ok"] and by_name["days_between"]["value"] == {"days": 60}
    assert "the feed format changed" in by_name["parse_feed"]["error"]
    assert by_name["list_events"]["error_type"] == "empty"
    assert not any(t["quarantined"] for t in report["tools"])
    # Recorded as calls, but no state change without --quarantine-failing.
    assert library_state(home) == {
        "days_between": ("active", 1, 0),
        "list_events": ("active", 1, 1),
        "parse_feed": ("active", 1, 1),
    }
    with ToolLibrary(home / "library.db") as library:
        assert "the feed format changed" in str(library.get("parse_feed").stats.last_error)
        assert [e.action for e in library.audit_log()] == ["add", "add", "add"]


def test_quarantine_failing_hides_failing_tools_with_an_audited_reason(home: Path) -> None:
    result = invoke("test", "--all", "--quarantine-failing")
    assert result.exit_code == 1
    assert "1 passed, 2 failed; 2 quarantined." in result.stdout
    assert "FAIL" in result.stdout and "the feed format changed" in result.stdout
    states = library_state(home)
    assert states["parse_feed"][0] == states["list_events"][0] == "quarantined"
    assert states["days_between"][0] == "active"
    with ToolLibrary(home / "library.db") as library:
        entry = next(e for e in library.audit_log("parse_feed") if e.action == "quarantine")
        assert entry.actor == ME and entry.reason is not None
        assert entry.reason.startswith("tools test failed: ") and "the feed format changed" in entry.reason
        assert entry.details == {"from": "active", "to": "quarantined"}
        assert [h.tool.name for h in library.search("parse a feed")] == []
    listed = invoke("list")
    assert "quarantined" in listed.stdout and "tools test failed" in listed.stdout
    again = invoke("test", "--all")  # only the served tools are tested
    assert again.exit_code == 0 and "1 passed, 0 failed." in again.stdout


def test_a_broken_sandbox_quarantines_nothing(home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # bwrap present but failing at run time, as when user namespaces are switched off under it
    script = tmp_path / "bwrap"
    script.write_text('#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n')
    script.chmod(0o755)
    monkeypatch.setattr(review_cli, "_sandbox", lambda settings: Sandbox(settings, backend=BwrapBackend(str(script))))
    result = invoke("test", "--all", "--quarantine-failing", "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["failed"] == 3 and not any(t["quarantined"] for t in report["tools"])
    assert {t["error_type"] for t in report["tools"]} == {"sandbox"}
    assert all("not quarantined" in t["note"] for t in report["tools"])
    # nothing recorded against any tool, nothing changed, nothing audited but the adds
    assert library_state(home) == {
        "days_between": ("active", 0, 0),
        "list_events": ("active", 0, 0),
        "parse_feed": ("active", 0, 0),
    }
    with ToolLibrary(home / "library.db") as library:
        assert [e.action for e in library.audit_log()] == ["add", "add", "add"]


@pytest.mark.slow
def test_named_tool_served_pending_or_one_version(home: Path) -> None:
    ok = invoke("test", "days_between")
    assert ok.exit_code == 0 and "days_between@1" in ok.stdout and "pass" in ok.stdout
    with ToolLibrary(home / "library.db") as library:
        library.add(replace(BROKEN, name="new_feed"), provenance=PROV, gate={"ok": True}, status=Status.PENDING)
    pending = json.loads(invoke("test", "new_feed", "--quarantine-failing", "--json").stdout)
    assert pending["tools"][0]["status"] == "pending" and not pending["tools"][0]["quarantined"]
    assert library_state(home)["new_feed"][0] == "pending"  # a pending version is not quarantined
    assert invoke("test", "days_between@1", "--json").exit_code == 0


def test_usage_errors(home: Path) -> None:
    assert_error(invoke("test"), 2, "pass --all")
    assert_error(invoke("test", "days_between", "--all"), 2, "pass --all")
    assert_error(invoke("test", "nope"), 1, "No tool named 'nope'")
    assert_error(invoke("test", "days_between@0"), 2, "whole number")


def test_test_all_with_no_active_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLSMITH_REVIEW", raising=False)
    result = invoke("test", "--all")
    assert result.exit_code == 0 and "No active tools to test." in result.stdout


# --- tools sync ------------------------------------------------------------------------


class FakeEnv:
    """Stands in for PackageEnv: what is 'installed' is a set of pins."""

    def __init__(self, path: Path, present: set[str], broken: set[str] | None = None) -> None:
        self.path, self.present, self.broken = path, present, broken or set()
        self.calls: list[list[str]] = []

    def sync(self, requirements: Sequence[Requirement]) -> SyncReport:
        pins = [r.pin for r in requirements]
        self.calls.append(pins)
        if self.broken & set(pins):
            raise InstallError("Syncing failed: no matching distribution")
        missing = tuple(r for r in requirements if r.pin not in self.present)
        self.present |= {r.pin for r in missing}
        return SyncReport(
            env=self.path,
            requested=tuple(requirements),
            installed=missing,
            already=tuple(r for r in requirements if r not in missing),
            hash_checked=True,
        )


def with_fake_env(monkeypatch: pytest.MonkeyPatch, env: FakeEnv) -> None:
    def sandbox(settings: Settings) -> Sandbox:
        return Sandbox(settings, env=env)  # type: ignore[arg-type]

    monkeypatch.setattr(review_cli, "_sandbox", sandbox)


def add_pinned(home: Path, name: str, *pins: str, status: Status = Status.ACTIVE) -> None:
    reqs = tuple(Requirement(p.split("==")[0], p.split("==")[1], "e" * 64) for p in pins)
    with ToolLibrary(home / "library.db") as library:
        library.add(
            replace(GOOD, name=name, code=GOOD.code + f"# {name}\n", requirements=reqs),
            provenance=PROV,
            gate={"ok": True},
            status=status,
        )


def test_sync_installs_recorded_pins_of_active_and_pending_tools(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_pinned(home, "slug_tool", "python-slugify==8.0.4", "text-unidecode==1.3")
    add_pinned(home, "pending_tool", "humanize==4.9.0", status=Status.PENDING)
    add_pinned(home, "old_tool", "left-pad==1.0.0")
    with ToolLibrary(home / "library.db") as library:
        library.retire("old_tool", reason="gone", actor="user:x")
    env = FakeEnv(tmp_path / "env", present={"text-unidecode==1.3"})
    with_fake_env(monkeypatch, env)
    report = json.loads(invoke("sync", "--json").stdout)
    assert report["ok"] and report["env"] == str(tmp_path / "env")
    assert sorted(report["installed"]) == ["humanize==4.9.0", "python-slugify==8.0.4"]
    assert report["already"] == ["text-unidecode==1.3"] and report["hash_checked"] is True
    assert sorted(report["tools"]) == ["pending_tool@1", "slug_tool@1"]
    assert len(env.calls) == 1 and "left-pad==1.0.0" not in env.calls[0]
    text = invoke("sync")
    assert text.exit_code == 0 and "already present (3)" in text.stdout and "installed (0): -" in text.stdout


def test_sync_names_the_tool_whose_pins_fail(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_pinned(home, "slug_tool", "python-slugify==8.0.4")
    add_pinned(home, "ghost_tool", "no-such-dist==0.0.1")
    with_fake_env(monkeypatch, FakeEnv(tmp_path / "env", present=set(), broken={"no-such-dist==0.0.1"}))
    result = invoke("sync")
    assert result.exit_code == 1
    assert "failed for ghost_tool@1 (no-such-dist==0.0.1): Syncing failed" in result.stdout
    assert "installed (1): python-slugify==8.0.4" in result.stdout


def test_sync_with_nothing_pinned(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = FakeEnv(tmp_path / "env", present=set())
    with_fake_env(monkeypatch, env)
    result = invoke("sync")
    assert result.exit_code == 0 and "nothing to sync" in result.stdout and env.calls == []


@pytest.mark.network
def test_fresh_machine_sync_then_test(home: Path) -> None:
    """A library moved to a machine with an empty package environment: sync, then test."""
    from toolsmith.packages.env import PackageEnv

    settings = Settings.load()
    sha = PackageEnv(settings).file_hash("humanize", "4.9.0")
    assert sha is not None
    code = "import humanize\n\n\ndef run(number):\n    return {'text': humanize.intcomma(number)}\n"
    spec = ToolSpec(
        name="format_number",
        description="Thousands separators for a number.",
        parameters={"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]},
        code=code,
        test_args={"number": 1234567},
        requirements=(Requirement("humanize", "4.9.0", sha),),
    )
    with ToolLibrary(home / "library.db") as library:
        library.add(spec, provenance=PROV, gate={"ok": True})
    first = json.loads(invoke("sync", "--json").stdout)
    assert first["ok"] and first["installed"] == ["humanize==4.9.0"] and first["hash_checked"] is True
    second: dict[str, Any] = json.loads(invoke("sync", "--json").stdout)
    assert second["installed"] == [] and second["already"] == ["humanize==4.9.0"]
    tested = json.loads(invoke("test", "format_number", "--json").stdout)
    assert tested["tools"][0]["value"] == {"text": "1,234,567"}
