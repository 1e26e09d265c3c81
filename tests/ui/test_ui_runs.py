"""Reading trajectories back for the Runs pages, and drawing charts, from damaged or odd input."""

from __future__ import annotations

import json
from pathlib import Path

from toolsmith.calls import Call, Note, NoteKind, Origin, Outcome
from toolsmith.events import (
    Event,
    GuardFired,
    GuardHook,
    ModelUsage,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolResult,
    read_event,
)
from toolsmith.ui import charts, runs


def _write(path: Path, *records: object, extra: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + extra, encoding="utf-8")
    return path


def _event(event: Event) -> dict[str, object]:
    return {"record": "event", **event.to_dict()}


def _usage(step: int, tokens: int, *, cost: float | None = None, estimated: bool = False) -> dict[str, object]:
    usage = ModelUsage(
        task=0,
        step=step,
        model="m",
        prompt_tokens=tokens,
        completion_tokens=0,
        total_tokens=tokens,
        cost=cost,
        wall_s=0.1,
        prompt_chars=4 * tokens,
        estimated=estimated,
    )
    return _event(usage)


def _started(text: str, session: str = "abc") -> dict[str, object]:
    return _event(TaskStarted(task=0, text=text, session_id=session, at=1.0))


def test_a_damaged_unfinished_run_is_read_as_far_as_it_goes(tmp_path: Path) -> None:
    bad_usage = {**_usage(2, 5), "total_tokens": "lots"}  # a field of the wrong type is damage too
    path = _write(
        tmp_path / "20260101T000000Z-abc.jsonl",
        _started("t1"),
        _usage(1, 10, cost=0.5),
        _event(ToolCalled(task=0, step=1, call=Call("f", {}, id="c1"))),
        _event(ToolResult(task=0, step=1, call_id="c2", name="g", outcome=Outcome.failed("boom"), wall_s=0.1)),
        bad_usage,
        {"record": "event", "type": "no_such_event", "task": 0},
        [1, 2],
        extra='{"record": "event", "type": "tool_res',  # cut off mid-write
    )
    run = runs.read_run(path)
    assert run.session_id == "abc" and run.damaged_lines == 4 and len(run.tasks) == 1
    task = run.tasks[0]
    assert task.status == "unfinished" and task.outcome == "unfinished" and task.answer is None
    step = task.steps[1]
    assert [(t.name, t.ok) for t in step.tools] == [("f", None), ("g", False)]  # the orphan result is kept
    assert step.tools[1].outcome is not None and step.tools[1].outcome.error == "boom"
    assert task.model_calls == 1 and task.cost == 0.5


def test_a_trajectory_reads_back_as_the_typed_events_it_recorded(tmp_path: Path) -> None:
    call = Call("days_between", {"start": "2020-01-01"}, id="c1", origin=Origin.PROGRAM)
    outcome = Outcome.success({"result": {"days": 60}}, summary="60").noted(Note(NoteKind.BUDGET, "one call left"))
    events: list[Event] = [
        TaskStarted(task=0, text="t", session_id="s", at=1.0),
        ToolCalled(task=0, step=1, call=call, library=True, at=2.0),
        ToolResult(task=0, step=1, call_id="c1", name="days_between", outcome=outcome, wall_s=0.25, at=3.0),
        GuardFired(task=0, step=1, guard="nudge", message="m", hook=GuardHook.BEFORE_ANSWER, at=4.0),
        TaskFinished(
            task=0,
            status="answered",
            steps=1,
            model_calls=2,
            total_tokens=9,
            cost=None,
            wall_s=1.0,
            outcome="reused",
            at=5.0,
        ),
    ]
    for event in events:
        assert read_event(json.loads(json.dumps(event.to_dict()))) == event
    path = _write(tmp_path / "20260101T000000Z-s.jsonl", *(_event(e) for e in events))
    step = runs.read_run(path).tasks[0].steps[1]
    assert step.tools[0].call == call and step.tools[0].outcome == outcome
    assert step.guards == [events[3]]


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
    path = _write(tmp_path / "20260101T000000Z-a.jsonl", _started("one"))
    assert [t.text for t in store.all()[0].tasks] == ["one"]
    _write(path, _started("one, edited"))
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
    path = _write(tmp_path / "20260101T000000Z-abc.jsonl", _started("t1"), _usage(1, 10, estimated=True), _usage(2, 5))
    task = runs.read_run(path).tasks[0]
    assert task.tokens == 15 and task.tokens_estimated
    plain = _write(tmp_path / "20260101T000001Z-abd.jsonl", _started("t1", "abd"), _usage(1, 10))
    assert not runs.read_run(plain).tasks[0].tokens_estimated
