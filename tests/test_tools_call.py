"""``toolsmith tools call NAME[@VERSION]``: each exit code, pinned versions, arguments from stdin or a file.

Every call runs in the configured sandbox and is recorded in the tool's usage stats, as
the agent's and the MCP server's calls are.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from cli_helpers import invoke
from library_backends import DAYS_SPEC
from toolsmith.cli import tools
from toolsmith.library import Provenance, Status, ToolLibrary

DAYS = DAYS_SPEC
# v2 says which version answered, so a test can tell the versions apart.
DAYS_V2 = replace(DAYS, code=DAYS.code.replace("return {'days'", "return {'v': 2, 'days'"))
FEED = replace(
    DAYS,
    name="parse_feed",
    description="Parse a feed.",
    code="def run(start, end):\n    raise RuntimeError('feed moved')\n",
)
PROV = Provenance(task="t", model="m")
ARGS = json.dumps({"start": "2024-02-01", "end": "2024-03-01"})


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = Path(os.environ["TOOLSMITH_HOME"])  # private per test (conftest)
    monkeypatch.delenv("TOOLSMITH_REVIEW", raising=False)
    (home / "config.toml").write_text("quarantine_after = 2\n[sandbox]\ntimeout_s = 20\n", encoding="utf-8")
    with ToolLibrary(home / "library.db") as library:
        library.add(DAYS, provenance=PROV, gate={"ok": True})
        library.add(DAYS_V2, provenance=PROV, gate={"ok": True}, parent_version=1)
        library.add(FEED, provenance=PROV, gate={"ok": True})
    yield home


def out(result: Result) -> dict[str, Any]:
    """stdout is exactly one JSON object, whatever the exit code."""
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    data = json.loads(lines[0])
    assert isinstance(data, dict)
    return data


def invoke_failing(*args: str) -> Result:
    """Like ``invoke``, for a tool that raises: its own traceback is part of the JSON outcome."""
    result = CliRunner().invoke(tools.app, list(args), env={"COLUMNS": "200"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr  # toolsmith's own errors are one line
    return result


def calls_of(home: Path, name: str, version: int) -> tuple[int, int]:
    with ToolLibrary(home / "library.db") as library:
        stats = library.get(name, version).stats
    return stats.calls, stats.failures


def test_exit_0_prints_the_result_and_records_the_call(home: Path) -> None:
    result = invoke("call", "days_between", "--args", ARGS)
    assert result.exit_code == 0, result.output
    data = out(result)
    assert data["ok"] is True and data["result"] == {"v": 2, "days": 29}
    assert (data["tool"], data["version"]) == ("days_between", 2)
    assert data["source"].startswith("library tool days_between@2")
    assert result.stderr == ""
    assert calls_of(home, "days_between", 2) == (1, 0)


def test_a_pinned_version_runs_exactly_that_version(home: Path) -> None:
    result = invoke("call", "days_between@2", "--args", ARGS)
    assert result.exit_code == 0 and out(result)["result"] == {"v": 2, "days": 29}


def test_a_pinned_version_that_is_not_served_exits_2_naming_the_served_one(home: Path) -> None:
    result = invoke("call", "days_between@1", "--args", ARGS)
    assert result.exit_code == 2
    data = out(result)
    assert data["error_type"] == "not_active" and data["served"] == 2
    assert "days_between@1 is retired (superseded by v2)" in data["error"]
    assert "the version served now is days_between@2" in data["error"]
    assert result.stderr.startswith("error: days_between@1 is retired")
    assert calls_of(home, "days_between", 1) == (0, 0)  # nothing ran


def test_a_pinned_quarantined_version_names_none_served(home: Path) -> None:
    with ToolLibrary(home / "library.db") as library:
        library.set_status("days_between", 2, Status.QUARANTINED, reason="upstream changed", actor="user:t")
    result = invoke("call", "days_between@2", "--args", ARGS)
    assert result.exit_code == 2
    data = out(result)
    assert "days_between@2 is quarantined (upstream changed)" in data["error"]
    assert "no version of days_between is served now" in data["error"]
    assert data["served"] is None
    unpinned = invoke("call", "days_between", "--args", ARGS)
    assert unpinned.exit_code == 2 and out(unpinned)["error_type"] == "not_active"


def test_arguments_from_stdin(home: Path) -> None:
    result = invoke("call", "days_between@2", "--args", "-", input=ARGS)
    assert result.exit_code == 0, result.output
    assert out(result)["result"]["days"] == 29


def test_arguments_from_a_file_and_from_stdin_by_file(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "args.json"
    path.write_text(ARGS, encoding="utf-8")
    assert out(invoke("call", "days_between", "--args-file", str(path)))["result"]["days"] == 29
    assert out(invoke("call", "days_between", "--args-file", "-", input=ARGS))["result"]["days"] == 29


def test_exit_1_when_the_tool_fails_and_the_failure_counts(home: Path) -> None:
    first = invoke_failing("call", "parse_feed", "--args", ARGS)
    assert first.exit_code == 1
    data = out(first)
    assert data["ok"] is False and data["error_type"] == "exception" and "feed moved" in data["error"]
    assert first.stderr.startswith("error: ") and "feed moved" in first.stderr
    assert "RuntimeError: feed moved" in data["traceback"]
    assert calls_of(home, "parse_feed", 1) == (1, 1)
    second = invoke_failing("call", "parse_feed", "--args", ARGS)  # quarantine_after = 2
    assert second.exit_code == 1 and out(second)["quarantined"] is True
    third = invoke("call", "parse_feed", "--args", ARGS)
    assert third.exit_code == 2 and "parse_feed@1 is quarantined" in out(third)["error"]


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--args", '{"start": "2024-01-01"}'], "missing required argument 'end'"),
        (["--args", '{"start": "2024-01-01", "end": "2024-01-02", "x": 1}'], "'x'"),
        (["--args", "[1, 2]"], "must be a JSON object"),
        (["--args", "{not json"], "are not JSON"),
        (["--args", "{}", "--args-file", "x.json"], "not both"),
        (["--args-file", "/nonexistent/args.json"], "cannot read the arguments"),
    ],
)
def test_exit_2_for_arguments_the_tool_cannot_take(home: Path, args: list[str], text: str) -> None:
    result = invoke("call", "days_between", *args)
    assert result.exit_code == 2, result.output
    data = out(result)
    assert data["error_type"] == "bad_arguments" and text in data["error"]
    assert calls_of(home, "days_between", 2) == (0, 0)  # refused before it ran: health untouched


@pytest.mark.parametrize(("ref", "kind"), [("no_such_tool", "unknown_tool"), ("days_between@9", "unknown_tool")])
def test_exit_2_for_an_unknown_tool_or_version(home: Path, ref: str, kind: str) -> None:
    result = invoke("call", ref, "--args", ARGS)
    assert result.exit_code == 2
    assert out(result)["error_type"] == kind


def test_exit_2_for_a_malformed_reference(home: Path) -> None:
    result = invoke("call", "days_between@x", "--args", ARGS)
    assert result.exit_code == 2 and "must be a whole number" in out(result)["error"]
