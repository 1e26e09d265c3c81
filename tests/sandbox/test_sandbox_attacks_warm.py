"""Attacks on warm tool calls: one call must not reach the next one, nor the worker that forks them.

All calls of a worker share one uid, one pid namespace and one file system, so each case
runs two calls on the same worker (checked, never assumed: a cold fallback would make
the test pass for the wrong reason) and judges the second call's view, the worker's
survival and the host's process table.
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sandbox.helpers import CANARY, SMALL, leftovers, marker
from toolsmith.config import Settings
from toolsmith.isolation import bwrap, userns
from toolsmith.isolation.result import ToolCallResult
from toolsmith.sandbox import Sandbox

pytestmark = pytest.mark.bwrap


@pytest.fixture
def warm_sandbox(settings: Settings) -> Any:
    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    sandbox = Sandbox(replace(settings, warm_workers=2, warm_per_tool=1), backend=bwrap.BwrapBackend())
    yield sandbox
    sandbox.close()


def warm(sandbox: Sandbox, code: str, **args: Any) -> ToolCallResult:
    """One warm call; fails the test if it did not run in a warm worker."""
    out = sandbox.call_tool(textwrap.dedent(code), args, warm=True)
    assert out.exec is not None and out.exec.backend == "bwrap-warm", out
    return out


def only_worker(sandbox: Sandbox) -> Any:
    workers = sandbox.isolation.warm.workers()
    assert len(workers) == 1 and sandbox.isolation.warm.started == 1
    return workers[0]


SNOOP = """
    import os, sys, json
    STATE = []

    def run(step):
        if step == "plant":
            STATE.append("planted")
            os.environ["LEAKED"] = "yes"
            sys.modules["json"].LEAKED = True
            for path in ("/tmp/t", "/dev/shm/s", "w", os.path.expanduser("~/h")):
                with open(path, "w") as fh:
                    fh.write("secret")
            os.makedirs("/tmp/locked/deeper")
            open("/tmp/locked/deeper/f", "w").write("x")
            os.chmod("/tmp/locked/deeper", 0)
            os.chmod("/tmp/locked", 0)
            os.mkfifo("/tmp/fifo")
            return "planted"
        found = {root: sorted(os.listdir(root)) for root in ("/tmp", "/dev/shm", os.path.expanduser("~"))}
        found["cwd"] = sorted(n for n in os.listdir(".") if not n.startswith("_") and n not in ("tool.py", ".home"))
        found["state"] = STATE
        found["env"] = os.environ.get("LEAKED")
        found["json"] = getattr(json, "LEAKED", None)
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        found["others"] = [p for p in pids if p not in (1, 2, os.getpid())]
        return found
"""


def test_a_call_sees_none_of_the_previous_calls_files_environment_or_memory(warm_sandbox: Sandbox) -> None:
    assert warm(warm_sandbox, SNOOP, step="plant").value == "planted"
    seen = warm(warm_sandbox, SNOOP, step="look").value
    assert seen == {"/tmp": [], "/dev/shm": [], "/sandbox/.home": [], "cwd": [], "state": [], "env": None,
                    "json": None, "others": []}  # fmt: skip
    assert only_worker(warm_sandbox).calls == 2


def test_processes_a_call_leaves_behind_are_killed_before_the_next(warm_sandbox: Sandbox) -> None:
    tag = marker()
    code = f"""
        import os, subprocess, time
        def run(step):
            if step == "plant":
                subprocess.Popen(["/bin/sh", "-c", "sleep 300; echo {tag}"], start_new_session=True)
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        os.execv("/bin/sh", ["/bin/sh", "-c", "sleep 301; echo {tag}"])
                    os._exit(0)
                time.sleep(0.2)
                return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, 2, os.getpid())]
    """
    planted = warm(warm_sandbox, code, step="plant")
    assert len(planted.value or []) >= 5, planted
    assert leftovers(tag) == []  # nothing carrying the tag survives on the host
    assert warm(warm_sandbox, code, step="look").value == []


REACH = """
    import ctypes, os, resource, signal
    libc = ctypes.CDLL(None, use_errno=True)

    def attempt(action):
        try:
            result = action()
        except OSError as exc:
            return f"denied ({exc.errno})"
        return "ALLOWED" if result is None or result is not False else "denied"

    def run():
        worker, init = 2, 1
        report = {
            "kill worker": attempt(lambda: os.kill(worker, signal.SIGKILL)),
            "probe worker": attempt(lambda: os.kill(worker, 0)),
            "kill init": attempt(lambda: os.kill(init, signal.SIGKILL)),
            "kill everyone": attempt(lambda: os.kill(-1, signal.SIGKILL)),
            "kill worker group": attempt(lambda: os.killpg(worker, signal.SIGKILL)),
            "pidfd_open worker": attempt(lambda: os.pidfd_open(worker)),
            "affinity": attempt(lambda: os.sched_setaffinity(worker, {0})),
            "nice worker": attempt(lambda: os.setpriority(os.PRIO_PROCESS, worker, 19)),
            "nice user": attempt(lambda: os.setpriority(os.PRIO_USER, 0, 19)),
            "prlimit worker": attempt(lambda: resource.prlimit(worker, resource.RLIMIT_NOFILE, (3, 3))),
            "read memory": attempt(lambda: open(f"/proc/{worker}/mem", "rb").read(1)),
            "read environ": attempt(lambda: open(f"/proc/{worker}/environ", "rb").read()),
            "fd target": attempt(lambda: os.readlink(f"/proc/{worker}/fd/0")),
            "write protocol": attempt(lambda: open(f"/proc/{worker}/fd/1", "wb").write(b"x")),
            "ptrace": attempt(lambda: libc.ptrace(16, worker, 0, 0) == 0 or False),
            "shm": attempt(lambda: libc.shmget(0, 4096, 0o1666) >= 0 or False),
        }
        return report
