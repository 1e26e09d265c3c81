"""The warm worker's own program: it runs INSIDE the sandbox, so it imports the standard library only.

Started by :mod:`toolsmith.sandbox.warm` under bwrap with the tool's code as ``tool.py``
(read only), it imports the tool once, then serves calls read from stdin as
length-prefixed JSON frames, answering on stdout. Each call runs in a child forked from
this already-imported process:

* the child starts a new session, gets fresh pipes for stdout, stderr and the result
  (fd 3), closes every other descriptor (the protocol pipes included), sets the call's
  own rlimits and installs a second seccomp filter (built on the host, see
  :func:`toolsmith.sandbox.seccomp.guard_program`) that refuses signals, pidfds,
  scheduling and rlimit changes aimed at this worker or the sandbox's init, and SysV or
  POSIX message IPC that would outlive the call;
* this worker is not dumpable, so the child (same uid) cannot read its memory, its
  environment or its descriptors through ``/proc``;
* after the call every other process in the sandbox is killed (``kill(-1)`` in a pid
  namespace spares only init and the caller, and cannot be outrun by forks), reaped
  (the worker is a child subreaper), and ``/tmp``, ``/dev/shm``, the work directory and
  ``$HOME`` are emptied; then the worker checks nobody changed its own scheduling,
  OOM score or limits, and exits (to be replaced) if someone did.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib.util
import json
import os
import resource
import selectors
import signal
import struct
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
_MAX_RESULT_BYTES = 8 * 1024 * 1024
_HEADER = struct.Struct(">Q")
_GRACE_S = 0.25
_POLL_S = 0.05


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True)


def _send(fd: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload, ensure_ascii=False).encode()
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _recv(fd: int) -> dict[str, Any] | None:
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exact(fd, _HEADER.unpack(header)[0])
    return None if body is None else dict(json.loads(body))


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class _Capped:
    """First and last ``cap/2`` bytes of a stream, and how much was dropped between."""

    def __init__(self, cap: int) -> None:
        self.half, self.head, self.tail, self.dropped = max(cap // 2, 1), bytearray(), bytearray(), 0

    def feed(self, chunk: bytes) -> None:
        room = self.half - len(self.head)
        self.head += chunk[: max(room, 0)]
        rest = chunk[max(room, 0) :]
        if rest:
            self.tail += rest
            excess = len(self.tail) - self.half
            if excess > 0:
                self.dropped += excess
                del self.tail[:excess]

    def text(self) -> str:
        head, tail = self.head.decode("utf-8", "replace"), self.tail.decode("utf-8", "replace")
        if self.dropped:
            return f"{head}\n[... {self.dropped} bytes cut by the sandbox output cap ...]\n{tail}"
        return head + tail


# --- the child: one call -------------------------------------------------------------------


class _Spare:
    """A child forked ahead of its call (so the fork is off the call's path), waiting for it."""

    def __init__(self, run: Any, guard: bytes) -> None:
        go, out, err, result = os.pipe(), os.pipe(), os.pipe(), os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(go[1])
            _child(run, go[0], (out[1], err[1], result[1]), guard)
        for fd in (go[0], out[1], err[1], result[1]):
            os.close(fd)
        self.go, self.out, self.err, self.result = go[1], out[0], err[0], result[0]


def _child(run: Any, go: int, fds: tuple[int, int, int], guard: bytes) -> None:
    """Runs in the forked child: wait for the call, confine it, run it; never returns."""
    code = 0
    try:
        os.setsid()
        _redirect(go, fds)
        _install(guard)  # everything that does not depend on the call is done before it arrives
        os.chdir(WORK)
        sys.stdout = open(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)  # noqa: SIM115
        request = _recv(4)
        if request is None:  # the worker is shutting down
            os._exit(0)
        _limit(request["limits"])
        _call(run, json.loads(request["args"]))
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        # Closing the pipes tells the worker the call is over before this process is torn down.
        os.closerange(1, 5)
        os._exit(code)


def _redirect(go: int, fds: tuple[int, int, int]) -> None:
    """stdin from nowhere, stdout/stderr/result (fd 3) to the worker, the request on fd 4; nothing else."""
    out, err, result = fds
    null = os.open(os.devnull, os.O_RDONLY)
    for source, target in ((null, 0), (out, 1), (err, 2), (result, 3), (go, 4)):
        os.dup2(source, target)
    os.closerange(5, resource.getrlimit(resource.RLIMIT_NOFILE)[0])


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


def _install(guard: bytes) -> None:
    program = ctypes.create_string_buffer(guard)
    prog = _Prog(len(guard) // 8, ctypes.cast(program, ctypes.c_void_p))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "the call's seccomp guard could not be installed")


def _write_result(payload: dict[str, Any]) -> None:
    data = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(3, view) :]


def _fail(kind: str, message: str) -> None:
    tb = traceback.format_exc(limit=-12)
    _write_result(
        {"ok": False, "error_type": kind, "error": message, "traceback": tb if tb.strip() != "NoneType: None" else None}
    )


def _call(run: Any, args: dict[str, Any]) -> None:
    try:
        value = run(**args)
    except BaseException as exc:
        return _fail("exception", f"run() raised {type(exc).__name__}: {exc}")
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


def _serve_call(spare: _Spare, request: dict[str, Any]) -> dict[str, Any]:
    """Hand the request to the waiting child and collect what it says; the reply to send."""
    started = time.monotonic()
    limits = request["limits"]
    _send(spare.go, request)
    os.close(spare.go)
    out, err = _Capped(limits["output_bytes"]), _Capped(limits["output_bytes"])
    result = bytearray()
    deadline = started + float(limits["timeout_s"])
    timed_out = _pump(spare.pid, {spare.out: out, spare.err: err, spare.result: result}, deadline)
    return {
        "status": _status(spare.pid, timed_out, wrote=bool(result)),
        "timed_out": timed_out,
        "stdout": out.text(),
        "stderr": err.text(),
        "truncated": bool(out.dropped or err.dropped),
        "result": result.decode("utf-8", "replace") if len(result) <= _MAX_RESULT_BYTES else None,
        "too_large": len(result) > _MAX_RESULT_BYTES,
        "wall_s": round(time.monotonic() - started, 4),
    }


def _status(pid: int, timed_out: bool, *, wrote: bool) -> int:
    """The child's wait status without waiting for its teardown when it wrote a result.

    A child that wrote its result closes its pipes and calls ``_exit(0)`` right after;
    the status is read now if it is already there, else taken as that clean exit.
    """
    if timed_out:
        os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]
    done, status = os.waitpid(pid, 0 if not wrote else os.WNOHANG)
    return status if done else 0


