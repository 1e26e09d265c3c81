"""What every sandbox backend shares: the job description and the supervised child.

A backend turns a :class:`Job` (run this Python script with this interpreter, in this
work directory, under these limits) into an argv and an environment, then hands it to
:func:`supervise`. ``supervise`` runs the child in its own session, reads both streams
with a byte cap (keeping head and tail) through one ``selectors`` loop, enforces the
wall-clock timeout and kills the whole process group when it fires. No threads are
involved: a thread cannot stop the code it waits on, a killed process tree can.
"""

from __future__ import annotations

import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from toolsmith.sandbox.limits import Limits
from toolsmith.sandbox.result import ExecResult

_EXIT_GRACE_S = 0.25


@dataclass(frozen=True)
class Job:
    """One run of a Python script inside the sandbox.

    ``workdir`` is a host directory that becomes the run's only writable place;
    ``script`` is a file name inside it. ``python`` is the host path of the interpreter
    and ``env_prefix`` the virtual environment whose packages the run may import (read
    only), or None for the standard library alone.
    """

    workdir: Path
    script: str
    python: Path
    env_prefix: Path | None
    limits: Limits
    network: bool = True


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


def rlimit_preexec(limits: Limits) -> Callable[[], None]:
    """A pre-exec hook applying the limits as rlimits (inherited by every descendant)."""
    mb = 1024 * 1024
    pairs = [
        (resource.RLIMIT_AS, limits.memory_mb * mb),
        (resource.RLIMIT_CPU, limits.cpu_s),
        (resource.RLIMIT_NPROC, limits.max_procs),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * mb),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CORE, 0),
    ]

    def apply() -> None:
        for which, value in pairs:
            resource.setrlimit(which, (value, value))

    return apply


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole process group (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


def supervise(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    limits: Limits,
    backend: str,
    network: bool,
    preexec: Callable[[], None] | None = None,
    on_timeout: Callable[[subprocess.Popen[bytes]], None] = kill_group,
) -> ExecResult:
    """Run ``argv`` to completion or until the wall-clock limit, with capped output."""
    started = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        preexec_fn=preexec,
        close_fds=True,
    )
    out, err = _CappedBuffer(limits.output_bytes), _CappedBuffer(limits.output_bytes)
    timed_out = _pump(proc, out, err, deadline=started + limits.timeout_s)
    if timed_out:
        on_timeout(proc)
    # The streams are closed; a surviving grandchild could still hold the group, so kill it.
    kill_group(proc) if proc.poll() is None else None
    exit_code = proc.wait()
    wall = time.monotonic() - started
    killed_by = "timeout" if timed_out else _signal_name(exit_code, limits, wall)
    return ExecResult(
        stdout=out.text(),
        stderr=err.text(),
        exit_code=exit_code,
        timed_out=timed_out,
        killed_by=killed_by,
        wall_s=round(wall, 4),
        truncated=bool(out.dropped or err.dropped),
        backend=backend,
        network=network,
    )


def _pump(
    proc: subprocess.Popen[bytes], out: _CappedBuffer, err: _CappedBuffer, *, deadline: float
) -> bool:
    """Read both pipes until EOF; return True if the deadline passed first.

    When the child exits but something it left behind keeps a pipe open, reading stops
    after a short grace period instead of waiting for the deadline.
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
            wait = min(deadline, grace_until or deadline) - now
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


def _signal_name(exit_code: int, limits: Limits, wall_s: float) -> str | None:
    """Name what killed the process, guessing the rlimit where the signal implies one."""
    if exit_code >= 0:
        return None
    sig = -exit_code
    if sig == signal.SIGXCPU:
        return "cpu"
    if sig == signal.SIGXFSZ:
        return "file_size"
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