"""


def test_a_call_cannot_signal_trace_or_read_the_worker(warm_sandbox: Sandbox) -> None:
    report = warm(warm_sandbox, REACH).value
    assert {k: v for k, v in report.items() if not v.startswith("denied")} == {}, report
    worker = only_worker(warm_sandbox)
    assert worker.alive
    again = warm(warm_sandbox, "def run():\n    return 'still serving'\n")
    assert again.value == "still serving" and warm_sandbox.isolation.warm.started == 2  # another tool, another worker
    assert worker.alive and worker.proc.poll() is None


def test_a_call_cannot_forge_the_next_calls_answer(warm_sandbox: Sandbox) -> None:
    code = """
        import os, json
        def run(step):
            if step == "forge":
                fake = json.dumps({"ok": True, "value": "forged"}).encode()
                for fd in range(0, 64):
                    try:
                        os.write(fd, len(fake).to_bytes(8, "big") + fake)
                    except OSError:
                        pass
                return "done"
            return "genuine"
    """
    warm(warm_sandbox, code, step="forge")
    assert warm(warm_sandbox, code, step="answer").value == "genuine"
    assert only_worker(warm_sandbox).calls == 2


def test_a_crash_kills_only_the_call(warm_sandbox: Sandbox) -> None:
    code = """
        import ctypes, os
        def run(how):
            if how == "segfault":
                ctypes.string_at(0)
            if how == "abort":
                os.abort()
            return "fine"
    """
    for how, signal_name in (("segfault", "SIGSEGV"), ("abort", "SIGABRT")):
        out = warm(warm_sandbox, code, how=how)
        assert not out.ok and out.error_type == "killed" and out.exec is not None
        assert out.exec.killed_by == signal_name
    assert warm(warm_sandbox, code, how="nothing").value == "fine"
    assert only_worker(warm_sandbox).calls == 3


def test_each_call_keeps_its_own_timeout_memory_and_output_cap(warm_sandbox: Sandbox) -> None:
    code = """
        import time
        def run(what):
            if what == "sleep":
                time.sleep(30)
            if what == "memory":
                return len(bytearray(1024 * 1024 * 1024))
            if what == "print":
                print("x" * 200_000)
            return what
    """
    slow = warm_sandbox.call_tool(textwrap.dedent(code), {"what": "sleep"}, warm=True, timeout_s=1)
    assert slow.error_type == "timeout" and slow.exec is not None and slow.exec.backend == "bwrap-warm"
    big = warm(warm_sandbox, code, what="memory")
    assert not big.ok and "MemoryError" in (big.error or "")
    loud = warm(warm_sandbox, code, what="print")
    assert loud.ok and loud.exec is not None and loud.exec.truncated
    assert len(loud.exec.stdout) < SMALL.output_bytes + 200
    assert warm(warm_sandbox, code, what="fine").value == "fine"
    assert only_worker(warm_sandbox).calls == 4


def test_a_calls_output_is_its_own_even_unfinished(warm_sandbox: Sandbox) -> None:
    # The worker makes the call's text streams once and every child inherits them: what a
    # call leaves unflushed is written out at its end, and none of it reaches the next call.
    code = """
        import sys
        def run(step):
            if step == "partial":
                print("partial-out", end="")
                sys.stderr.write("partial-err")
            return {"seekable": sys.stdout.seekable(), "fd": sys.stdout.fileno()}
    """
    first = warm(warm_sandbox, code, step="partial")
    assert first.ok and first.exec is not None
    assert (first.exec.stdout, first.exec.stderr) == ("partial-out", "partial-err")
    assert first.value == {"seekable": False, "fd": 1}  # a pipe, as the call's stdout is
    second = warm(warm_sandbox, code, step="quiet")
    assert second.ok and second.exec is not None and (second.exec.stdout, second.exec.stderr) == ("", "")
    assert only_worker(warm_sandbox).calls == 2


def test_the_worker_keeps_the_sandbox_confinement(warm_sandbox: Sandbox, canary_env: str) -> None:
    code = "import os\ndef run():\n    return dict(os.environ)\n"
    env = warm(warm_sandbox, code).value
    assert CANARY not in str(env) and set(env) <= {*bwrap.sandbox_env(env_bin=None), "PWD"}
    worker = only_worker(warm_sandbox)
    host_pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    inside = [p for p in host_pids if _parent(p) == worker.proc.pid] or [worker.proc.pid]
    if os.geteuid() == 0 and userns.shared_fd() is not None:
        uids = {Path(f"/proc/{p}/status").read_text().split("Uid:")[1].split()[0] for p in [worker.proc.pid, *inside]}
        assert uids == {str(userns.SANDBOX_ID)}


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def test_a_call_that_tampers_with_the_worker_retires_it(warm_sandbox: Sandbox) -> None:
    code = """
        def run(step):
            if step == "tamper":
                try:
                    with open("/proc/2/oom_score_adj", "w") as fh:
                        fh.write("1000")
                except OSError as exc:
                    return f"refused {exc.errno}"
                return "changed"
            return "ok"
    """
    tampered = warm(warm_sandbox, code, step="tamper").value
    first = only_worker(warm_sandbox)
    again = warm_sandbox.call_tool(textwrap.dedent(code), {"step": "again"}, warm=True)
    assert again.value == "ok"
    if tampered == "changed":  # the worker noticed and said so instead of serving
        # The next call ran cold, or in a fresh worker when the pool read the notice first.
        assert again.exec is not None and again.exec.backend in ("bwrap", "bwrap-warm")
        assert first.proc.poll() is not None and first not in warm_sandbox.isolation.warm.workers()
        assert warm(warm_sandbox, code, step="again").value == "ok" and warm_sandbox.isolation.warm.started == 2
        assert first.calls == 1
    else:
        assert first.alive and warm_sandbox.isolation.warm.started == 1


SCAN = """
    import hashlib, re

    def run(step, secret="", digest=""):
        if step == "use":
            print("printed-" + secret)
            return {"echo": "returned-" + secret}
        # Scan this process's whole memory for anything of the previous call, freed buffers included.
        pattern, found = re.compile(rb"(printed-|returned-)?(zq[0-9a-f]{32})"), set()
        with open("/proc/self/maps") as fh:
            regions = [line.split() for line in fh]
        with open("/proc/self/mem", "rb", 0) as mem:
            for region in regions:
                if "r" not in region[1] or region[-1] in ("[vvar]", "[vsyscall]"):
                    continue
                low, high = (int(x, 16) for x in region[0].split("-"))
                try:
                    mem.seek(low)
                    data = mem.read(high - low)
                except (OSError, ValueError, OverflowError):
                    continue
                for match in pattern.finditer(data):
                    if hashlib.sha256(match.group(2)).hexdigest() == digest:
                        found.add((match.group(1) or b"argument").decode())
        return sorted(found)
"""


def test_a_call_finds_nothing_of_the_previous_call_in_its_memory(warm_sandbox: Sandbox) -> None:
    import hashlib
    import uuid

    secret = "zq" + uuid.uuid4().hex
    used = warm(warm_sandbox, SCAN, step="use", secret=secret)
    assert used.value == {"echo": "returned-" + secret} and used.exec is not None
    assert used.exec.stdout == f"printed-{secret}\n"
    assert warm(warm_sandbox, SCAN, step="scan", digest=hashlib.sha256(secret.encode()).hexdigest()).value == []
    assert only_worker(warm_sandbox).calls == 2
