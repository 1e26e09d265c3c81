"""The structured outcome of one sandboxed run, and the kinds of failure a tool call has.

:class:`FailureKind` is the one vocabulary for why a tool call failed, used from the
harness inside the sandbox to the MCP payloads and the CLI. Each kind says whose fault
it is (:class:`Blame`): the tool's (its code raised, hung, returned nothing usable),
the caller's (wrong arguments, a tool that cannot be called) or the machine's (the
sandbox could not be built, packages could not be installed). Only the tool's failures
count against its health.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from toolsmith.limits import Limits


class Blame(Enum):
    """Whose fault a failed call is."""

    TOOL = "tool"
    CALLER = "caller"
    MACHINE = "machine"


class FailureKind(str, Enum):
    """Why a tool call failed. The values are the ``error_type`` strings of payloads.

    A ``str`` subclass, so payloads and JSON carry the plain value.
    """

    # the tool's code
    EXCEPTION = "exception"  # run() raised
    IMPORT = "import"  # importing the tool module failed
    NO_RUN = "no_run"  # the module defines no callable run()
    NOT_JSON = "not_json"  # the value is not JSON, too deep, or the result file was tampered with
    TOO_LARGE = "too_large"  # the JSON result is over the size cap
    TIMEOUT = "timeout"  # run() did not return in time
    KILLED = "killed"  # the process ended without a result (a limit, a signal, exit())
    EMPTY = "empty"  # a test run returned None or an empty value: it verified nothing
    WRONG_VALUE = "wrong_value"  # one of the tool's own test cases got another result than it expects
    # the caller
    BAD_ARGUMENTS = "bad_arguments"  # the arguments do not fit the tool's parameters
    UNKNOWN_TOOL = "unknown_tool"  # no tool of that name
    NOT_ACTIVE = "not_active"  # the tool exists but is pending, quarantined or retired
    # the machine
    SANDBOX = "sandbox"  # the sandbox could not be set up for this run
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"  # no sandbox backend works on this machine
    INSTALL = "install"  # the tool's pinned packages could not be installed here
    LIBRARY = "library_error"  # the tool library could not be read or written
    AGENT = "agent_error"  # an agent run (the MCP solve_task tool) failed as a whole

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def blame(self) -> Blame:
        if self in _CALLER:
            return Blame.CALLER
        if self in _MACHINE:
            return Blame.MACHINE
        return Blame.TOOL

    @classmethod
    def parse(cls, value: object) -> FailureKind:
        """A kind from text the sandboxed harness wrote; anything unknown counts as ``exception``."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.EXCEPTION


_CALLER = frozenset({FailureKind.BAD_ARGUMENTS, FailureKind.UNKNOWN_TOOL, FailureKind.NOT_ACTIVE})
_MACHINE = frozenset(
    {
        FailureKind.SANDBOX,
        FailureKind.SANDBOX_UNAVAILABLE,
        FailureKind.INSTALL,
        FailureKind.LIBRARY,
        FailureKind.AGENT,
    }
)


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
