"""The offline self-test, in process and through the installed console script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_toolsmith
from toolsmith.agent.offline import BROKEN_TOOL, run_offline
from toolsmith.config import Settings

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them


def test_offline_report_holds_both_verdicts(tmp_path: Path) -> None:
    events = []
    report = run_offline(on_event=events.append, base=Settings(home=tmp_path))
    assert report.ok
    assert report.gate_verdict.refused and report.gate_verdict.check == "test_run"
    assert report.gate_verdict.written is False
    reuse = report.reuse_verdict
    assert reuse.days == [60, 364] and reuse.created_in_task_1 == ["days_between@1"]
    second = reuse.second
    assert second["search_tools_called"] and second["library_tools_called"] == ["days_between"]
    assert not second["web_search_called"] and not second["create_tool_called"]
    # the answers quote the numbers the sandboxed tool returned
    assert "60 days" in report.results[0].answer and "364 days" in report.results[1].answer
    # the temporary library is gone and the given home was never used
    assert not (tmp_path / "library.db").exists()
    kinds = {e.type for e in events}
    assert {"task_started", "tool_called", "tool_result", "model_usage", "final_answer", "task_finished"} <= kinds


def test_demo_offline_cli_prints_verdicts_and_writes_output(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = tmp_path / "out.json"
    proc = run_toolsmith(["demo", "--offline", "--output", str(out)], home)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gate verdict: PASS" in proc.stdout and "reuse verdict: PASS" in proc.stdout
    assert "self-test passed" in proc.stdout
    assert "days_between" in proc.stdout and "Traceback" not in proc.stderr
    data = json.loads(out.read_text())
    assert data["ok"] is True and data["mode"] == "offline"
    assert data["reuse_verdict"]["days"] == [60, 364]
    assert data["gate_verdict"]["refused"] is True
    assert [a["tool"] for a in data["trajectories"][1]] == ["search_tools", "days_between"]
    assert all(BROKEN_TOOL not in json.dumps(t) for t in data["results"])
    assert not (home / "library.db").exists(), "the offline self-test must not touch the user's library"


def test_demo_offline_json_mode_prints_one_event_per_line(tmp_path: Path) -> None:
    proc = run_toolsmith(["demo", "--offline", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert lines and all("type" in line for line in lines)
    assert [line["outcome"] for line in lines if line["type"] == "task_finished"] == ["evolved", "reused"]
