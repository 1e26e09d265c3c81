"""Warm tool workers: a sandboxed process per tool version, forking a fresh child per call.

A cold call starts bwrap, an interpreter and the tool's imports every time. A
:class:`WarmWorker` is started once per (tool code, package environment, network) under
the very same confinement as a cold run (bwrap namespaces, seccomp, cgroups, rlimits,
the unprivileged uid; see :func:`toolsmith.isolation.bwrap.spawn`), imports the tool, and
then serves calls. What keeps calls apart inside it is described in
:mod:`toolsmith.isolation.worker_main`: a forked child per call under its own rlimits and
an extra seccomp guard, a non-dumpable worker, and after every call all other processes
killed and every writable place emptied.

:mod:`toolsmith.isolation.warm_pool` owns the workers. A worker serves one call at a
time (its calls share the sandbox's writable places, emptied between them); concurrent
calls of one tool get more workers of it. After a call the worker resets and forks the
next call's child, then says it is ready (:meth:`WarmWorker.ready_now`), so the pool can
pick a worker that is not still resetting.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import select
import selectors
import shutil
import signal
import socket
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from toolsmith.isolation import seccomp
from toolsmith.isolation.backend import Alarm, Job, _CappedBuffer, classify, reached, yield_alarm
from toolsmith.isolation.bwrap import INIT_PID, BwrapBackend, spawn
from toolsmith.isolation.cgroups import Events
from toolsmith.isolation.harness import MAX_RESULT_BYTES, TOOL_FILE, decode_result, no_result, too_large
from toolsmith.isolation.result import ExecResult, FailureKind, ToolCallResult
from toolsmith.isolation.worker_main import FILTER_FILE
from toolsmith.limits import Limits

WORKER_SCRIPT = "_worker.py"
# In the worker's pid namespace bwrap's init is pid 1 and the program it starts pid 2.
WORKER_PID = 2
PROTECTED_PIDS = (INIT_PID, WORKER_PID)
_MAX_MESSAGE = 65536
_GRACE_S = 0.25
_REPLY_SLACK_S = 5.0
# The worker itself lives across many calls: its own CPU limit must not end it early.
_WORKER_CPU_S = 24 * 3600


# bwrap's --die-with-parent is the kernel's parent-death signal, which follows the *thread*
# that started it: a worker started from a short-lived thread (an anyio worker thread that
# idles out, a background start) would be killed when that thread ends. Workers are
# started from one thread per process, which lives as long as the process (a forked
# child gets its own: the parent's thread does not exist there).
_launchers: dict[int, ThreadPoolExecutor] = {}
_launchers_lock = threading.Lock()


def _launcher() -> ThreadPoolExecutor:
    with _launchers_lock:
        pid = os.getpid()
        if pid not in _launchers:
            _launchers[pid] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolsmith-warm-launch")
        return _launchers[pid]


def env_stamp(prefix: Path | None) -> str:
    """Changes whenever packages are installed into or removed from the environment.

    Every install adds or renames a ``*.dist-info`` directory, which moves the
    site-packages directory's modification time.
    """
    if prefix is None:
        return ""
    stamps = []
    for site in sorted(prefix.glob("lib*/python*/site-packages")):
        with contextlib.suppress(OSError):
            stamps.append(f"{site}:{site.stat().st_mtime_ns}")
    return ";".join(stamps)


def code_key(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


class WorkerGone(Exception):
    """The worker died, did not answer in time, or could not start; the call goes cold."""


class NotServed(WorkerGone):
    """The worker said it retired (after the previous call) instead of serving this one."""


@dataclass(frozen=True)
class WorkerKey:
    code: str  # sha256 of the tool's code
    env_stamp: str
    network: bool
    python: str


class WarmWorker:
    """One sandboxed worker process with one tool imported, and the host's end of its socket."""

    def __init__(self, backend: BwrapBackend, job: Job, key: WorkerKey) -> None:
        self.key = key
        self.job = job
        self.busy = False  # held for a call (set and cleared by the pool, under its lock)
        self.last_used = 0.0
        self.calls = 0
        self.retired = False
        self.start_s = 0.0  # how long the start took: what a cold call of this tool costs at least
        self._closing = threading.Lock()
        self._closed = False
        # Messages of the previous call still to be read: its exit report (when the result came
        # first) and the worker's word that it is ready again (or that it retired).
        self._owed = 0
        self._stderr: IO[bytes] = tempfile.TemporaryFile(prefix="toolsmith-worker-")  # noqa: SIM115
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            started = _launcher().submit(spawn, backend, job, stdin=theirs.fileno(), stderr=self._stderr).result()
            self.proc, self.cgroup = started.proc, started.cgroup
        except BaseException:
            self.sock.close()
            self._stderr.close()
            shutil.rmtree(job.workdir, ignore_errors=True)
            raise
        finally:
            theirs.close()

    @classmethod
    def start(cls, backend: BwrapBackend, job: Job, key: WorkerKey, code: str, startup_s: float) -> WarmWorker:
        """Write the worker's files, start it and wait for it to have imported the tool."""
        guard = seccomp.guard_program(PROTECTED_PIDS)
        if guard is None:
            raise WorkerGone("no seccomp guard for this architecture")
        (job.workdir / TOOL_FILE).write_text(code, encoding="utf-8")
        (job.workdir / FILTER_FILE).write_bytes(guard)
        source = Path(__file__).with_name("worker_main.py").read_text(encoding="utf-8")
        (job.workdir / WORKER_SCRIPT).write_text(source, encoding="utf-8")
        began = time.monotonic()
        worker = cls(backend, job, key)
        try:
            ready = worker._receive(began + startup_s)
            worker.start_s = time.monotonic() - began
            if not ready.get("ready") or ready.get("pid") != WORKER_PID:
                raise WorkerGone(str(ready.get("error") or f"unexpected start reply {ready!r}"))
        except BaseException:
            worker.close()
            raise
        return worker

    @property
    def alive(self) -> bool:
        return not self.retired and self.proc.poll() is None

    def call(self, args: dict[str, Any], limits: Limits) -> ToolCallResult:
        """One call in a fresh child. Raises :class:`WorkerGone` when it could not start.

        The call's pipes are the host's own: arguments go straight to the child and its
        output and result straight back, never through the worker.
        """
        data = json.dumps(args, ensure_ascii=False).encode()
        deadline = time.monotonic() + limits.timeout_s + _REPLY_SLACK_S
        self._settle(deadline)
        # Calls of a worker run one at a time, so what its cgroup counted meanwhile is this call's.
        before = self.cgroup.events()
        call = _CallPipes()
        # A worker that yielded in its last call stayed idle while it reset (what that call
        # left, a fork bomb's hundred processes say, dies on idle CPU); this call starts at
        # its own priority.
        if limits.idle_from_start:
            self.cgroup.yield_cpu()
        else:
            self.cgroup.resume_cpu()
        try:
            message = json.dumps({"limits": _call_limits(limits)}).encode()
            socket.send_fds(self.sock, [message], call.theirs())
        except OSError as exc:  # nothing ran yet: the caller may run it cold
            call.close()
            self.close()
            raise WorkerGone(f"the warm worker is gone: {exc}") from exc
        finally:
            call.close_theirs()
        self.calls += 1
        try:
            return self._collect(call, data, limits, deadline, before)
        except NotServed as exc:  # the worker retired instead of reading this request
            self.calls -= 1
            self.close()
            raise WorkerGone(str(exc)) from exc
        except (OSError, ValueError, WorkerGone) as exc:
            # The call may have run (and had effects): report it, never run it again cold.
            self.close()
            return ToolCallResult(
                ok=False, error=f"the warm worker failed during the call: {exc}", error_type=FailureKind.SANDBOX
            )
        finally:
            call.close()

    def _settle(self, deadline: float) -> None:
        """Read what the previous call still owes: its exit report, then ready (or retired)."""
        while self._owed:
            self._take(self._receive(deadline))

    def ready_now(self) -> bool:
        """Whether the worker is ready for a call without waiting (reads only what is there)."""
        try:
            while self._owed and select.select([self.sock], [], [], 0)[0]:
                message = self.sock.recv(_MAX_MESSAGE)
                if not message:
                    self.retired = True
                    return False
                self._take(dict(json.loads(message)))
        except (OSError, ValueError, WorkerGone):
            self.retired = True
            return False
        return not self._owed

    def _take(self, message: dict[str, Any]) -> None:
        self._owed -= 1
        if message.get("retired"):
            self.close()
            raise WorkerGone(f"the warm worker retired itself: {message.get('error')}")

    def _collect(
        self, call: _CallPipes, data: bytes, limits: Limits, deadline: float, before: Events
    ) -> ToolCallResult:
        with contextlib.suppress(BrokenPipeError):  # a child that died first reads nothing
            _write_all(call.args, data)
        os.close(call.args)
        call.args = -1
        out, err = _CappedBuffer(limits.output_bytes), _CappedBuffer(limits.output_bytes)
        result = bytearray()
        slow = yield_alarm(self.cgroup, time.monotonic(), limits)
        report = _pump(call, self.sock, out, err, result, deadline, slow)
        if report is None:
            if result:  # it wrote its answer and closed its pipes: the exit report can wait
                self._owed += 1
                report = {"status": 0, "timed_out": False}
            else:
                report = self._receive(deadline)
        if report.get("retired"):
            raise NotServed(f"the warm worker retired itself: {report.get('error')}")
        self._owed += 1  # after the exit report, the worker says it is ready again (or retired)
        counted = self.cgroup.events().since(before)
        run = _exec_result(report, out, err, network=self.job.network)
        run = replace(run, limits_reached=reached(counted.pids_max > 0, counted.oom_kills > 0))
        return _outcome(run, result, limits)

    def _receive(self, deadline: float) -> dict[str, Any]:
        wait = deadline - time.monotonic()
        if wait <= 0 or not select.select([self.sock], [], [], wait)[0]:
            raise WorkerGone("the worker did not answer in time")
        message = self.sock.recv(_MAX_MESSAGE)
        if not message:
            raise WorkerGone(f"the worker exited{self._last_words()}")
        return dict(json.loads(message))

    def _last_words(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._stderr.seek(0)
            tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
            if tail:
                return f": {tail[-1]}"
        return ""

    def close(self) -> None:
        """Stop the worker: close its socket, kill what is left, remove its cgroup and files.

        Once only, whoever asks (the caller that saw it fail, the pool's reaper): a second
        ``killpg`` after the process was reaped would hit whatever process got its pid next.
        """
        with self._closing:
            if self._closed:
                return
            self._closed = True
            self._stop()

    def _stop(self) -> None:
        self.retired = True
        with contextlib.suppress(OSError):
            self.sock.close()
        if self.proc.poll() is None:  # not reaped yet, so the pid (and group) is still this one's
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        self.proc.wait()
        self.cgroup.close()
        with contextlib.suppress(OSError):
            self._stderr.close()
        shutil.rmtree(self.job.workdir, ignore_errors=True)


class _CallPipes:
    """One call's pipes: arguments to the child; stdout, stderr and the result from it."""

    def __init__(self) -> None:
        self._theirs: list[int] = []
        self.args = self._pipe(ours_writes=True)
        self.out = self._pipe(ours_writes=False)
        self.err = self._pipe(ours_writes=False)
        self.result = self._pipe(ours_writes=False)

    def _pipe(self, *, ours_writes: bool) -> int:
        read_end, write_end = os.pipe()
        self._theirs.append(read_end if ours_writes else write_end)
        return write_end if ours_writes else read_end

    def theirs(self) -> list[int]:
        return list(self._theirs)

    def close_theirs(self) -> None:
        for fd in self._theirs:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._theirs = []

    def close(self) -> None:
        self.close_theirs()
        for fd in (self.args, self.out, self.err, self.result):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.args = self.out = self.err = self.result = -1


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _pump(
    call: _CallPipes,
    sock: socket.socket,
    out: _CappedBuffer,
    err: _CappedBuffer,
    result: bytearray,
    deadline: float,
    slow: Alarm | None = None,
) -> dict[str, Any] | None:
    """Read the call's pipes to their end; the worker's exit report if it came first, else None.

    The report means the child is gone; whatever it left behind that still holds a pipe
    is killed by the worker right after, so reading stops after a short grace. ``slow``
    goes off once the call has run long.
    """
    sinks: dict[int, Any] = {call.out: out, call.err: err, call.result: result}
    selector = selectors.DefaultSelector()
    for fd in sinks:
        selector.register(fd, selectors.EVENT_READ)
    selector.register(sock, selectors.EVENT_READ)
    report: dict[str, Any] | None = None
    grace: float | None = None
    try:
        while len(selector.get_map()) > (0 if report is not None else 1):
            now = time.monotonic()
            if now >= min(deadline, grace or deadline):
                if report is None:
                    raise WorkerGone("the worker did not report the call's end in time")
                break
            wake = min(deadline, grace or deadline, slow.check(now) if slow is not None else math.inf)
            for key, _ in selector.select(timeout=wake - now):
                if key.fileobj is sock:
                    report = _report(sock)
                    selector.unregister(sock)
                    grace = time.monotonic() + _GRACE_S
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                elif key.fd == call.result:
                    if len(result) <= MAX_RESULT_BYTES:  # one byte over is enough to say "too large"
                        result += chunk
                else:
                    sinks[key.fd].feed(chunk)
        return report
    finally:
        selector.close()


def _report(sock: socket.socket) -> dict[str, Any]:
    message = sock.recv(_MAX_MESSAGE)
    if not message:
        raise WorkerGone("the worker exited during the call")
    return dict(json.loads(message))


def _call_limits(limits: Limits) -> dict[str, Any]:
    return {
        "timeout_s": limits.timeout_s,
        "memory_mb": limits.memory_mb,
        "cpu_s": limits.cpu_s,
        "file_size_mb": limits.file_size_mb,
        "open_files": limits.open_files,
        "output_bytes": limits.output_bytes,
    }


def _exec_result(report: dict[str, Any], out: _CappedBuffer, err: _CappedBuffer, *, network: bool) -> ExecResult:
    exit_code = os.waitstatus_to_exitcode(int(report.get("status", 0)))
    timed_out = bool(report.get("timed_out"))
    stderr = err.text()
    return ExecResult(
        stdout=out.text(),
        stderr=stderr,
        exit_code=exit_code,
        timed_out=timed_out,
        killed_by=classify(exit_code, timed_out=timed_out, stderr=stderr),
        wall_s=float(report.get("wall_s", 0.0)),
        truncated=bool(out.dropped or err.dropped),
        backend="bwrap-warm",
        network=network,
    )


def _outcome(run: ExecResult, result: bytearray, limits: Limits) -> ToolCallResult:
    if run.timed_out:
        return no_result(run, limits)
    if len(result) > MAX_RESULT_BYTES:
        return too_large(run)
    return decode_result(result.decode("utf-8", "replace"), run, limits)


def worker_job(workdir: Path, python: Path, env_prefix: Path | None, limits: Limits, network: bool) -> Job:
    """The worker's job: the cold run's, with a CPU limit for the worker's whole life."""
    return Job(
        workdir=workdir,
        script=WORKER_SCRIPT,
        python=python,
        env_prefix=env_prefix,
        limits=replace(limits, cpu_s=max(limits.cpu_s, _WORKER_CPU_S)),
        network=network,
    )
