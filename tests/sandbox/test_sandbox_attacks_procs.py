"""Attack suite, part 2: processes, resources and install requests, under bwrap.

Every case checks the host after the run (its process table, host processes, the
installer's call log, the package environment on disk), not just an exit code.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sandbox.helpers import (
    SMALL,
    leftovers,
    marker,
    reexec_prelude,
    run,
)
from toolsmith.config import Settings
from toolsmith.errors import PackageRefused
from toolsmith.isolation.cgroups import PIDS_SLACK, support
from toolsmith.sandbox import Sandbox

pytestmark = pytest.mark.bwrap


# --- processes --------------------------------------------------------------------------
# Fork bombs and processes left behind: test_sandbox_attacks_paths.py, on the cold and warm paths.


def test_killing_the_parent_and_everything_else(bwrap_sandbox: Sandbox, sentinel: subprocess.Popen[bytes]) -> None:
    out = run(
        bwrap_sandbox,
        f"""
        import os, signal
        for target in (os.getppid(), 1, {sentinel.pid}, {os.getpid()}, -1):
            try:
                os.kill(target, signal.SIGKILL)
                print('sent', target)
            except OSError as exc:
                print('failed', target, type(exc).__name__)
        print('still here')
    """,
    )
    assert sentinel.poll() is None, "a host process was killed from inside the sandbox"
    assert f"failed {sentinel.pid} ProcessLookupError" in out.exec.stdout
    assert "still here" in out.exec.stdout


def test_ptrace_of_host_processes_fails(bwrap_sandbox: Sandbox, sentinel: subprocess.Popen[bytes]) -> None:
    out = run(
        bwrap_sandbox,
        f"""
        import ctypes, ctypes.util, os
        libc = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6', use_errno=True)
        for pid in ({sentinel.pid}, {os.getpid()}, 1):
            rc = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
            print(pid, rc, os.strerror(ctypes.get_errno()))
    """,
    )
    lines = out.exec.stdout.splitlines()
    assert [line.split()[1] for line in lines] == ["-1", "-1", "-1"]  # host pids and bwrap's own init
    assert out.exec.ok
    status = Path(f"/proc/{sentinel.pid}/status").read_text()
    assert "TracerPid:\t0" in status
    assert sentinel.poll() is None


# --- resources --------------------------------------------------------------------------


def test_memory_bomb_single_allocation(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, "x = bytearray(8 * 1024 ** 3)")
    assert out.exec.killed_by == "memory"


@pytest.mark.slow
def test_memory_bomb_gradual(bwrap_sandbox: Sandbox) -> None:
    out = run(
        bwrap_sandbox,
        """
        chunks = []
        while True:
            chunks.append(bytearray(32 * 1024 * 1024))
    """,
    )
    assert out.exec.killed_by == "memory"


@pytest.mark.slow
def test_memory_bomb_across_processes_hits_the_memory_cgroup(bwrap_sandbox: Sandbox) -> None:
    if not support()["memory"].usable:
        pytest.skip("no writable memory cgroup")
    out = run(
        bwrap_sandbox,
        f"""
        import os, time
        kids = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                block = bytearray({SMALL.memory_mb // 2} * 1024 * 1024)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(3)
                os._exit(0)
            kids.append(pid)
        statuses = [os.waitpid(k, 0)[1] for k in kids]
        print(statuses)
        raise SystemExit(1 if any(os.WIFSIGNALED(s) for s in statuses) else 0)
    """,
    )
    assert out.exec.killed_by == "memory"


@pytest.mark.slow
def test_cpu_bound_c_loop_is_stopped_by_the_cpu_limit(settings: Settings) -> None:
    from dataclasses import replace

    from toolsmith.isolation.bwrap import BwrapBackend, probe

    if not probe()[0]:
        pytest.skip("bwrap unavailable")
    sandbox = Sandbox(replace(settings, limits=replace(SMALL, cpu_s=1, timeout_s=10)), backend=BwrapBackend())
    out = run(sandbox, "print(sum(range(10 ** 12)))")
    assert out.exec.killed_by == "cpu"


@pytest.mark.slow
def test_catastrophic_regex_is_stopped_by_the_wall_clock(settings: Settings) -> None:
    from dataclasses import replace

    from toolsmith.isolation.bwrap import BwrapBackend, probe

    if not probe()[0]:
        pytest.skip("bwrap unavailable")
    # The sandbox default is an hour, far past pytest's own timeout: the test can only finish
    # with a timeout kill if the call's 1.5 s was the limit applied (no wall-clock bound needed).
    limits = replace(SMALL, timeout_s=3600, cpu_s=3600)
    sandbox = Sandbox(replace(settings, limits=limits), backend=BwrapBackend())
    out = run(sandbox, "import re; print(re.match(r'(a+)+$', 'a' * 64 + 'b'))", timeout_s=1.5)
    assert out.exec.timed_out and out.exec.killed_by == "timeout"


@pytest.mark.slow
def test_sleeping_forever_is_killed(bwrap_sandbox: Sandbox) -> None:
    tag = marker()
    out = run(bwrap_sandbox, reexec_prelude(tag) + "import time\ntime.sleep(10 ** 6)\n", timeout_s=1)
    assert out.exec.killed_by == "timeout"
    assert leftovers(tag) == []


@pytest.mark.slow
def test_stdout_flood_is_capped(bwrap_sandbox: Sandbox) -> None:
    out = run(
        bwrap_sandbox,
        """
        import sys
        while True:
            sys.stdout.write('x' * 65536)
            sys.stderr.write('y' * 65536)
    """,
        timeout_s=1.5,
    )
    assert out.exec.truncated
    assert len(out.exec.stdout) <= SMALL.output_bytes + 200
    assert len(out.exec.stderr) <= SMALL.output_bytes + 200
    assert "cut by the sandbox output cap" in out.exec.stdout


def test_thread_exhaustion_is_bounded(bwrap_sandbox: Sandbox) -> None:
    out = run(
        bwrap_sandbox,
        """
        import threading, time
        ev = threading.Event()
        threads = []
        try:
            while len(threads) < 100_000:
                t = threading.Thread(target=ev.wait)
                t.start()
                threads.append(t)
        except (RuntimeError, MemoryError) as exc:
            print('stopped at', len(threads), exc)
        ev.set()
    """,
    )
    assert out.exec.stdout.startswith("stopped at")
    assert int(out.exec.stdout.split()[2]) <= SMALL.max_procs + PIDS_SLACK


def test_file_descriptor_exhaustion_is_bounded(bwrap_sandbox: Sandbox) -> None:
    out = run(
        bwrap_sandbox,
        """
        files = []
        try:
            while True:
                files.append(open('/dev/null'))
        except OSError as exc:
            print('stopped at', len(files), exc.strerror)
    """,
    )
    assert out.exec.stdout.startswith("stopped at")
    assert int(out.exec.stdout.split()[2]) <= SMALL.open_files
    assert "Too many open files" in out.exec.stdout


# --- install requests -------------------------------------------------------------------


class RecordingIndex:
    """An index that knows a few names and records every lookup."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.lookups: list[str] = []

    def exists(self, name: str) -> bool:
        self.lookups.append(name)
        return name.lower() in self.known


@pytest.fixture
def guarded(bwrap_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> tuple[Sandbox, list[list[str]], RecordingIndex]:
    """The bwrap sandbox with the installer replaced by a recorder and a fake index."""
    calls: list[list[str]] = []
    index = RecordingIndex({"requests", "reqeusts", "humanize", "numpy"})
    monkeypatch.setattr(bwrap_sandbox.env, "_run", lambda argv, what: calls.append(list(argv)))
    monkeypatch.setattr(bwrap_sandbox.env, "_index", lambda: index)
    return bwrap_sandbox, calls, index


@pytest.mark.parametrize(
    "request_text",
    [
        "--index-url http://127.0.0.1:9/simple",
        "-e .",
        "-r requirements.txt",
        "--extra-index-url=http://127.0.0.1:9/",
        "https://127.0.0.1:9/evil-1.0.tar.gz",
        "git+https://127.0.0.1:9/evil.git",
        "evil @ https://127.0.0.1:9/evil.whl",
        "./evil",
        "/tmp/evil.whl",
        "numpy; python_version > '3'",
        "numpy && curl 127.0.0.1:9",
        "numpy$(id)",
        "numpy`id`",
        "numpy|sh",
    ],
)
def test_hostile_install_requests_are_refused_before_anything_runs(
    guarded: tuple[Sandbox, list[list[str]], RecordingIndex], request_text: str
) -> None:
    sandbox, calls, index = guarded
    with pytest.raises(PackageRefused):
        sandbox.run_code("print('should not run')", pip_install=[request_text])
    with pytest.raises(PackageRefused):
        sandbox.run_code("print('should not run')", pip_install=request_text)
    assert calls == [], "the installer ran"
    assert not sandbox.env.path.exists()
    assert not any(name.startswith(("-", "http", "git", ".", "/")) for name in index.lookups)


def test_typosquat_is_refused_with_the_intended_name(guarded: tuple[Sandbox, list[list[str]], RecordingIndex]) -> None:
    sandbox, calls, _ = guarded
    with pytest.raises(PackageRefused) as caught:
        sandbox.run_code("print(1)", pip_install=["reqeusts"])
    assert caught.value.suggestion == "requests"
    assert calls == [] and not sandbox.env.path.exists()


def test_hallucinated_name_is_refused(guarded: tuple[Sandbox, list[list[str]], RecordingIndex]) -> None:
    sandbox, calls, index = guarded
    with pytest.raises(PackageRefused) as caught:
        sandbox.run_code("print(1)", pip_install="quantum-stock-oracle-pro")
    assert "no package of that name exists" in str(caught.value)
    assert index.lookups == ["quantum-stock-oracle-pro"]
    assert calls == []


def test_string_pip_install_is_not_split_per_character(
    guarded: tuple[Sandbox, list[list[str]], RecordingIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox, calls, index = guarded
    monkeypatch.setattr(sandbox.env, "pins", lambda requests: ())
    sandbox.run_code("print(1)", pip_install="humanize, numpy")
    assert index.lookups == ["humanize", "numpy"]
    install = [c for c in calls if "install" in c]
    assert len(install) == 1 and install[0][-2:] == ["humanize", "numpy"]
    assert "--index-url" in install[0] and "--only-binary" in install[0]
