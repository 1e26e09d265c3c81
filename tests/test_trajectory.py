"""A trajectory file reads back as the very typed events the run emitted."""

from __future__ import annotations

import json
from pathlib import Path

from agent_helpers import evolve_script, rig
from toolsmith.agent.trajectory import TrajectoryWriter
from toolsmith.events import EventDecodeError, GuardFired, ToolResult, read_event
from toolsmith.redaction import Redactor


def test_a_real_runs_trajectory_round_trips_into_typed_events(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        writer = TrajectoryWriter(tmp_path / "trajectories", "s1", Redactor(()))
        for event in r.events:
            writer.event(event)
        writer.close()
    lines = [json.loads(line) for line in writer.path.read_text(encoding="utf-8").splitlines()]
    read = [read_event(line) for line in lines]
    assert read == r.events
    results = [e for e in read if isinstance(e, ToolResult)]
    assert {e.name for e in results} >= {"search_tools", "code_interpreter", "create_tool", "days_between"}
    stored = next(e for e in results if e.name == "days_between")
    assert stored.outcome.ok and stored.outcome.data["result"] == {"days": 60}


def test_a_line_that_is_not_an_event_is_refused_by_type() -> None:
    guard = GuardFired(task=0, step=1, guard="nudge", message="m").to_dict()
    assert read_event(guard) == GuardFired(task=0, step=1, guard="nudge", message="m", at=guard["at"])
    for broken in (
        {**guard, "type": "nope"},
        {**guard, "step": "one"},
        {k: v for k, v in guard.items() if k != "guard"},
    ):
        try:
            read_event(broken)
        except EventDecodeError:
            continue
        raise AssertionError(f"{broken} was read as an event")
