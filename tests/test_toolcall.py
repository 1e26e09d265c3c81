"""The one door for calling a tool: arguments, the run, failure kinds, health, quarantine.

Two bugs this module fixed are pinned here: a model's stray argument, repeated, used to
quarantine a working tool on the agent path; and a sandbox that broke at run time made
the gate tell the model to fix working code (the ``tools test`` side of that bug is in
test_tools_health_cli.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import DAYS_CODE, DAYS_PARAMS, evolve_script, make_settings, rig
from runner_helpers import ScriptedRunner
from toolsmith.agent.context import WebAccess
from toolsmith.gate.core import Gate
from toolsmith.isolation import Blame, FailureKind, ToolCallResult
from toolsmith.isolation.bwrap import BwrapBackend
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.sandbox import Sandbox
from toolsmith.service.toolcall import call_stored_tool, prepare_arguments, undelivered
from toolsmith.testing import final, reply, tool_call

DAYS = ToolSpec(
    name="days_between",
    description="Count the days between two ISO dates.",
    parameters=DAYS_PARAMS,
    code=DAYS_CODE,
    test_args={"start": "2020-01-01", "end": "2020-03-01"},
)


def broken_bwrap(tmp_path: Path) -> BwrapBackend:
    """A bwrap that fails the way a real one does when user namespaces go away under it."""
    script = tmp_path / "bwrap"
    script.write_text('#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n')
    script.chmod(0o755)
    return BwrapBackend(str(script))


@pytest.fixture
def lib(tmp_path: Path) -> Iterator[ToolLibrary]:
    with ToolLibrary(tmp_path / "library.db") as library:
        library.add(DAYS, provenance=Provenance(), gate={"ok": True})
        yield library


def call(lib: ToolLibrary, runner: Any, args: dict[str, Any], **policy: Any) -> Any:
    policy.setdefault("quarantine_after", 2)
    return call_stored_tool(lib.get("days_between"), args, library=lib, runner=runner, actor="t", **policy)


# -- failure kinds ------------------------------------------------------------------------


def test_every_failure_kind_names_whose_fault_it_is() -> None:
    by_blame = {blame: {k.value for k in FailureKind if k.blame is blame} for blame in Blame}
    assert by_blame[Blame.CALLER] == {"bad_arguments", "unknown_tool", "not_active", "refused", "busy"}
    assert FailureKind.UNDELIVERED.blame is Blame.TOOL  # a result nobody received served nobody
    assert by_blame[Blame.MACHINE] == {"sandbox", "sandbox_unavailable", "install", "library_error", "agent_error"}
    assert {"exception", "import", "timeout", "killed", "not_json", "empty"} <= by_blame[Blame.TOOL]
    assert FailureKind.parse("made up by a tool") is FailureKind.EXCEPTION
    assert ToolCallResult(ok=False, error_type="install").error_type is FailureKind.INSTALL  # type: ignore[arg-type]
    assert ToolCallResult(ok=True).blame is None and ToolCallResult(ok=False).blame is Blame.TOOL


# -- arguments ----------------------------------------------------------------------------


def test_arguments_are_coerced_in_a_copy_and_checked_strictly() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    given = {"n": "7", "stray": True}
    coerced, problems = prepare_arguments(schema, given)
    assert coerced == {"n": 7, "stray": True} and given == {"n": "7", "stray": True}
    assert problems == ["unknown argument 'stray'"]
    assert prepare_arguments({**schema, "additionalProperties": True}, given)[1] == []


def test_bad_arguments_never_run_and_never_touch_health(lib: ToolLibrary) -> None:
    runner = ScriptedRunner()
    for _ in range(3):
        result = call(lib, runner, {"start": "2020-01-01", "end": "2020-03-01", "verbose": True})
        assert result.run.error_type is FailureKind.BAD_ARGUMENTS and not result.recorded
    assert "unknown argument 'verbose'" in str(result.run.error) and runner.calls == []
    tool = lib.get("days_between")
    assert tool.status is Status.ACTIVE and tool.stats.calls == 0


# -- health and quarantine ----------------------------------------------------------------


def test_the_tools_own_failures_count_and_quarantine_in_one_step(lib: ToolLibrary) -> None:
    boom = ToolCallResult(ok=False, error="run() raised ValueError: x", error_type=FailureKind.EXCEPTION)
    # the third run is the tool's own test, before quarantine: it fails too
    runner = ScriptedRunner(ToolCallResult(ok=True, value={"days": 60}), boom, boom, boom)
    first = call(lib, runner, {"start": "2020-01-01", "end": "2020-03-01"})
    assert first.run.ok and first.result().data["result"] == {"days": 60} and first.recorded
    call(lib, runner, {"start": "2020-01-01", "end": "2020-03-01"})
    last = call(lib, runner, {"start": "2020-01-01", "end": "2020-03-01"})
    assert last.quarantined and last.result().data["quarantined"] is True
    assert last.result().failure is FailureKind.EXCEPTION
    tool = lib.get("days_between")
    assert tool.status is Status.QUARANTINED and (tool.stats.calls, tool.stats.failures) == (3, 2)
    assert runner.calls[-1].args == tool.spec.test_args  # the own test ran before the quarantine


def test_failures_from_callers_inputs_keep_a_tool_whose_own_tests_pass(lib: ToolLibrary) -> None:
    """Issue 18 §7: 'yesterday' is not an ISO date. The tool raises, but its own test still
    passes, so the failures were the callers': it stays, says so, and its count starts again."""
    boom = ToolCallResult(
        ok=False,
        error="run() raised ValueError: Invalid isoformat string: 'yesterday'",
        error_type=FailureKind.EXCEPTION,
    )
    runner = ScriptedRunner(boom, boom, ToolCallResult(ok=True, value={"days": 60}))
    call(lib, runner, {"start": "yesterday", "end": "2020-03-01"})
    last = call(lib, runner, {"start": "yesterday", "end": "2020-03-01"})
    assert not last.quarantined and last.kept_after == 2
    message = last.result().to_message()
    assert "own tests still pass" in message["hint"] and "quarantined" not in message
    tool = lib.get("days_between")
    assert tool.status is Status.ACTIVE and (tool.stats.failures, tool.stats.consecutive_failures) == (2, 0)
    kept = [e for e in lib.audit_log("days_between") if e.action == "kept"]
    assert len(kept) == 1 and "callers' inputs" in (kept[0].reason or "")


