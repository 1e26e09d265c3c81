"""What every sandbox backend shares: the job description and the supervised child.

A backend turns a :class:`Job` (run this Python script with this interpreter, in this
work directory, under these limits) into a launch plan, which
:mod:`toolsmith.isolation.launch` starts in its own session and hands to :func:`supervise`.
``supervise`` reads both streams with a byte cap (keeping head and tail) through one
``selectors`` loop, enforces the wall-clock timeout and kills the whole process group
when it fires. No threads are involved: a thread cannot stop the code it waits on, a
killed process tree can.
"""

from __future__ import annotations

import contextlib
import math
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from toolsmith.isolation.cgroups import RunCgroup
from toolsmith.isolation.result import ExecResult, Limit
from toolsmith.limits import Limits

_EXIT_GRACE_S = 0.25


def base_python() -> Path:
    """The base interpreter, never a virtual environment's (whose prefix would need binding).

    Package environments are created from it and runs without packages use it.
    """
    executable = getattr(sys, "_base_executable", "") or sys.executable
    if sys.prefix != sys.base_prefix and executable.startswith(sys.prefix.rstrip("/") + "/"):
        executable = os.path.realpath(executable)
    return Path(executable)


@dataclass(frozen=True)
class Job:
    """One run of a Python script inside the sandbox.

    ``workdir`` is a host directory that becomes the run's only writable place;
    ``script`` is a file name inside it. ``python`` is the host path of the interpreter
    (inside ``env_prefix`` when there is one) and ``env_prefix`` the virtual environment
    whose packages the run may import (read only), or None for the standard library alone.
    """

    workdir: Path
    script: str
    python: Path
    env_prefix: Path | None
    limits: Limits
    network: bool = True
    # Files in ``workdir`` the program is expected to write back (the harness's result).
    # An isolating backend makes only these writable on the host; all else stays inside.
    outputs: tuple[str, ...] = ()


class Backend(Protocol):
    """A way to run a :class:`Job`. ``isolating`` says whether it is a security boundary."""

    name: str
    isolating: bool

    def execute(self, job: Job) -> ExecResult: ...


