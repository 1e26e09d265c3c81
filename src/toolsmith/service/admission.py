"""Admission of stored-tool calls on a shared server: a failing tool runs one call at a time, on idle CPU.

A tool that fails (a timeout, a memory or fork bomb, a crash) costs the machine the most
while failing, and concurrent callers of it would each start another such run before
the health record has caught up: runs pile up, and every other tool slows down. So while
a tool's last call failed (its consecutive-failure count is not zero), :class:`Admission`
lets one call of it run at a time and refuses the others at once, without running them,
with a result that says why and what to do. The one call that runs decides: a success
clears the count and the tool is admitted freely again; enough failures in a row
quarantine it (:mod:`toolsmith.service.toolcall`). A healthy tool is never refused here:
its concurrent callers share its warm workers (:mod:`toolsmith.isolation.warm_pool`).
A refusal is the caller's to retry, so it does not count against the tool's health.

That one call also runs at :attr:`~toolsmith.limits.Priority.IDLE` (:func:`cpu_priority`): it
gets only the CPU that the server and the healthy tools' calls leave. A fork bomb's
second and third calls then cost the other callers nothing; in ``bench/serve.py`` with
only that fault, the good tool's p99 with faults fell from 1.8-2.3x its p99 without to
1.3-1.4x. The first failure of a tool still runs at full priority (nothing was known
against it yet), for ``sandbox.yield_after_s``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from toolsmith.library import ToolVersion
from toolsmith.limits import Priority

_LAST_ERROR_CHARS = 200


class Admission:
    """How many calls of each tool version are running; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[tuple[str, int], int] = {}
        self.refused = 0

    def running(self, tool: ToolVersion) -> int:
        with self._lock:
            return self._running.get((tool.name, tool.version), 0)

    @contextlib.contextmanager
    def admit(self, tool: ToolVersion) -> Iterator[str | None]:
        """Hold a place for one call of ``tool``; yields None to run it, or why it may not run now.

        ``tool`` is the version as just read from the library, with its health record.
        """
        key = (tool.name, tool.version)
        with self._lock:
            if tool.stats.consecutive_failures > 0 and self._running.get(key, 0) > 0:
                self.refused += 1
                refused = True
            else:
                self._running[key] = self._running.get(key, 0) + 1
                refused = False
        if refused:
            yield busy_message(tool)
            return
        try:
            yield None
        finally:
            with self._lock:
                self._running[key] -= 1
                if not self._running[key]:
                    del self._running[key]


def cpu_priority(tool: ToolVersion) -> Priority:
    """The CPU share of a call of ``tool`` (as just read, with its health): idle while it is failing."""
    return Priority.IDLE if tool.stats.consecutive_failures > 0 else Priority.NORMAL


def busy_message(tool: ToolVersion) -> str:
    stats = tool.stats
    last = (stats.last_error or "unknown error")[:_LAST_ERROR_CHARS]
    in_a_row = f"{stats.consecutive_failures} failure{'s' if stats.consecutive_failures != 1 else ''} in a row"
    return (
        f"Not run: {tool.ref} is failing ({in_a_row}; last: {last}). While it fails, its calls run one at "
        "a time and one is running now, so this call was refused instead of queued behind it. Retry once "
        f"that call has answered; `toolsmith tools show {tool.name}` shows its health."
    )