# -- delivery: a success whose result never reached the caller becomes a failure ----------

DAYS_ARGS = {"start": "2020-01-01", "end": "2020-03-01"}
LOST = "the result was not delivered: the client left"


def lose(lib: ToolLibrary, runner: Any, first: Any, **policy: Any) -> Any:
    policy.setdefault("quarantine_after", 2)
    return undelivered(first, LOST, library=lib, runner=runner, actor="t", **policy)


def test_an_undelivered_success_becomes_the_tools_failure(lib: ToolLibrary) -> None:
    runner = ScriptedRunner.returning({"days": 60})
    done = call(lib, runner, DAYS_ARGS)
    assert done.run.ok and lib.get("days_between").stats.calls == 1
    lost = lose(lib, runner, done)
    assert not lost.run.ok and lost.run.error_type is FailureKind.UNDELIVERED and lost.recorded
    assert lost.result().to_message()["error_type"] == "undelivered"
    stats = lib.get("days_between").stats
    assert (stats.calls, stats.failures, stats.consecutive_failures) == (1, 1, 1)
    assert stats.last_error == LOST
    with pytest.raises(ValueError, match="only a success"):
        lose(lib, runner, lost)


def test_undelivered_results_quarantine_by_policy(lib: ToolLibrary) -> None:
    """Kept while its own tests pass (the clients keep leaving); quarantined when they fail too."""
    ok = ToolCallResult(ok=True, value={"days": 60})
    boom = ToolCallResult(ok=False, error="run() raised ValueError: x", error_type=FailureKind.EXCEPTION)
    runner = ScriptedRunner(ok, ok, ok)  # two calls, then the own test run at the second failure
    lose(lib, runner, call(lib, runner, DAYS_ARGS))
    kept = lose(lib, runner, call(lib, runner, DAYS_ARGS))
    assert not kept.quarantined and kept.kept_after == 2
    assert lib.get("days_between").status is Status.ACTIVE
    runner = ScriptedRunner(ok, ok, boom)
    lose(lib, runner, call(lib, runner, DAYS_ARGS))
    gone = lose(lib, runner, call(lib, runner, DAYS_ARGS))
    assert gone.quarantined and lib.get("days_between").status is Status.QUARANTINED


