"""``verify_before_create``: no ``create_tool`` until a ``code_interpreter`` run in the same
task has printed real output."""

from __future__ import annotations

from typing import ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Guard
from toolsmith.calls import Call


class VerifyBeforeCreate(Guard[None]):
    name: ClassVar[str] = "verify_before_create"

    def before_call(self, ctx: TaskContext, call: Call) -> str | None:
        if call.name != "create_tool" or not ctx.allow_create or ctx.verified:
            return None
        return (
            "create_tool refused: no code_interpreter run in this task has yet printed real output and "
            "exited cleanly (exit code 0). Run the library for real with code_interpreter, print its data, "
            "and let the run finish without an error."
        )