class _CappedBuffer:
    """Keeps the first and last ``cap/2`` bytes of a stream and counts what it dropped."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.half
            if excess > 0:
                self.dropped += excess
                del self.tail[:excess]

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if self.dropped:
            return f"{head}\n[... {self.dropped} bytes cut by the sandbox output cap ...]\n{tail}"
        return head + tail


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole process group (it leads its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def supervise(
    proc: subprocess.Popen[bytes],
    *,
    started: float,
    limits: Limits,
    backend: str,
    network: bool,
    cgroup: RunCgroup | None = None,
    signal_exit_offset: bool = False,
) -> ExecResult:
    """Read a started child's output to its end or until the wall-clock limit, with a byte cap.

    ``proc`` comes from :func:`toolsmith.isolation.launch.launch` with both streams piped.
    With a ``cgroup``, everything still inside it is killed when the run ends and the
    cgroup's verdicts (OOM kill, pid limit hit) feed ``killed_by`` and
    ``limits_reached``. ``signal_exit_offset`` says the launcher reports a signal death
    as ``128 + signal`` (bwrap does); such exit codes are turned back into the negative
    signal numbers ``subprocess`` uses.
    """
    out, err = _CappedBuffer(limits.output_bytes), _CappedBuffer(limits.output_bytes)
    try:
        slow = yield_alarm(cgroup, started, limits) if cgroup is not None else None
        timed_out = _pump(proc, out, err, deadline=started + limits.timeout_s, slow=slow)
        if timed_out:
            kill_group(proc)
        if proc.poll() is None:  # the streams closed but the child lives on: end the group
            kill_group(proc)
        exit_code = proc.wait()
    finally:
        if cgroup is not None:
            cgroup.close()
    wall = time.monotonic() - started
    if signal_exit_offset and 128 < exit_code < 128 + 65:
        exit_code = 128 - exit_code
    stderr = err.text()
    return ExecResult(
        stdout=out.text(),
        stderr=stderr,
        exit_code=exit_code,
        timed_out=timed_out,
        killed_by=classify(exit_code, timed_out=timed_out, stderr=stderr, cgroup=cgroup),
        wall_s=round(wall, 4),
        truncated=bool(out.dropped or err.dropped),
        backend=backend,
        network=network,
        limits_reached=reached(cgroup.pids_limited, cgroup.oom_killed) if cgroup is not None else (),
    )


@dataclass
class Alarm:
    """Something a run's supervisor does once: when the run has gone on until ``at``, or
    sooner when ``early`` says so, asked every :data:`LOOK_S` from ``look_at`` on.

    Both supervisors (the cold :func:`supervise` and the warm call's pipe loop) check it
    in the loop they already run, so it costs no thread; a quick call ends before the
    first look.
    """

    at: float
    action: Callable[[], None]
    early: Callable[[], bool] | None = None
    look_at: float = math.inf
    fired: bool = False

    def check(self, now: float) -> float:
        """Act if it is time; the instant the caller must wake by next (inf once done)."""
        if not self.fired and (now >= self.at or self._early(now)):
            self.fired = True
            self.action()
        return math.inf if self.fired else min(self.at, self.look_at)

    def _early(self, now: float) -> bool:
        if self.early is None or now < self.look_at:
            return False
        self.look_at = now + LOOK_S
        return self.early()


LOOK_S = 0.02
CROWD_TASKS = 24  # a run's processes and threads (its sandbox's own three or four included)


def yield_alarm(cgroup: RunCgroup, started: float, limits: Limits) -> Alarm:
    """When a run gives up full priority for idle CPU (:meth:`RunCgroup.yield_cpu`).

    After ``sandbox.yield_after_s``; sooner once it has :data:`CROWD_TASKS` processes and
    threads, which no quick call needs: a fork bomb's first call got a quarter of a
    second of full priority to fork a hundred copies of itself, every other caller waiting.
    """
    crowded = None if "pids" not in cgroup.dirs else lambda: cgroup.tasks() >= CROWD_TASKS
    return Alarm(started + limits.yield_after_s, cgroup.yield_cpu, crowded, started + LOOK_S)


def reached(pids_hit: bool, oom_killed: bool) -> tuple[Limit, ...]:
    """The limits a run's cgroup events show it reached: the pids cap refused a fork, the OOM killer ran."""
    return (*((Limit.PROCESSES,) if pids_hit else ()), *((Limit.MEMORY,) if oom_killed else ()))


def _pump(
    proc: subprocess.Popen[bytes],
    out: _CappedBuffer,
    err: _CappedBuffer,
    *,
    deadline: float,
    slow: Alarm | None = None,
) -> bool:
    """Read both pipes until EOF; return True if the deadline passed first.

    When the child exits but something it left behind keeps a pipe open, reading stops
    after a short grace period instead of waiting for the deadline. ``slow`` goes off once
    the run has gone on long.
    """
    assert proc.stdout is not None and proc.stderr is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, out)
    selector.register(proc.stderr, selectors.EVENT_READ, err)
    grace_until: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                return True
            if grace_until is None and proc.poll() is not None:
                grace_until = now + _EXIT_GRACE_S
            if grace_until is not None and now >= grace_until:
                break
            wake = slow.check(now) if slow is not None else math.inf
            wait = min(deadline, grace_until or deadline, wake) - now
            for key, _ in selector.select(timeout=min(wait, 0.1)):
                chunk = os.read(key.fd, 65536)
                if chunk:
                    key.data.feed(chunk)
                else:
                    selector.unregister(key.fileobj)
        while proc.poll() is None:
            if time.monotonic() >= deadline:
                return True
            time.sleep(0.002)
        return False
    finally:
        selector.close()
        proc.stdout.close()
        proc.stderr.close()


# Last words of a Python (or C) program that ran into a limit, and the limit they name.
_LIMIT_MESSAGES = (
    ("MemoryError", "memory"),
    ("Cannot allocate memory", "memory"),
    ("std::bad_alloc", "memory"),
    ("out of memory", "memory"),
    ("File too large", "file_size"),
    ("No space left on device", "disk"),
    ("Too many open files", "open_files"),
    ("can't start new thread", "processes"),
    ("Resource temporarily unavailable", "processes"),
)


def classify(exit_code: int, *, timed_out: bool, stderr: str, cgroup: RunCgroup | None = None) -> str | None:
    """Name what stopped the run: a limit when one evidently fired, else a signal, else None."""
    if timed_out:
        return "timeout"
    if cgroup is not None and cgroup.oom_killed and exit_code != 0:
        return "memory"
    if exit_code < 0:
        return _signal_name(-exit_code)
    if exit_code == 0:
        return None
    tail = "\n".join(stderr.strip().splitlines()[-4:])
    for needle, limit in _LIMIT_MESSAGES:
        if needle in tail and (limit != "processes" or cgroup is None or cgroup.pids_limited):
            return limit
    if cgroup is not None and cgroup.pids_limited:
        return "processes"
    return None


def _signal_name(sig: int) -> str:
    if sig == signal.SIGXCPU:
        return "cpu"
    if sig == signal.SIGXFSZ:
        return "file_size"
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
