"""One door for calling a tool's code: the agent, the MCP server, ``tools test`` and the gate.

Whoever calls, a call goes the same way, so a tool is judged the same wherever it runs:

1. **arguments**: coerced where a model's encoding is unambiguous (a number sent as
   text), in a copy, so the caller's dict is never changed; then checked strictly,
   undeclared arguments included. A mismatch is the caller's fault: the tool does not
   run, and its health is not touched;
2. **the run**: :func:`execute` is the one seam for *how* a tool's code is executed
   (today a fresh sandbox process per call, through a
   :class:`~toolsmith.isolation.ToolRunner`);
3. **the outcome**: a :class:`~toolsmith.isolation.result.FailureKind`, whose
   :class:`~toolsmith.isolation.result.Blame` decides what happens next;
4. **health**: a run that says something about the tool (not the machine's failure,
   not the caller's) is recorded as a call of that version;
5. **quarantine**: when a caller's policy says so, in the same transaction as that
   record (:meth:`~toolsmith.library.ToolLibrary.record_call_and_quarantine`);
6. **after a quarantine**: the caller's ``on_quarantine`` hook, if any (the rollback of
   :mod:`toolsmith.service.rollback` serves the parent again when it still passes its tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from toolsmith.calls import Blame, FailureKind, JSONObject, JSONValue, Note, NoteKind, Outcome, preview
from toolsmith.isolation import Priority, ToolCallResult
from toolsmith.library import ToolLibrary, ToolVersion, UsageStats
from toolsmith.library import testcases as tooltests
from toolsmith.library.models import ToolSpec
from toolsmith.library.schema import argument_problems, coerce_arguments
from toolsmith.library.testcases import ToolCase
from toolsmith.sandbox import ToolRunner

TRACEBACK_CHARS = 1500  # the tail of a traceback that a payload carries


def prepare_arguments(schema: Mapping[str, JSONValue], args: Mapping[str, JSONValue]) -> tuple[JSONObject, list[str]]:
    """The arguments as the tool will get them (coerced, in a new dict) and their problems."""
    coerced = coerce_arguments(schema, args)
    return coerced, argument_problems(schema, coerced, strict=True)


def execute(
    runner: ToolRunner, spec: ToolSpec, args: JSONObject, *, warm: bool = False, priority: Priority = Priority.NORMAL
) -> ToolCallResult:
    """Run ``run(**args)`` of ``spec``'s code: the one place that decides how a tool is executed.

    ``warm`` asks for a warm worker (:mod:`toolsmith.isolation.warm`), which serves a
    stored tool; a tool not stored yet (the gate's trial) runs cold. ``priority`` is the
    run's share of the CPU (:class:`~toolsmith.limits.Priority`).
    A sandbox that cannot be had at all (:class:`~toolsmith.errors.SandboxUnavailableError`)
    raises: the user must fix the machine or the setting, and each caller reports that
    its own way.
    """
    return runner.call_tool(spec.code, args, requirements=spec.requirements, warm=warm, priority=priority)


def require_value(result: ToolCallResult) -> ToolCallResult:
    """A test run must return data: ``None`` or an empty value verifies nothing."""
    if result.ok and (result.value is None or result.value in ({}, [], "")):
        return ToolCallResult(
            ok=False,
            value=result.value,
            error=f"run(**test_args) returned {result.value!r}, which verifies nothing",
            error_type=FailureKind.EMPTY,
            exec=result.exec,
            installed=result.installed,
        )
    return result


def trial_run(runner: ToolRunner, spec: ToolSpec) -> ToolCallResult:
    """The gate's run of a tool not stored yet: ``run(**test_args)``, which must return data."""
    return require_value(execute(runner, spec, spec.test_args))


@dataclass(frozen=True)
class StoredCall:
    """One call of a stored tool version and what it did to the tool's health."""

    tool: ToolVersion
    run: ToolCallResult
    stats: UsageStats
    latency_ms: float
    quarantined: bool = False
    kept_after: int = 0  # failures in a row after which the tool's own tests passed, so it stayed
    rolled_back_to: int | None = None  # the version served again after this call's quarantine

    @property
    def recorded(self) -> bool:
        """Whether the call counted towards the tool's health (only the tool's own outcomes do)."""
        return self.run.blame in (None, Blame.TOOL)

    def result(self) -> Outcome:
        """The call as a model or an MCP client gets it: the value with its source, or why not."""
        run, tool = self.run, self.tool
        data: JSONObject = {"tool": tool.name, "version": tool.version}
        if run.ok:
            data.update(result=run.value, source=source_line(tool))
            return Outcome.success(data, summary=preview(run.value))
        data["source"] = source_line(tool)
        if run.traceback:
            data["traceback"] = run.traceback[-TRACEBACK_CHARS:]
        if self.quarantined:
            data["quarantined"] = True
        if self.rolled_back_to is not None:
            data["now_served"] = f"{tool.name}@{self.rolled_back_to}"
        notes: tuple[Note, ...] = ()
        if self.kept_after:
            notes = (
                Note(
                    NoteKind.HINT,
                    f"{tool.name} failed {self.kept_after} times in a row, but its own tests still pass, so it "
                    "stays in service: the failures came from the arguments it was given. Check them against "
                    "its parameters and description.",
                ),
            )
        kind = run.error_type or FailureKind.EXCEPTION
        return Outcome.failed(run.error or "the tool failed", kind, data=data, notes=notes)


# What a caller runs after one of its calls quarantined a version (see call_stored_tool).
QuarantineHook = Callable[[StoredCall], StoredCall]


def call_stored_tool(
    tool: ToolVersion,
    args: JSONObject,
    *,
    library: ToolLibrary,
    runner: ToolRunner,
    actor: str,
    quarantine_after: int | None,
    require_data: bool = False,
    reason: str | None = None,
    warm: bool = False,
    priority: Priority = Priority.NORMAL,
    on_quarantine: QuarantineHook | None = None,
) -> StoredCall:
    """Check the arguments, run the tool, record its health, and quarantine by policy.

    ``quarantine_after`` is how many of the tool's own failures in a row quarantine an
    active version (``None``: this caller never quarantines). Before it does, the tool's
    own tests run: when they pass, the failures were the callers' inputs, and the tool is
    kept (see :func:`record`). ``require_data`` makes an empty value a failure, as in a
    test run, which is then itself the tool's test and quarantines at once by policy.
    ``reason`` replaces the audit reason of a quarantine. A failure that is the caller's or
    the machine's leaves the health record alone, whatever the policy. ``warm`` and
    ``priority``: see :func:`execute`. ``on_quarantine`` runs after this call quarantined the version (a
    rollback, say), and its answer is returned.
    """
    coerced, problems = prepare_arguments(tool.spec.parameters, args)
    if problems:
        refused = ToolCallResult(
            ok=False,
            error=f"Bad arguments for {tool.name}: {'; '.join(problems)}.",
            error_type=FailureKind.BAD_ARGUMENTS,
        )
        return StoredCall(tool=tool, run=refused, stats=tool.stats, latency_ms=0.0)
    started = time.monotonic()
    outcome = execute(runner, tool.spec, coerced, warm=warm, priority=priority)
    latency_ms = (time.monotonic() - started) * 1000
    if require_data:
        outcome = require_value(outcome)
    if outcome.blame not in (None, Blame.TOOL):
        # The machine could not run the tool (no sandbox, packages not installable): that
        # says nothing about the tool, so its health record is left alone.
        return StoredCall(tool=tool, run=outcome, stats=tool.stats, latency_ms=latency_ms)
    call = StoredCall(tool=tool, run=outcome, stats=tool.stats, latency_ms=latency_ms)
    audit_reason = f"{reason}: {outcome.error}" if reason else None
    if require_data:  # a test run: its failure is the tool's own tests failing
        stats, quarantined = library.record_call_and_quarantine(
            tool.name,
            tool.version,
            ok=outcome.ok,
            latency_ms=latency_ms,
            error=outcome.error,
            quarantine_after=quarantine_after,
            actor=actor,
            reason=audit_reason,
        )
        call = replace(call, stats=stats, quarantined=quarantined)
    else:
        call = record(call, library=library, runner=runner, actor=actor, quarantine_after=quarantine_after)
    return on_quarantine(call) if call.quarantined and on_quarantine is not None else call


def undelivered(
    call: StoredCall,
    why: str,
    *,
    library: ToolLibrary,
    runner: ToolRunner,
    actor: str,
    quarantine_after: int | None,
    on_quarantine: QuarantineHook | None = None,
) -> StoredCall:
    """A recorded success whose result never reached the caller: it becomes the tool's failure.

    ``why`` says what happened (the client went away, the call was cancelled). A result
    nobody received served nobody, and a tool whose results keep failing to arrive must
    show it in its health like any other failure, under the same quarantine policy.
    """
    if not call.run.ok:
        raise ValueError(f"{call.tool.ref}: only a success can turn out undelivered")
    tool = call.tool
    # The streak as this call found it: its success reset it, and its failure continues it.
    stats = library.record_undelivered(
        tool.name, tool.version, error=why, streak_before=tool.stats.consecutive_failures
    )
    failed = replace(call, run=replace(call.run, ok=False, error=why, error_type=FailureKind.UNDELIVERED))
    failed = apply_policy(failed, stats, library=library, runner=runner, actor=actor, quarantine_after=quarantine_after)
    return on_quarantine(failed) if failed.quarantined and on_quarantine is not None else failed


def record(
    call: StoredCall, *, library: ToolLibrary, runner: ToolRunner, actor: str, quarantine_after: int | None
) -> StoredCall:
    """Record a call's health; at ``quarantine_after`` failures in a row, the tool's own
    tests decide: failing, it is quarantined; passing, the failures were the callers'
    inputs (a correct ``days_between`` called with ``start="yesterday"``), so it is kept,
    its count starts again and the caller is told. A bad argument must not take a good
    tool away from every client of a team library."""
    tool, run = call.tool, call.run
    stats = library.record_call(tool.name, tool.version, ok=run.ok, latency_ms=call.latency_ms, error=run.error)
    return apply_policy(call, stats, library=library, runner=runner, actor=actor, quarantine_after=quarantine_after)


def apply_policy(
    call: StoredCall,
    stats: UsageStats,
    *,
    library: ToolLibrary,
    runner: ToolRunner,
    actor: str,
    quarantine_after: int | None,
) -> StoredCall:
    """The quarantine policy after ``call`` was recorded with these ``stats`` (see :func:`record`)."""
    tool, run = call.tool, call.run
    if run.ok or quarantine_after is None or stats.consecutive_failures < quarantine_after:
        return replace(call, stats=stats)
    if own_tests_pass(runner, tool.spec):
        failures = stats.consecutive_failures
        why = f"{failures} failures in a row, but its own tests pass: the callers' inputs failed (last: {run.error})"
        library.keep_after_caller_failures(tool.name, tool.version, failures=failures, actor=actor, reason=why)
        return replace(call, stats=replace(stats, consecutive_failures=0), kept_after=failures)
    quarantined = library.quarantine_failing(tool.name, tool.version, stats=stats, error=run.error, actor=actor)
    return replace(call, stats=stats, quarantined=quarantined)


def own_tests_pass(runner: ToolRunner, spec: ToolSpec) -> bool:
    """Whether ``spec``'s test run and every stored test case still give what they should.
    A sandbox that cannot run them proves nothing, so that counts as not passing."""
    cases: list[tuple[JSONObject, ToolCase | None]] = [(dict(spec.test_args), None)]
    cases += [(dict(case["args"]), case) for case in spec.tests]
    for args, case in cases:
        run = require_value(execute(runner, spec, args, warm=True))
        if not run.ok or (case is not None and tooltests.problem(case, run.value) is not None):
            return False
    return True


def source_line(tool: ToolVersion) -> str:
    """Where a stored tool's answer comes from, for the model to cite."""
    parts = [f"library tool {tool.ref}"]
    packages = ", ".join(r.pin for r in tool.spec.requirements[:5])
    if packages:
        parts.append(f"packages {packages}")
    sources = ", ".join(tool.provenance.sources[:3])
    if sources:
        parts.append(f"docs {sources}")
    return "; ".join(parts)
