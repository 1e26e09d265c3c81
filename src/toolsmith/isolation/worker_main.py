"""The warm worker's own program: it runs INSIDE the sandbox, so it imports the standard library only.

Started by :mod:`toolsmith.isolation.warm` under bwrap with the tool's code as ``tool.py``
(read only), it imports the tool once and keeps one child forked ahead of the next call.
Its fd 0 is a ``SOCK_SEQPACKET`` socket to the host, which carries control messages
only. A call's data never passes through the worker: the host creates the call's pipes
(arguments in; stdout, stderr and the result out) and sends their ends with the request
(``SCM_RIGHTS``); the worker hands them to the waiting child unread. So the worker's
memory, which every later child inherits, never holds one call's arguments, output or
result, not even in freed buffers.

* the child starts a new session, keeps fds 0-3 only (the call's pipes), installs a
  second seccomp filter (built on the host, see
  :func:`toolsmith.isolation.seccomp.guard_program`) that refuses signals, pidfds,
  scheduling and rlimit changes aimed at this worker or the sandbox's init, and SysV or
  POSIX message IPC that would outlive the call, then sets the call's own rlimits;
* this worker is not dumpable, so the child (same uid) cannot read its memory, its
  environment or its descriptors through ``/proc``;
* after the call every other process in the sandbox is killed (``kill(-1)`` in a pid
  namespace spares only init and the caller, and cannot be outrun by forks), reaped
  (the worker is a child subreaper), and ``/tmp``, ``/dev/shm``, the work directory and
  ``$HOME`` are emptied; then the worker checks nobody changed its own scheduling, OOM
  score or limits. If something is wrong it says so instead of serving, and exits;
  otherwise it forks the next call's child and says it is ready.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib.util
import json
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback
from typing import Any

WORK = "/sandbox"
FILTER_FILE = "_guard.bpf"
SCRATCH = ("/tmp", "/dev/shm")
_PR_SET_DUMPABLE = 4
_PR_SET_SECCOMP = 22
_PR_SET_CHILD_SUBREAPER = 36
_SECCOMP_MODE_FILTER = 2
_MAX_MESSAGE = 65536
_CALL_FDS = 4  # the arguments (read), stdout, stderr, the result (written)


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True)


# --- the child: one call -------------------------------------------------------------------


def _send(sock: socket.socket, payload: dict[str, Any]) -> None:
    sock.send(json.dumps(payload).encode())


class _Spare:
    """A child forked ahead of its call (so the fork is off the call's path), waiting for it."""

    def __init__(self, run: Any, guard: _Guard) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            ours.close()
            _child(run, theirs, guard)
        theirs.close()
        self.sock = ours

    def give(self, message: bytes, fds: list[int]) -> None:
        """Pass the call's request and pipe ends on, unread; the worker keeps no copy."""
        try:
            socket.send_fds(self.sock, [message], fds)
        finally:
            for fd in fds:
                os.close(fd)
            self.sock.close()


def _child(run: Any, sock: socket.socket, guard: _Guard) -> None:
    """Runs in the forked child: wait for the call, confine it, run it; never returns."""
    code = 0
    try:
        os.setsid()
        os.closerange(0, sock.fileno())
        os.closerange(sock.fileno() + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        guard.install()  # everything that does not depend on the call is done before it arrives
        os.chdir(WORK)
        message, fds, _, _ = socket.recv_fds(sock, _MAX_MESSAGE, _CALL_FDS)
        if not message or len(fds) != _CALL_FDS:  # the worker is shutting down
            os._exit(0)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(_CALL_FDS, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        with open(0, "rb", closefd=False) as arguments:
            args = json.loads(arguments.read())
        _limit(json.loads(message)["limits"])
        _call(run, args)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        # Closing the pipes tells the host the call is over before this process is torn down.
        os.closerange(0, 4)
        os._exit(code)


def _limit(limits: dict[str, int]) -> None:
    mb = 1024 * 1024
    for which, value in (
        (resource.RLIMIT_AS, limits["memory_mb"] * mb),
        (resource.RLIMIT_FSIZE, limits["file_size_mb"] * mb),
        (resource.RLIMIT_NOFILE, limits["open_files"]),
    ):
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))
    # CPU time counts from this fork; the hard limit one second later kills after SIGXCPU.
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    cpu = limits["cpu_s"]
    if hard != resource.RLIM_INFINITY:
        cpu = min(cpu, hard - 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


class _Guard:
    """The call's seccomp program, built into ctypes objects once in the worker.

    Every child inherits them, so installing the guard is one ``prctl`` call: building
    them per child costs it a hundred-odd copied pages (a tenth of a call's CPU).
    """

    def __init__(self, program: bytes) -> None:
        self._buffer = ctypes.create_string_buffer(program)  # kept alive: the struct points into it
        self._prog = _Prog(len(program) // 8, ctypes.cast(self._buffer, ctypes.c_void_p))
        self._ref = ctypes.byref(self._prog)

    def install(self) -> None:
        if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, self._ref, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "the call's seccomp guard could not be installed")


def _call_streams() -> None:
    """Text streams on fds 1 and 2, made once in the worker and inherited by every child.

    A child moves the call's pipes onto those fds, so the same objects write to them, and
    making them per child costs it fifty-odd pages. They are made over a pipe, as a call
    sees them (a stream caches whether its file is seekable), then fds 1 and 2 go back to
    the worker's own. The worker never writes through them (its messages go through the
    socket) and flushes them before each fork, so no child inherits buffered output.
    """
    own = [os.dup(1), os.dup(2)]
    read_end, write_end = os.pipe()
    try:
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        sys.stdout = open(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)  # noqa: SIM115
    finally:
        for target, fd in enumerate(own, start=1):
            os.dup2(fd, target)
        for fd in (*own, read_end, write_end):
            os.close(fd)


def _write_result(payload: dict[str, Any]) -> None:
    data = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(3, view) :]


def _fail(kind: str, message: str, **facts: str) -> None:
    tb = traceback.format_exc(limit=-12)
    traceback_text = tb if tb.strip() != "NoneType: None" else None
    _write_result({"ok": False, "error_type": kind, "error": message, "traceback": traceback_text, **facts})


def _raised(exc: BaseException) -> None:
    """Report what run() raised; a MemoryError is the memory rlimit refusing an allocation.

    That is said as a fact the host words with the limit's size and setting, as the cold
    harness does. Freeing what the frames still hold (the bomb's own data) leaves room
    to write the answer.
    """
    if isinstance(exc, MemoryError):
        traceback.clear_frames(exc.__traceback__)
    text = str(exc)
    message = f"run() raised {type(exc).__name__}{': ' + text if text else ''}"
    _fail("exception", message, **({"limit": "memory"} if isinstance(exc, MemoryError) else {}))


def _call(run: Any, args: dict[str, Any]) -> None:
    try:
        value = run(**args)
    except BaseException as exc:
        return _raised(exc)
    try:
        _write_result({"ok": True, "value": value})
    except (TypeError, ValueError) as exc:
        _fail(
            "not_json",
            f"run() returned {type(value).__name__}, which is not JSON-serialisable ({exc}); "
            "return dicts, lists, strings, numbers, booleans or None",
        )
    return None


# --- the worker: serving calls ----------------------------------------------------------------


def _serve_call(ctl: socket.socket, spare: _Spare, message: bytes, fds: list[int]) -> None:
    """Hand the call to the waiting child, wait for it within its timeout, report how it ended."""
    started = time.monotonic()
    timeout = float(json.loads(message)["limits"]["timeout_s"])
    spare.give(message, fds)
    pidfd = os.pidfd_open(spare.pid)
    try:
        timed_out = not select.select([pidfd], [], [], timeout)[0]
    finally:
        os.close(pidfd)
    if timed_out:
        os.kill(spare.pid, signal.SIGKILL)
    status = os.waitpid(spare.pid, 0)[1]
    _send(ctl, {"status": status, "timed_out": timed_out, "wall_s": round(time.monotonic() - started, 4)})


def _finish() -> None:
    """Kill every process but init and this one, and reap them all (the call's child included)."""
    with contextlib.suppress(ProcessLookupError):  # nobody left to kill
        os.kill(-1, signal.SIGKILL)
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break


def _clean(keep: set[str]) -> None:
    """Empty every place a call can write, so the next call starts from nothing."""
    for root in (*SCRATCH, WORK):
        for name in os.listdir(root):
            if root == WORK and name in keep:
                continue
            _remove(os.path.join(root, name))
    home = os.environ.get("HOME", "")
    if home.startswith(WORK + "/") and os.path.isdir(home):
        for name in os.listdir(home):
            _remove(os.path.join(home, name))


def _remove(path: str) -> None:
    """Delete a file or a whole tree, whatever modes a call left on it (no recursion to exhaust)."""
    if not os.path.isdir(path) or os.path.islink(path):
        os.unlink(path)
        return
    pending, emptied = [path], []
    while pending:
        directory = pending.pop()
        os.chmod(directory, 0o700)  # a call may leave a directory unreadable or unwritable
        emptied.append(directory)
        for entry in os.scandir(directory):
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            else:
                os.unlink(entry.path)
    for directory in reversed(emptied):
        os.rmdir(directory)


def _fingerprint() -> tuple[Any, ...]:
    """What a call must not be able to change about this worker."""
    with open("/proc/self/oom_score_adj") as fh:
        oom = fh.read().strip()
    limits = tuple(resource.getrlimit(r) for r in (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NOFILE))
    return oom, os.getpriority(os.PRIO_PROCESS, 0), tuple(sorted(os.sched_getaffinity(0))), limits


def _import_tool() -> Any:
    sys.path.insert(0, WORK)
    spec = importlib.util.spec_from_file_location("tool", os.path.join(WORK, "tool.py"))
    if spec is None or spec.loader is None:
        raise ImportError("tool.py cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tool"] = module
    spec.loader.exec_module(module)
    run = getattr(module, "run", None)
    if not callable(run):
        raise ImportError("the tool module defines no callable run()")
    return run


def main() -> None:
    ctl = socket.socket(fileno=0)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints of the import go nowhere
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    with open(os.path.join(WORK, FILTER_FILE), "rb") as fh:
        guard = _Guard(fh.read())
    try:
        run = _import_tool()
    except BaseException as exc:
        _send(ctl, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return
    keep = set(os.listdir(WORK))
    _clean(keep)  # what the import left behind is not shared with calls
    _call_streams()
    gc.freeze()  # objects from the import stay out of the collector: children do not copy their pages
    before = _fingerprint()
    spare = _Spare(run, guard)
    _send(ctl, {"ready": True, "pid": os.getpid()})
    while True:
        message, fds, _, _ = socket.recv_fds(ctl, _MAX_MESSAGE, _CALL_FDS)
        if not message:
            return
        if len(fds) != _CALL_FDS:
            _send(ctl, {"retired": True, "error": "a request came without its pipes"})
            return
        _serve_call(ctl, spare, message, fds)
        # The call is over; make sure nothing of it reaches the next one.
        _finish()
        try:
            _clean(keep)
        except OSError:
            _send(ctl, {"retired": True, "error": "a call left files that cannot be removed"})
            return
        if _fingerprint() != before:
            _send(ctl, {"retired": True, "error": "a call changed the worker's limits or scheduling"})
            return
        spare = _Spare(run, guard)
        # The host may pick another worker of the tool while this one is still resetting.
        _send(ctl, {"ready": True})


if __name__ == "__main__":
    main()
