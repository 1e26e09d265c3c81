"""Resource limits for one sandboxed run, and their defaults.

A plain value beneath both the settings (which read it from ``config.toml``) and the
sandbox (which enforces it), so neither has to import the other to use it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

_FLOATS = ("timeout_s", "cpus", "yield_after_s")


class Priority(Enum):
    """How a run shares the CPU with the server and the other runs."""

    NORMAL = "normal"  # full priority for ``yield_after_s``, then only idle CPU
    IDLE = "idle"  # only idle CPU from its start: a tool that is failing (toolsmith.service.admission)


@dataclass(frozen=True)
class Limits:
    """What one run of model-written code may use.

    The defaults suit a tool that fetches a web page or crunches a small table; they are
    each configurable under ``[sandbox]`` in ``config.toml``. Each field's ``help`` is its
    line in the README's settings table (:mod:`toolsmith.config` reads it; every limit is a
    positive number, so the field's type says the rest).
    """

    timeout_s: float = field(default=60.0, metadata={"help": "wall-clock seconds per run"})
    memory_mb: int = field(default=2048, metadata={"help": "address space per process, and the run's memory cgroup"})
    cpu_s: int = field(default=60, metadata={"help": "CPU seconds per process"})
    max_procs: int = field(default=128, metadata={"help": "processes and threads (a pids cgroup where available)"})
    file_size_mb: int = field(default=256, metadata={"help": "the largest file a run may write"})
    open_files: int = field(default=512, metadata={"help": "open files per process"})
    output_bytes: int = field(default=256 * 1024, metadata={"help": "stdout and stderr kept per run"})
    tmp_size_mb: int = field(default=256, metadata={"help": "size of the run's private /tmp"})
    # A cgroup quota where one is available; a run never gets every core of the machine.
    cpus: float = field(
        default=2.0, metadata={"help": "cores' worth of CPU time for the whole run (one core is left to the host)"}
    )

    # Quick calls are what a serving process's users wait on; a run past this point is a
    # batch job or a runaway, and waits for idle CPU instead (isolation.cgroups.RunCgroup.yield_cpu).
    yield_after_s: float = field(
        default=0.25,
        metadata={"help": "seconds a run runs at full priority; then it gets only CPU that quicker runs leave idle"},
    )

    def with_timeout(self, timeout_s: float | None) -> Limits:
        return self if timeout_s is None else replace(self, timeout_s=float(timeout_s))

    def at(self, priority: Priority) -> Limits:
        """These limits for a run of ``priority``: an idle one yields the CPU from its start."""
        return replace(self, yield_after_s=0.0) if priority is Priority.IDLE else self

    @property
    def idle_from_start(self) -> bool:
        """Whether the run yields the CPU before it starts (:meth:`at` ``Priority.IDLE``)."""
        return self.yield_after_s <= 0

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> Limits:
        """Build limits from a config table, ignoring keys that are not limits."""
        names = {f.name: f.type for f in fields(cls)}
        values: dict[str, Any] = {}  # keyword arguments: an int or a float, as each field is
        for key, value in data.items():
            if key not in names:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ValueError(f"sandbox.{key} must be a finite, positive number, got {value!r}")
            values[key] = float(value) if key in _FLOATS else int(value)
        return cls(**values)
