"""Reading trajectories back for the Runs pages, and drawing charts, from damaged or odd input."""

from __future__ import annotations

import json
from pathlib import Path

from toolsmith.ui import charts, runs


def _write(path: Path, *records: object, extra: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + extra, encoding="utf-8")
    return path


def test_a_damaged_unfinished_run_is_read_as_far_as_it_goes(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "20260101T000000Z-abc.jsonl",
        {"record": "event", "type": "task_started", "task": 0, "at": 1.0, "text": "t1", "session_id": "abc"},
        {"record": "event", "type": "model_usage", "task": 0, "step": 1, "total_tokens": 10, "cost": 0.5},
        {"record": "event", "type": "tool_called", "task": 0, "step": 1, "call_id": "c1", "name": "f", "arguments": {}},
        {"record": "event", "type": "tool_result", "task": 0, "step": 1, "call_id": "c2", "name": "g", "ok": False},
        {"record": "event", "type": "model_usage", "task": 0, "step": 2, "total_tokens": "lots", "cost": "n/a"},
        [1, 2],
        extra='{"record": "event", "type": "tool_res',  # cut off mid-write
    )
    run = runs.read_run(path)
    assert run.session_id == "abc" and run.damaged_lines == 2 and len(run.tasks) == 1
    task = run.tasks[0]
    assert task.status == "unfinished" and task.outcome == "unfinished" and task.answer is None
    step = task.steps[1]
    assert [(t.name, t.ok) for t in step.tools] == [("f", None), ("g", False)]  # the orphan result is kept
    assert task.model_calls == 2 and task.cost == 0.5


def test_only_plain_trajectory_names_in_the_directory(tmp_path: Path) -> None:
    good = _write(tmp_path / "20260101T000000Z-a.jsonl")
    _write(tmp_path / "notes.txt")
    (tmp_path / "20260102T000000Z-link.jsonl").symlink_to(good)
    assert runs.run_files(tmp_path) == [good]
    assert runs.run_path(tmp_path, "../20260101T000000Z-a.jsonl") is None
    assert runs.run_path(tmp_path, "20260102T000000Z-link.jsonl") is None
    assert runs.run_files(tmp_path / "missing") == []


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    store = runs.RunStore(tmp_path)
    path = _write(
        tmp_path / "20260101T000000Z-a.jsonl", {"record": "event", "type": "task_started", "task": 0, "text": "one"}
    )
    assert [t.text for t in store.all()[0].tasks] == ["one"]
    _write(path, {"record": "event", "type": "task_started", "task": 0, "text": "one, edited"})
    assert [t.text for t in store.all()[0].tasks] == ["one, edited"]
    path.unlink()
    assert store.all() == [] and store.get(path.name) is None


def test_charts_escape_labels_and_say_when_empty() -> None:
    svg = charts.bar_chart("<b>t</b>", ["<script>"], [charts.Series("s<", [3.0])])
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "&lt;b&gt;" in svg
    assert "no data yet" in charts.line_chart("calls", [], [])
    line = charts.line_chart("x", ["a", "b", "c"], [charts.Series("n", [1.0, None, 7.0])])
    assert line.count("<circle") == 2 and ">8<" in line  # a gap for None; the axis rounds 7 up to 8


def test_estimated_token_counts_are_marked_on_the_run_page(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "20260101T000000Z-abc.jsonl",
        {"record": "event", "type": "task_started", "task": 0, "text": "t1", "session_id": "abc"},
        {"record": "event", "type": "model_usage", "task": 0, "step": 1, "total_tokens": 10, "estimated": True},
        {"record": "event", "type": "model_usage", "task": 0, "step": 2, "total_tokens": 5},
    )
    task = runs.read_run(path).tasks[0]
    assert task.tokens == 15 and task.tokens_estimated
    plain = _write(
        tmp_path / "20260101T000001Z-abd.jsonl",
        {"record": "event", "type": "task_started", "task": 0, "text": "t1", "session_id": "abd"},
        {"record": "event", "type": "model_usage", "task": 0, "step": 1, "total_tokens": 10},
    )
    assert not runs.read_run(plain).tasks[0].tokens_estimated