def _pump(pid: int, sinks: dict[int, Any], deadline: float) -> bool:
    """Read the call's pipes until they close (or the child is gone); True on timeout."""
    selector = selectors.DefaultSelector()
    for fd in sinks:
        selector.register(fd, selectors.EVENT_READ)
    grace: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                return True
            if grace is None and os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                grace = now + _GRACE_S  # exited; a leftover may hold a pipe open
            if grace is not None and now >= grace:
                break
            # Polled while the child runs: a process it left behind may hold a pipe open.
            for key, _ in selector.select(timeout=min(deadline - now, (grace or now + _POLL_S) - now)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                else:
                    _feed(sinks[key.fd], chunk)
        while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            if time.monotonic() >= deadline:
                return True
            time.sleep(0.001)
        return False
    finally:
        for fd in list(sinks):
            os.close(fd)
        selector.close()


def _feed(sink: Any, chunk: bytes) -> None:
    if not isinstance(sink, bytearray):
        sink.feed(chunk)
    elif len(sink) <= _MAX_RESULT_BYTES:  # one byte over is enough to say "too large"
        sink += chunk


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
    requests, replies = 0, os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints must not corrupt the protocol
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    with open(os.path.join(WORK, FILTER_FILE), "rb") as fh:
        guard = fh.read()
    try:
        run = _import_tool()
    except BaseException as exc:
        _send(replies, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return
    keep = set(os.listdir(WORK))
    _clean(keep)  # what the import left behind is not shared with calls
    gc.freeze()  # objects from the import stay out of the collector: children do not copy their pages
    before = _fingerprint()
    spare = _Spare(run, guard)
    _send(replies, {"ready": True, "pid": os.getpid()})
    while (request := _recv(requests)) is not None:
        _send(replies, _serve_call(spare, request))
        # The answer is out; now make sure nothing of this call reaches the next one.
        _finish()
        try:
            _clean(keep)
        except OSError:
            _send(replies, {"retired": True, "error": "a call left files that cannot be removed"})
            return
        if _fingerprint() != before:
            _send(replies, {"retired": True, "error": "a call changed the worker's limits or scheduling"})
            return
        spare = _Spare(run, guard)


if __name__ == "__main__":
    main()
