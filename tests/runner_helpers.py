"""A stand-in for the sandbox's tool runner: prepared results, and a record of each call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolsmith.isolation import Priority, ToolCallResult
from toolsmith.packages.requirement import Requirement


@dataclass(frozen=True)
class RunnerCall:
    code: str
    args: dict[str, Any]
    requirements: tuple[Requirement, ...]
    warm: bool = False
    priority: Priority = Priority.NORMAL


class ScriptedRunner:
    """Implements :class:`toolsmith.sandbox.ToolRunner` whole (warm calls too); each call takes the next result."""

    def __init__(self, *results: ToolCallResult) -> None:
        self.results = list(results)
        self.calls: list[RunnerCall] = []

    @classmethod
    def returning(cls, *values: Any) -> ScriptedRunner:
        """A runner whose calls succeed with these values, in order."""
        return cls(*(ToolCallResult(ok=True, value=value) for value in values))

    def call_tool(
        self,
        code: str,
        args: dict[str, Any],
        *,
        requirements: Sequence[Requirement] = (),
        network: bool | None = None,
        timeout_s: float | None = None,
        warm: bool = False,
        priority: Priority = Priority.NORMAL,
    ) -> ToolCallResult:
        self.calls.append(RunnerCall(code, args, tuple(requirements), warm, priority))
        return self.results.pop(0)
