"""``toolsmith skills export | sync``: Agent Skills folders, valid under the specification's validator.

Every exported folder is checked with ``skills-ref`` (the specification's reference
library). A skill's script is run from a clean shell with only ``toolsmith`` on PATH and
gets the tool's answer from toolsmith's sandbox, recorded in the tool's usage stats.
``sync`` follows approvals, quarantines, removals and rollbacks, and never touches a
folder toolsmith did not write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from toolsmith.cli import skills as skills_cli
from toolsmith.config import Settings
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.sandbox import Sandbox
from toolsmith.service.skillfiles import MAX_DESCRIPTION, skill_name
from toolsmith.service.skills import MARKER, export_skills, sync_skills

if sys.version_info < (3, 11):  # pragma: no cover - skills-ref needs 3.11
    pytest.skip("skills-ref needs Python 3.11", allow_module_level=True)
from skills_ref.parser import parse_frontmatter
from skills_ref.validator import validate

DAYS = ToolSpec(
    name="days_between",
    description="Count the days between two ISO dates.",
    parameters={
        "type": "object",
        "properties": {
            "start": {"type": "string", "description": "first date, YYYY-MM-DD"},
            "end": {"type": "string", "description": "second date"},
        },
        "required": ["start", "end"],
    },
    code="from datetime import date\n\n\ndef run(start, end):\n"
    "    return {'days': (date.fromisoformat(end) - date.fromisoformat(start)).days}\n",
    test_args={"start": "2020-01-01", "end": "2020-03-01"},
    keywords=("date", "days", "日期"),
    tests=(
        {"args": {"start": "2024-02-01", "end": "2024-03-01"}, "expect": {"days": 29}},
        {"args": {"start": "2023-02-01", "end": "2023-03-01"}, "contains": {"days": 28}},
    ),
)
DAYS_V2 = replace(DAYS, code=DAYS.code.replace("return {'days'", "return {'v': 2, 'days'"))
# A description that tries to break YAML and the frontmatter, and is far too long.
AWKWARD = ToolSpec(
    name="Parse__Feed_",
    description="Parse a feed: \"quoted\" --- and 'single' # not a comment\n" + "x" * 1500,
    parameters={"type": "object", "properties": {"url": {"type": "string", "enum": ["a", "b"]}}},
    code="def run(url='a'):\n    return {'url': url}\n",
    test_args={"url": "a"},
)
# What the sandbox lets a tool see: nothing of the caller's environment, not the caller's folder.
PROBE = ToolSpec(
    name="sandbox_probe",
    description="Report what a tool sees of its environment.",
    parameters={"type": "object", "properties": {}},
    code="import os, socket\n\n\ndef run():\n"
    "    return {'marker': os.environ.get('SKILL_TEST_MARKER'), 'cwd': os.getcwd(), 'host': socket.gethostname()}\n",
)
PROV = Provenance(task="t", model="m")


@pytest.fixture
def home() -> Iterator[Path]:
    home = Path(os.environ["TOOLSMITH_HOME"])  # private per test (conftest)
    with ToolLibrary(home / "library.db") as library:
        library.add(DAYS, provenance=PROV, gate={"ok": True})
        library.add(AWKWARD, provenance=PROV, gate={"ok": True})
        library.add(PROBE, provenance=PROV, gate={"ok": True})
    yield home


def lib(home: Path) -> ToolLibrary:
    return ToolLibrary(home / "library.db")


def frontmatter(folder: Path) -> dict[str, Any]:
    data, _ = parse_frontmatter((folder / "SKILL.md").read_text(encoding="utf-8"))
    return data


def skills_cmd(*args: str) -> Result:
    result = CliRunner().invoke(skills_cli.app, list(args), env={"COLUMNS": "200"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_every_exported_folder_passes_the_specifications_validator(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "skills"
    with lib(home) as library:
        report = export_skills(library, out, home=home)
    assert report.ok and sorted(c.skill for c in report.changes) == ["days-between", "parse-feed", "sandbox-probe"]
    for folder in sorted(p for p in out.iterdir()):
        assert validate(folder) == [], folder
        meta = frontmatter(folder)
        assert meta["name"] == folder.name
        assert 0 < len(meta["description"]) <= MAX_DESCRIPTION
        assert "Linux" in meta["compatibility"] and "toolsmith" in meta["compatibility"]
        assert os.access(folder / "scripts" / "call.sh", os.X_OK)
    days = frontmatter(out / "days-between")
    assert days["metadata"] == {
        "toolsmith-tool": "days_between",
        "toolsmith-version": "1",
        "toolsmith-hash": DAYS.content_hash(),
    }
    assert days["description"].startswith("Count the days between two ISO dates. Use it when a task needs this")
    assert "date, days, 日期" in days["description"]
    assert json.loads((out / "days-between" / "references" / "parameters.json").read_text()) == DAYS.parameters
    assert "exec toolsmith tools call days_between@1 " in (out / "days-between" / "scripts" / "call.sh").read_text()
    awkward = frontmatter(out / "parse-feed")
    assert len(awkward["description"]) == MAX_DESCRIPTION and "---" not in awkward["description"]
    assert awkward["description"].startswith("Parse a feed: \"quoted\" -- and 'single' # not a comment")


def test_the_body_shows_usage_and_examples_from_the_stored_test_cases(home: Path, tmp_path: Path) -> None:
    with lib(home) as library:
        export_skills(library, tmp_path, ["days_between"], home=home)
    body = (tmp_path / "days-between" / "SKILL.md").read_text(encoding="utf-8").split("---", 2)[2]
    assert "## Usage" in body and "## Examples" in body
    assert "- `start` (string, required): first date, YYYY-MM-DD" in body
    assert """scripts/call.sh '{"end": "2024-03-01", "start": "2024-02-01"}'""" in body
    assert 'gives `result` is `{"days": 29}`.' in body
    assert '`result` includes `{"days": 28}`' in body
    assert body.count("scripts/call.sh '") == 3  # the usage line and two examples
    assert "[references/parameters.json](references/parameters.json)" in body


def test_skill_names_follow_the_specification() -> None:
    assert skill_name("days_between") == "days-between"
    assert skill_name("Parse__Feed_") == "parse-feed"
    assert skill_name("_x9") == "x9"
    assert skill_name("a" * 64) == "a" * 64


@pytest.mark.slow
def test_a_skill_script_from_a_clean_shell_gets_the_answer_sandboxed_and_recorded(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "skills"
    with lib(home) as library:
        export_skills(library, out, home=home)
    bin_dir = tmp_path / "bin"  # the only thing on PATH: the toolsmith command
    bin_dir.mkdir()
    (bin_dir / "toolsmith").symlink_to(Path(sys.executable).with_name("toolsmith"))
    clean = {"PATH": str(bin_dir), "SKILL_TEST_MARKER": "from-the-host-shell"}  # no TOOLSMITH_HOME either

    def run(skill: str, *args: str) -> subprocess.CompletedProcess[str]:
        script = out / skill / "scripts" / "call.sh"
        return subprocess.run(
            [str(script), *args], env=clean, cwd=tmp_path, capture_output=True, text=True, timeout=120
        )

    days = run("days-between", '{"start": "2024-01-01", "end": "2024-03-01"}')
    assert days.returncode == 0, days.stderr
    assert json.loads(days.stdout) == {
        "ok": True,
        "tool": "days_between",
        "version": 1,
        "result": {"days": 60},
        "source": "library tool days_between@1",
    }
    probe = run("sandbox-probe")
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout)["result"]
    assert seen["marker"] is None  # the host shell's environment never reaches the tool
    assert seen["cwd"] != str(tmp_path)
    if Sandbox(Settings(home=home)).backend.name == "bwrap":
        assert seen["host"] == "sandbox"
    bad = run("days-between", '{"start": "2024-01-01"}')
    assert bad.returncode == 2 and json.loads(bad.stdout)["error_type"] == "bad_arguments"
    with lib(home) as library:
        assert library.get("days_between").stats.calls == 1  # the refused call did not count
        assert library.get("sandbox_probe").stats.calls == 1


@pytest.mark.slow
def test_a_pinned_skill_left_behind_by_an_approval_says_which_version_serves(home: Path, tmp_path: Path) -> None:
    with lib(home) as library:
        export_skills(library, tmp_path, ["days_between"], home=home)
        library.add(DAYS_V2, provenance=PROV, gate={"ok": True}, parent_version=1)
    script = tmp_path / "days-between" / "scripts" / "call.sh"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run([str(script), "-"], input='{"start": "2024-01-01", "end": "2024-01-02"}', env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2
    assert "days_between@1 is retired (superseded by v2)" in json.loads(done.stdout)["error"]
    assert "the version served now is days_between@2" in json.loads(done.stdout)["error"]


def actions(report: Any) -> dict[str, tuple[str, str]]:
    return {c.skill: (c.action, c.tool) for c in report.changes}


def test_sync_follows_approve_quarantine_retire_and_rollback(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "skills"
    mine = out / "my-own-skill"  # a person's own skill: never touched
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: my-own-skill\ndescription: mine\n---\n", encoding="utf-8")
    with lib(home) as library:
        first = sync_skills(library, out, home=home)
        assert actions(first)["days-between"] == ("written", "days_between@1")
        assert actions(sync_skills(library, out, home=home))["days-between"] == ("unchanged", "days_between@1")
        # approve: a new version waits for review, then is approved
        library.add(DAYS_V2, provenance=PROV, gate={"ok": True}, status=Status.PENDING, parent_version=1)
        assert actions(sync_skills(library, out, home=home))["days-between"][0] == "unchanged"
        library.set_status("days_between", 2, Status.ACTIVE, reason="reviewed", actor="user:p", action="approve")
        approved = actions(sync_skills(library, out, home=home))
        assert approved["days-between"] == ("updated", "days_between@2")
        assert frontmatter(out / "days-between")["metadata"]["toolsmith-version"] == "2"
        assert "days_between@2 " in (out / "days-between" / "scripts" / "call.sh").read_text()
        # rollback: v2 quarantined, v1 served again
        library.set_status("days_between", 2, Status.QUARANTINED, reason="broken", actor="agent:s")
        library.serve_again("days_between", 1, reason="v1 passes its tests", actor="agent:s", details={"replaces": 2})
        assert actions(sync_skills(library, out, home=home))["days-between"] == ("updated", "days_between@1")
        # quarantine: nothing served, the skill goes
        library.set_status("days_between", 1, Status.QUARANTINED, reason="upstream changed", actor="user:p")
        quarantined = sync_skills(library, out, home=home)
        change = next(c for c in quarantined.changes if c.skill == "days-between")
        assert (change.action, change.tool) == ("removed", "days_between@1")
        assert "quarantined (upstream changed)" in change.reason
        assert not (out / "days-between").exists()
        # retire: tools rm
        library.retire("sandbox_probe", reason="not needed", actor="user:p")
        retired = actions(sync_skills(library, out, home=home))
        assert retired["sandbox-probe"] == ("removed", "sandbox_probe@1")
    assert sorted(p.name for p in out.iterdir()) == ["my-own-skill", "parse-feed"]
    assert (mine / "SKILL.md").read_text(encoding="utf-8").endswith("description: mine\n---\n")
    assert not (mine / MARKER).exists()


def test_a_folder_toolsmith_did_not_write_is_never_replaced(home: Path, tmp_path: Path) -> None:
    theirs = tmp_path / "days-between"
    theirs.mkdir()
    (theirs / "SKILL.md").write_text("their own\n", encoding="utf-8")
    with lib(home) as library:
        report = export_skills(library, tmp_path, ["days_between"], home=home)
    assert (
        not report.ok
        and report.changes[0].action == "skipped"
        and "not exported by toolsmith" in report.changes[0].reason
    )
    assert (theirs / "SKILL.md").read_text(encoding="utf-8") == "their own\n"


def test_cli_export_and_sync(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "skills"
    done = skills_cmd("export", "days_between", "--to", str(out), "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["skills"] == [
        {"skill": "days-between", "action": "written", "tool": "days_between@1", "reason": ""}
    ]
    missing = skills_cmd("export", "no_such_tool", "days_between", "--to", str(out))
    assert missing.exit_code == 1 and "no such tool in the library" in missing.stdout
    with lib(home) as library:
        library.set_status("days_between", 1, Status.QUARANTINED, reason="broken", actor="user:p")
    not_served = skills_cmd("export", "days_between", "--to", str(out))
    assert not_served.exit_code == 1 and "no version is served" in not_served.stdout
    synced = skills_cmd("sync", "--to", str(out))
    assert synced.exit_code == 0, synced.output
    assert sorted(p.name for p in out.iterdir()) == ["parse-feed", "sandbox-probe"]
    assert "2 written, 0 updated, 0 unchanged, 1 removed, 0 skipped." in synced.stdout
