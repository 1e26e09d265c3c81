"""``verify_before_create``: no ``create_tool`` until a ``code_interpreter`` run in the same
task has printed real output.

A clean run that printed data verifies. So does a run that printed data and then failed on
a later line, when the new tool's own tests expect a value that run printed: models explore
a library in one script, and the line after the answer is often the one that fails (an
unknown unit name after the conversion was printed). The tests tie the tool to that output,
and the gate runs them before anything is stored.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar, cast

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Guard
from toolsmith.calls import Call, JSONValue
from toolsmith.gate.verification import backs
from toolsmith.library import testcases as tooltests

REFUSAL = (
    "create_tool refused: no code_interpreter run in this task has yet printed real output and "
    "exited cleanly (exit code 0). Run the library for real with code_interpreter, print its data, "
    "and let the run finish without an error."
)
AFTER_A_FAILED_RUN = (
    " A run that printed its data and then failed also counts when a test case of this "
    "create_tool expects a value that run printed."
)


class VerifyBeforeCreate(Guard[None]):
    name: ClassVar[str] = "verify_before_create"

    def before_call(self, ctx: TaskContext, call: Call) -> str | None:
        if call.name != "create_tool" or not ctx.allow_create or ctx.verified:
            return None
        if not ctx.failed_run_data:
            return REFUSAL
        expected = list(tested_values(call.args))
        if any(backs(printed, expected) for printed in ctx.failed_run_data):
            return None
        return REFUSAL + AFTER_A_FAILED_RUN


def tested_values(args: Mapping[str, object]) -> Iterator[object]:
    """The values the call's test cases expect, less those that only echo the case's arguments."""
    try:
        cases, _ = tooltests.read_cases(args.get("tests"), _parameters(args))
    except ValueError:  # the gate says what is wrong with them; here they back nothing
        return
    for case in cases:
        given = set(map(_key, tooltests.leaves(case["args"])))
        for part in (case.get("expect"), case.get("contains")):
            yield from (v for v in tooltests.leaves(part) if v is not None and _key(v) not in given)


def _parameters(args: Mapping[str, object]) -> Mapping[str, JSONValue] | None:
    parameters = args.get("parameters")
    return cast("Mapping[str, JSONValue]", parameters) if isinstance(parameters, dict) else None


def _key(value: object) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"number:{float(value)}"  # 85 given, 85.0 expected: an echo all the same
    return f"{type(value).__name__}:{value}"
