"""Warm tool workers: a sandboxed process per tool version, forking a fresh child per call.

A cold call starts bwrap, an interpreter and the tool's imports every time. A
:class:`WarmWorker` is started once per (tool code, package environment, network) under
the very same confinement as a cold run (bwrap namespaces, seccomp, cgroups, rlimits,
the unprivileged uid; see :func:`toolsmith.isolation.bwrap.spawn`), imports the tool, and
then serves calls. What keeps calls apart inside it is described in
:mod:`toolsmith.isolation.worker_main`: a forked child per call under its own rlimits and
an extra seccomp guard, a non-dumpable worker, and after every call all other processes
killed and every writable place emptied.

:class:`WorkerPool` owns the workers: started lazily, reused, reaped after
``sandbox.warm_idle_s`` of idleness, at most ``sandbox.warm_workers`` of them (the least
recently used idle one makes room), all stopped on :meth:`WorkerPool.close` and at exit.
A worker is keyed by its code's hash and its package environment's stamp, so a new
version or a ``tools sync`` gets a new worker; :meth:`WorkerPool.retire` stops those
whose code is no longer served (a quarantine). A worker busy with another call is not
waited for: the caller runs that call cold.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import select
import selectors
import shutil
import signal
import socket
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from toolsmith.isolation import seccomp
from toolsmith.isolation.backend import Job, _CappedBuffer, classify, reached
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
        self.lock = threading.Lock()
        self.last_used = 0.0
        self.calls = 0
        self.retired = False
        self._owed = False  # the previous call's exit report is still to be read
        self._stderr: IO[bytes] = tempfile.TemporaryFile(prefix="toolsmith-worker-")  # noqa: SIM115
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            started = spawn(backend, job, stdin=theirs.fileno(), stderr=self._stderr)
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
        worker = cls(backend, job, key)
        try:
            ready = worker._receive(time.monotonic() + startup_s)
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
        """Read the previous call's exit report, or the worker's notice that it retired."""
        if not self._owed:
            return
        report = self._receive(deadline)
        self._owed = False
        if report.get("retired"):
            self.close()
            raise WorkerGone(f"the warm worker retired itself: {report.get('error')}")

    def _collect(
        self, call: _CallPipes, data: bytes, limits: Limits, deadline: float, before: Events
    ) -> ToolCallResult:
        with contextlib.suppress(BrokenPipeError):  # a child that died first reads nothing
            _write_all(call.args, data)
        os.close(call.args)
        call.args = -1
        out, err = _CappedBuffer(limits.output_bytes), _CappedBuffer(limits.output_bytes)
        result = bytearray()
        report = _pump(call, self.sock, out, err, result, deadline)
        if report is None:
            if result:  # it wrote its answer and closed its pipes: the exit report can wait
                self._owed = True
                report = {"status": 0, "timed_out": False}
            else:
                report = self._receive(deadline)
        if report.get("retired"):
            raise NotServed(f"the warm worker retired itself: {report.get('error')}")
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
        """Stop the worker: close its socket, kill what is left, remove its cgroup and files."""
        self.retired = True
        with contextlib.suppress(OSError):
            self.sock.close()
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
) -> dict[str, Any] | None:
    """Read the call's pipes to their end; the worker's exit report if it came first, else None.

    The report means the child is gone; whatever it left behind that still holds a pipe
    is killed by the worker right after, so reading stops after a short grace.
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
            for key, _ in selector.select(timeout=min(deadline, grace or deadline) - now):
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


class WorkerPool:
    """At most ``size`` warm workers, reaped after ``idle_s``; thread-safe."""

    def __init__(self, size: int, idle_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.idle_s = idle_s
        self.clock = clock
        self.started = 0
        self._workers: dict[WorkerKey, WarmWorker] = {}
        self._lock = threading.Lock()
        _live_pools.add(self)

    def __len__(self) -> int:
        return len(self._workers)

    def workers(self) -> list[WarmWorker]:
        with self._lock:
            return list(self._workers.values())

    @contextlib.contextmanager
    def checkout(self, key: WorkerKey, start: Callable[[], WarmWorker]) -> Iterator[WarmWorker | None]:
        """The idle worker for ``key`` (started if missing), held for one call; None if busy or full."""
        self.reap()
        with self._lock:
            worker = self._workers.get(key)
            if worker is not None and not worker.alive:
                del self._workers[key]
                worker = None
            if worker is None and not self._make_room():
                yield None
                return
        if worker is None:
            worker = start()  # outside the pool lock: an import can take a while
            with self._lock:
                self.started += 1
                if key in self._workers or len(self._workers) >= self.size:
                    taken = worker  # raced with another start: use it once, do not keep it
                else:
                    self._workers[key] = worker
                    taken = None
        else:
            taken = None
        if not worker.lock.acquire(blocking=False):
            yield None
            return
        try:
            yield worker
        finally:
            worker.last_used = self.clock()
            worker.lock.release()
            if taken is not None:
                taken.close()
            elif not worker.alive:
                self._stop(lambda w: w is worker)

    def _make_room(self) -> bool:
        """Evict the least recently used idle worker when full (pool lock held)."""
        if len(self._workers) < self.size:
            return True
        idle = [w for w in self._workers.values() if not w.lock.locked()]
        if not idle:
            return False
        victim = min(idle, key=lambda w: w.last_used)
        del self._workers[victim.key]
        victim.close()
        return True

    def reap(self) -> int:
        """Stop workers idle for longer than ``idle_s`` (or dead); how many were stopped."""
        now = self.clock()
        return self._stop(lambda w: not w.alive or (not w.lock.locked() and now - w.last_used > self.idle_s))

    def retire(self, keep_codes: Iterable[str]) -> int:
        """Stop workers whose code is not in ``keep_codes`` (sha256 hex digests)."""
        keep = set(keep_codes)
        return self._stop(lambda w: w.key.code not in keep)

    def close(self) -> None:
        self._stop(lambda w: True)

    def _stop(self, doomed: Callable[[WarmWorker], bool]) -> int:
        with self._lock:
            stopping = [w for w in self._workers.values() if doomed(w)]
            for worker in stopping:
                del self._workers[worker.key]
        for worker in stopping:
            worker.close()
        return len(stopping)


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


_live_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for pool in list(_live_pools):
        pool.close()