@pytest.mark.parametrize("kind", [FailureKind.SANDBOX, FailureKind.INSTALL])
def test_machine_failures_are_neither_recorded_nor_quarantined(lib: ToolLibrary, kind: FailureKind) -> None:
    runner = ScriptedRunner(*[ToolCallResult(ok=False, error="machine", error_type=kind)] * 3)
    for _ in range(3):
        result = call(lib, runner, {"start": "2020-01-01", "end": "2020-03-01"}, quarantine_after=1)
        assert not result.quarantined and not result.recorded
    tool = lib.get("days_between")
    assert tool.status is Status.ACTIVE and tool.stats.calls == 0


def test_a_sandbox_that_breaks_at_run_time_is_the_machines_fault(lib: ToolLibrary, tmp_path: Path) -> None:
    sandbox = Sandbox(make_settings(tmp_path / "home"), backend=broken_bwrap(tmp_path))
    result = call(lib, sandbox, {"start": "2020-01-01", "end": "2020-03-01"}, quarantine_after=1)
    assert result.run.error_type is FailureKind.SANDBOX and result.run.blame is Blame.MACHINE
    assert "uid map" in str(result.run.error)
    assert lib.get("days_between").status is Status.ACTIVE and lib.get("days_between").stats.calls == 0


def test_the_gate_does_not_blame_the_code_for_a_broken_sandbox(tmp_path: Path) -> None:
    sandbox = Sandbox(make_settings(tmp_path / "home"), backend=broken_bwrap(tmp_path))
    report = Gate(runner=sandbox).check(DAYS)
    reason = report.reason or ""
    assert report.failed == "test_run" and "not a fault of the code" in reason and "uid map" in reason
    assert "Fix the code" not in reason


# -- the agent path -----------------------------------------------------------------------


def test_a_stray_argument_repeated_does_not_quarantine_a_working_tool(tmp_path: Path) -> None:
    stray = {"start": "2021-01-01", "end": "2021-12-31", "verbose": True}
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        calls_before = r.library.get("days_between").stats.calls
        r.events.clear()
        r.model.add(*[reply(tool_call("days_between", stray)) for _ in range(3)], final("I could not call it."))
        r.agent().run_task("days between 2021-01-01 and 2021-12-31", index=1)
        results = [e for e in r.of_type("tool_result") if e.name == "days_between"]
        assert len(results) == 3 and all(e.message["error_type"] == "bad_arguments" for e in results)
        assert "unknown argument 'verbose'" in results[0].message["error"] and "repair" not in results[0].message
        tool = r.library.get("days_between")
        assert tool.status is Status.ACTIVE and tool.stats.calls == calls_before
        assert r.guards() == ["repeat"]  # the model is told to stop; the tool is not blamed


def test_the_toolbox_passes_coerced_arguments_and_keeps_the_models(tmp_path: Path) -> None:
    asked: list[Any] = []

    class Web:
        def access(self) -> WebAccess:
            return WebAccess(search=lambda q, n: asked.append(n) or {"ok": True, "results": []}, read=lambda u: {})

    with rig(tmp_path) as r:
        r.web = Web()  # type: ignore[assignment]
        r.model.add(reply(tool_call("web_search", {"query": "dates", "num_results": "3"})), final("done"))
        r.agent(guards=[]).run_task("anything")
        assert asked == [3]  # the meta-tool got the number the schema asks for
        called = r.of_type("tool_called")[-1]
        assert called.call.arguments == {"query": "dates", "num_results": "3"}  # the record keeps what was sent


def test_a_large_result_is_summarised_from_its_first_characters_only() -> None:
    from toolsmith.calls import preview

    big = {"rows": [{"i": i, "text": "x" * 50} for i in range(50_000)]}
    line = preview(big)
    assert line.startswith('{"rows": [{"i": 0') and line.endswith("…") and len(line) == 160
    assert preview({"days": 60}) == '{"days": 60}'
