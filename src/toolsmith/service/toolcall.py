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

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolsmith.calls import Blame, FailureKind, Outcome
from toolsmith.isolation import ToolCallResult
from toolsmith.library import ToolLibrary, ToolVersion, UsageStats
from toolsmith.library.models import ToolSpec
from toolsmith.library.schema import argument_problems, coerce_arguments
from toolsmith.sandbox import ToolRunner

TRACEBACK_CHARS = 1500  # the tail of a traceback that a payload carries


def prepare_arguments(schema: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The arguments as the tool will get them (coerced, in a new dict) and their problems."""
    coerced = coerce_arguments(schema, args)
    return coerced, argument_problems(schema, coerced, strict=True)


def execute(runner: ToolRunner, spec: ToolSpec, args: dict[str, Any], *, warm: bool = False) -> ToolCallResult:
    """Run ``run(**args)`` of ``spec``'s code: the one place that decides how a tool is executed.

    ``warm`` asks for a warm worker (:mod:`toolsmith.isolation.warm`), which serves a
    stored tool; a tool not stored yet (the gate's trial) runs cold.
    A sandbox that cannot be had at all (:class:`~toolsmith.errors.SandboxUnavailableError`)
    raises: the user must fix the machine or the setting, and each caller reports that
    its own way.
    """
    return runner.call_tool(spec.code, args, requirements=spec.requirements, warm=warm)


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
    rolled_back_to: int | None = None  # the version served again after this call's quarantine

    @property
    def recorded(self) -> bool:
        """Whether the call counted towards the tool's health (only the tool's own outcomes do)."""
        return self.run.blame in (None, Blame.TOOL)

    def result(self) -> Outcome:
        """The call as a model or an MCP client gets it: the value with its source, or why not."""
        run, tool = self.run, self.tool
        data: dict[str, Any] = {"tool": tool.name, "version": tool.version}
        if run.ok:
            data.update(result=run.value, source=source_line(tool))
            return Outcome.success(data, summary=json.dumps(run.value, ensure_ascii=False, default=str))
        data["source"] = source_line(tool)
        if run.traceback:
            data["traceback"] = run.traceback[-TRACEBACK_CHARS:]
        if self.quarantined:
            data["quarantined"] = True
        if self.rolled_back_to is not None:
            data["now_served"] = f"{tool.name}@{self.rolled_back_to}"
        return Outcome.failed(run.error or "the tool failed", run.error_type or FailureKind.EXCEPTION, data=data)


# What a caller runs after one of its calls quarantined a version (see call_stored_tool).
QuarantineHook = Callable[[StoredCall], StoredCall]


def call_stored_tool(
    tool: ToolVersion,
    args: dict[str, Any],
    *,
    library: ToolLibrary,
    runner: ToolRunner,
    actor: str,
    quarantine_after: int | None,
    require_data: bool = False,
    reason: str | None = None,
    warm: bool = False,
    on_quarantine: QuarantineHook | None = None,
) -> StoredCall:
    """Check the arguments, run the tool, record its health, and quarantine by policy.

    ``quarantine_after`` is how many of the tool's own failures in a row quarantine an
    active version (``None``: this caller never quarantines). ``require_data`` makes an
    empty value a failure, as in a test run. ``reason`` replaces the audit reason of a
    quarantine. A failure that is the caller's or the machine's leaves the health
    record alone, whatever the policy. ``warm``: see :func:`execute`. ``on_quarantine``
    runs after this call quarantined the version, and its answer is returned.
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
    outcome = execute(runner, tool.spec, coerced, warm=warm)
    latency_ms = (time.monotonic() - started) * 1000
    if require_data:
        outcome = require_value(outcome)
    if outcome.blame not in (None, Blame.TOOL):
        # The machine could not run the tool (no sandbox, packages not installable): that
        # says nothing about the tool, so its health record is left alone.
        return StoredCall(tool=tool, run=outcome, stats=tool.stats, latency_ms=latency_ms)
    stats, quarantined = library.record_call_and_quarantine(
        tool.name,
        tool.version,
        ok=outcome.ok,
        latency_ms=latency_ms,
        error=outcome.error,
        quarantine_after=quarantine_after,
        actor=actor,
        reason=f"{reason}: {outcome.error}" if reason else None,
    )
    call = StoredCall(tool=tool, run=outcome, stats=stats, latency_ms=latency_ms, quarantined=quarantined)
    return on_quarantine(call) if quarantined and on_quarantine is not None else call


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
