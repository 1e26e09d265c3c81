"""bench/realmodel/tally.py on a synthetic run: answers judged, calls against minimums, and
every refusal and reminder classified from a trajectory written by the real writer."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from toolsmith.agent.trajectory import TrajectoryWriter
from toolsmith.calls import Call, Outcome
from toolsmith.evals.checks import load_suite
from toolsmith.events import Event, GuardFired, GuardHook, ToolCalled, ToolResult
from toolsmith.redaction import Redactor

ROOT = Path(__file__).resolve().parent.parent


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"realmodel_{name}", ROOT / "bench" / "realmodel" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


tally = load("tally")
run = load("run")
DAY = {t.id: t for t in load_suite("day_of_use")}


def call(task: int, step: int, name: str, result: dict[str, Any], *guards: tuple[str, str, GuardHook]) -> list[Event]:
    """A tool call as the toolbox records it: called, any guards that fired, then the result."""
    fired = [GuardFired(task=task, step=step, guard=g, message=m, hook=h) for g, m, h in guards]
    call_id = f"c{task}{step}"
    return [
        ToolCalled(task=task, step=step, call=Call(name, {}, id=call_id)),
        *fired,
        ToolResult(task=task, step=step, call_id=call_id, name=name, outcome=Outcome.from_message(result), wall_s=0),
    ]


def result(index: int, task_id: str, answer: str, calls: int, created: list[str], used: list[str]) -> dict[str, Any]:
    return {
        "index": index,
        "task": DAY[task_id].input,
        "answer": answer,
        "model_calls": calls,
        "created": created,
        "prompt_chars": 1000,
        "reuse": {"library_tools_called": used},
    }


@pytest.fixture
def synthetic_run(tmp_path: Path) -> Path:
    writer = TrajectoryWriter(tmp_path / "traj", "s1", Redactor([]))
    events: list[Event] = [
        *call(0, 1, "create_tool", {"ok": False, "guard": "verify_before_create", "error": "run code first"},
              ("verify_before_create", "Run the code in code_interpreter first.", GuardHook.BEFORE_CALL)),
        *call(0, 2, "create_tool", {"ok": False, "check": "generality", "error": "The gate refused the tool"}),
        *call(0, 3, "create_tool", {"ok": True, "name": "count_workdays"}),
        *call(1, 1, "count_workdays", {"ok": True, "days": 22}),
        GuardFired(task=1, step=2, guard="grounding", message="The number 21 is in no tool result.", hook=GuardHook.BEFORE_ANSWER),
        *call(2, 1, "web_search", {"ok": False, "error": "offline"}, ("nudge", "Store a tool for this.", GuardHook.AFTER_RESULT)),
    ]  # fmt: skip
    for event in events:
        writer.event(event)
    writer.close()
    output = {
        "results": [
            result(0, "dou-01", "April 2026 has 20 working days.", 7, ["count_workdays@1"], ["count_workdays"]),
            result(1, "dou-02", "德国2026年12月有21个工作日。", 3, [], ["count_workdays"]),
            result(2, "dou-07", "I can't get live prices: no market data is reachable.", 2, [], []),
        ],
        "trajectory_file": str(writer.path),
        "suite": "day_of_use",
        "suite_ids": ["dou-01", "dou-02", "dou-07", "dou-03"],  # the run stopped before dou-03
    }
    path = tmp_path / "out.json"
    path.write_text(json.dumps(output, ensure_ascii=False), encoding="utf-8")
    return path


def test_rows_judge_answers_count_calls_and_classify_program_messages(synthetic_run: Path) -> None:
    rows = tally.tally(synthetic_run, spool=None, trajectory=None, suite=None)
    assert [(r.id, r.kind, r.right, r.calls, r.minimum) for r in rows] == [
        ("dou-01", "evolve", True, 7, 5),
        ("dou-02", "crosslang", False, 3, 2),
        ("dou-07", "impossible", True, 2, 2),
    ]
    assert rows[0].created == ["count_workdays"] and rows[0].reused == []
    assert rows[1].reused == ["count_workdays"]
    assert [(m.kind, m.source) for m in rows[0].messages] == [
        ("refusal", "verify_before_create"),
        ("gate", "gate:generality"),
    ]
    assert [(m.kind, m.source) for m in rows[1].messages] == [("reminder", "grounding")]
    assert [(m.kind, m.source) for m in rows[2].messages] == [("on-result", "nudge")]
    assert "22" in rows[1].reasons[0]  # the wrong answer says what was expected


def test_totals_and_markdown(synthetic_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = tally.tally(synthetic_run, spool=None, trajectory=None, suite=None)
    totals = tally.totals(rows)
    assert totals == {
        "tasks": 3, "right": 2, "calls": 12, "minimum": 9, "over_pct": 33.3, "refusals": 2, "reminders": 2,
    }  # fmt: skip
    md = tmp_path / "note.md"
    assert tally.main([str(synthetic_run), "--markdown", str(md), "--title", "before"]) == 0
    printed = capsys.readouterr().out
    assert "dou-02" in printed and "WRONG" in printed and "+33.3%" in printed
    text = md.read_text(encoding="utf-8")
    assert text.startswith("### before\n\n| id | kind | answer |")
    assert (
        "| dou-01 | evolve | right | 7 | 5 | 2 | count_workdays | - | verify_before_create, gate:generality |" in text
    )
    assert "- dou-03" not in text and "- dou-02: expected 22" in text
    assert "- dou-07 (on-result, nudge): Store a tool for this." in text


def test_the_spool_counts_requests_per_task(synthetic_run: Path, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    tasks = [DAY["dou-01"].input, DAY["dou-01"].input, DAY["dou-02"].input, "unrelated"]
    for n, task in enumerate(tasks, 1):
        body = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": task}], "tools": []}
        (spool / f"req-{n:04d}.json").write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    rows = tally.tally(synthetic_run, spool=spool, trajectory=None, suite=None)
    assert [r.rig_requests for r in rows] == [2, 1, 0]


def test_run_selects_tasks_and_builds_one_command(tmp_path: Path) -> None:
    tasks = load_suite("day_of_use")
    assert [t.id for t in run.select(tasks, first=14, ids=None)] == [f"dou-{i:02d}" for i in range(1, 15)]
    assert [t.id for t in run.select(tasks, first=None, ids=["dou-09", "dou-02"])] == ["dou-02", "dou-09"]
    with pytest.raises(SystemExit, match="unknown task ids: nope"):
        run.select(tasks, first=None, ids=["nope"])
    cmd = run.command(tasks[:2], tmp_path / "o.json", no_create=True, verbose=False)
    assert cmd[1:4] == ["-m", "toolsmith", "run"]
    assert cmd[4:6] == [tasks[0].input, tasks[1].input]
    assert cmd[6:] == ["--output", str(tmp_path / "o.json"), "--no-create"]
