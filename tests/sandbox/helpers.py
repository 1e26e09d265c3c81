"""Constants and host probes shared by the sandbox tests (fixtures live in conftest.py)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import textwrap
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from toolsmith.isolation import Limits
from toolsmith.sandbox import CodeRun, Sandbox

CANARY = "sk-canary-" + uuid.uuid4().hex
SMALL = Limits(
    timeout_s=10.0,
    memory_mb=384,
    cpu_s=5,
    max_procs=48,
    file_size_mb=8,
    open_files=96,
    output_bytes=32 * 1024,
    tmp_size_mb=16,
)


def marker() -> str:
    return "toolsmith-attack-" + uuid.uuid4().hex[:12]


def reexec_prelude(tag: str) -> str:
    """Script prelude that re-executes itself with ``tag`` in argv, so the host can find
    every descendant by scanning /proc/*/cmdline."""
    return (
        "import os, sys\n"
        f"if {tag!r} not in sys.argv:\n"
        f"    os.execv(sys.executable, [sys.executable, '-I', '-S', os.path.abspath(sys.argv[0]), {tag!r}])\n"
    )


def processes_with(tag: str) -> list[int]:
    """Host pids whose command line contains ``tag`` (zombies have none)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if tag.encode() in cmdline:
            found.append(int(entry.name))
    return found


# Forks as fast as it can for two seconds; a limit that holds makes fork() fail, not the run.
# Each process says once when a fork is refused: proof, from inside, that the bomb reached
# a limit. Sampling the host's process table can miss the peak on a loaded machine.
FORK_REFUSED = "fork refused at the process cap"
FORK_BOMB = textwrap.dedent(f"""
    import time
    start = time.monotonic()
    refused = False
    while time.monotonic() - start < 2:
        try:
            os.fork()
        except OSError:
            if not refused:
                refused = True
                print({FORK_REFUSED!r}, flush=True)
            time.sleep(0.01)
    os._exit(0)
""")


@contextlib.contextmanager
def process_peak(tag: str) -> Any:
    """Sample the host's process table for ``tag`` while the block runs; yields the samples."""
    peak: list[int] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak.append(len(processes_with(tag)))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        yield peak
    finally:
        stop.set()
        watcher.join()


def leftovers(tag: str, settle_s: float = 1.0) -> list[int]:
    """Processes carrying ``tag`` that are still alive after ``settle_s``."""
    deadline = time.monotonic() + settle_s
    alive = processes_with(tag)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = processes_with(tag)
    for pid in alive:  # do not let a failing test leak processes into the machine
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    return alive


class LoopbackServer:
    """A TCP server on the host's 127.0.0.1 that records what reaches it."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.received: list[bytes] = []
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.settimeout(1.0)
            try:
                self.received.append(conn.recv(4096))
                conn.sendall(b"hello from the host\n")
            except OSError:
                pass
            finally:
                conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


def run(sandbox: Sandbox, code: str, **kwargs: Any) -> CodeRun:
    """``run_code`` with the script dedented, as the attack cases write it inline."""
    return sandbox.run_code(textwrap.dedent(code), **kwargs)


def everything(outcome: CodeRun) -> str:
    """All text a run handed back: where a leaked secret would show up."""
    return outcome.exec.stdout + outcome.exec.stderr + json.dumps(outcome.to_dict())


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_state(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): digest(p) for p in sorted(root.rglob("*")) if p.is_file()}
