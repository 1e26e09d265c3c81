"""The structured outcome of one sandboxed run.

Why a tool call failed is a :class:`~toolsmith.calls.FailureKind` (the one vocabulary,
from the harness inside the sandbox to the MCP payloads and the CLI), and whose fault it
is a :class:`~toolsmith.calls.Blame`: only the tool's own failures count against its
health.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from toolsmith.calls import Blame, FailureKind
from toolsmith.limits import Limits

__all__ = ["Blame", "ExecResult", "FailureKind", "Limit", "ToolCallResult"]


class Limit(str, Enum):
    """A sandbox limit a run can be seen to reach, named in messages with its setting."""

    MEMORY = "memory"
    PROCESSES = "processes"

    def __str__(self) -> str:
        return self.value

    @property
    def setting(self) -> str:
        return "sandbox.memory_mb" if self is Limit.MEMORY else "sandbox.max_procs"

    def reached(self, limits: Limits) -> str:
        """The sentence a failure message carries when this limit was reached."""
        if self is Limit.MEMORY:
            return f"the sandbox's memory limit ({limits.memory_mb} MB, {self.setting}) was reached"
        return f"the sandbox's process limit ({limits.max_procs} processes, {self.setting}) was reached"


@dataclass(frozen=True)
class ExecResult:
    """What happened when a process ran in the sandbox.

    ``killed_by`` names what stopped the run early: ``"timeout"``, a limit such as
    ``"memory"`` or ``"cpu"``, or a signal name such as ``"SIGKILL"``; ``None`` when the
    process exited on its own. ``truncated`` is true when either stream hit the byte cap
    (the middle was dropped and a notice inserted). ``limits_reached`` lists the limits
    the kernel saw the run reach (its cgroup's pids cap refused a fork, the OOM killer
    ran), however the run ended.
    """

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool = False
    killed_by: str | None = None
    wall_s: float = 0.0
    truncated: bool = False
    backend: str = ""
    network: bool = True
    limits_reached: tuple[Limit, ...] = ()

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.killed_by is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ToolCallResult:
    """The outcome of calling a tool's ``run(**args)`` in the sandbox.

    ``ok`` is true only when ``run`` returned and its value was JSON-serialisable; then
    ``value`` holds the decoded value. Otherwise ``error`` says what went wrong in a
    sentence a model can act on, and ``error_type`` says what kind of failure it was
    (and so whose fault).
    """

    ok: bool
    value: Any = None
    error: str | None = None
    error_type: FailureKind | None = None
    traceback: str | None = None
    exec: ExecResult | None = None
    installed: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        # A runner written elsewhere (a test double, a worker pool) may report the kind as text.
        kind: object = self.error_type
        if kind is not None and not isinstance(kind, FailureKind):
            object.__setattr__(self, "error_type", FailureKind.parse(kind))

    @property
    def blame(self) -> Blame | None:
        """Whose fault the failure is; ``None`` for a success."""
        if self.ok:
            return None
        return (self.error_type or FailureKind.EXCEPTION).blame

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "value": self.value,
            "error": self.error,
            "error_type": self.error_type,
            "traceback": self.traceback,
            "exec": self.exec.to_dict() if self.exec else None,
        }
