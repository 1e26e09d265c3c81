"""Resource limits for one sandboxed run, and their defaults.

A plain value beneath both the settings (which read it from ``config.toml``) and the
sandbox (which enforces it), so neither has to import the other to use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

_FLOATS = ("timeout_s", "cpus")


@dataclass(frozen=True)
class Limits:
    """What one run of model-written code may use.

    The defaults suit a tool that fetches a web page or crunches a small table; they are
    each configurable under ``[sandbox]`` in ``config.toml``.
    """

    timeout_s: float = 60.0
    memory_mb: int = 2048
    cpu_s: int = 60
    max_procs: int = 128
    file_size_mb: int = 256
    open_files: int = 512
    output_bytes: int = 256 * 1024
    tmp_size_mb: int = 256
    # Cores' worth of CPU time for the whole run (a cgroup quota where one is available);
    # a run never gets every core of the machine.
    cpus: float = 2.0

    def with_timeout(self, timeout_s: float | None) -> Limits:
        return self if timeout_s is None else replace(self, timeout_s=float(timeout_s))

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> Limits:
        """Build limits from a config table, ignoring keys that are not limits."""
        names = {f.name: f.type for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in names:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ValueError(f"sandbox.{key} must be a finite, positive number, got {value!r}")
            values[key] = float(value) if key in _FLOATS else int(value)
        return cls(**values)
