"""Attack suite, part 3: kernel-wide state, the run's host uid, sockets and CPU, under bwrap.

bwrap started by root maps the sandbox to the host's uid 0; capabilities are dropped,
but the kernel still compares uids in places (sysctls, per-user limits, root-only /proc
files, SO_PEERCRED). These cases attack exactly that, plus the host's abstract unix
sockets (shared whenever the network is), the whole-run CPU budget and the installer's
sandbox. Each one judges the host afterwards or while the run is held open: sysctl
values, the sandboxed process's real uid as the host sees it, the host's own inotify
budget, a host socket's accept log, the CPU time the host accounted to the run.
"""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox.helpers import (
    CANARY,
    SMALL,
    everything,
    leftovers,
    marker,
    processes_with,
    reexec_prelude,
    run,
)
from toolsmith.config import Settings
from toolsmith.isolation import bwrap, cgroups, landlock, userns
from toolsmith.isolation.backend import base_python
from toolsmith.isolation.launch import run_plan
from toolsmith.sandbox import Sandbox

pytestmark = pytest.mark.bwrap

_ROOT = os.geteuid() == 0


def _hold(seconds: float) -> str:
    """Script tail keeping the run alive, so the host can look at it meanwhile."""
    return f"import time\nprint('holding', flush=True)\ntime.sleep({seconds})\n"


def _wait_for(tag: str, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = processes_with(tag)
        if found:
            return found
        time.sleep(0.02)
    return []


def _in_background(sandbox: Sandbox, code: str, **kwargs: object) -> tuple[threading.Thread, list[object]]:
    box: list[object] = []
    thread = threading.Thread(target=lambda: box.append(run(sandbox, code, **kwargs)))
    thread.start()
    return thread, box


# --- the run's uid on the host ------------------------------------------------------------


@pytest.mark.slow
def test_the_program_is_never_host_root(bwrap_sandbox: Sandbox) -> None:
    tag = marker()
    thread, box = _in_background(bwrap_sandbox, reexec_prelude(tag) + _hold(3))
    try:
        pids = _wait_for(tag)
        assert pids, "the sandboxed program did not start"
        uids = {
            int(line.split()[1])
            for pid in pids
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("Uid:")
        }
        groups = {
            line.split(":", 1)[1].strip()
            for pid in pids
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("Groups:")
        }
    finally:
        thread.join()
        leftovers(tag)
    expected = userns.SANDBOX_ID if _ROOT else os.geteuid()
    assert uids == {expected}, f"the host sees the program as uid {uids}"
    if _ROOT:
        assert groups == {""}, "no supplementary group of the launcher survives"
    out = box[0]
    assert "holding" in out.exec.stdout  # type: ignore[attr-defined]


def test_sysctls_cannot_be_written(bwrap_sandbox: Sandbox) -> None:
    watched = [
        "kernel/core_pattern",
        "kernel/core_uses_pid",
        "vm/swappiness",
        "vm/overcommit_memory",
        "kernel/pid_max",
        "fs/inotify/max_user_instances",
    ]
    before = {name: Path("/proc/sys", name).read_text() for name in watched}
    out = run(
        bwrap_sandbox,
        f"""
        import os
        writable = []
        for root, dirs, files in os.walk('/proc/sys'):
            for name in files:
                path = os.path.join(root, name)
                try:
                    os.close(os.open(path, os.O_WRONLY))  # opened, never written
                    writable.append(path)
                except OSError:
                    pass
        print('writable', len(writable), writable[:5])
        for name in {watched!r}:
            path = '/proc/sys/' + name
            try:
                value = open(path).read()
                with open(path, 'w') as fh:  # the value it already has: harmless if it got through
                    fh.write(value)
                print('WROTE', name)
            except OSError as exc:
                print('refused', name, exc.strerror)
    """,
    )
    assert out.exec.ok, out.exec.stderr
    assert "writable 0 []" in out.exec.stdout
    assert "WROTE" not in out.exec.stdout
    assert {name: Path("/proc/sys", name).read_text() for name in watched} == before


def test_root_only_proc_files_are_unreadable(bwrap_sandbox: Sandbox) -> None:
    candidates = [
        p
        for p in (
            "/proc/slabinfo",
            "/proc/vmallocinfo",
            "/proc/pagetypeinfo",
            "/proc/timer_list",
            "/proc/kpagecount",
            "/proc/kmsg",
        )
        if Path(p).exists()
    ]
    if not candidates:
        pytest.skip("no root-only /proc files on this kernel")
    out = run(
        bwrap_sandbox,
        f"""
        for path in {candidates!r}:
            try:
                data = open(path, 'rb').read(64)
                print('READ', path, len(data))
            except OSError as exc:
                print('refused', path, exc.strerror)
    """,
    )
    assert out.exec.ok, out.exec.stderr
    assert "READ" not in out.exec.stdout
    assert out.exec.stdout.count("refused") == len(candidates)


@pytest.mark.skipif(not _ROOT, reason="a non-root launcher's runs share its uid, and so its per-user limits")
@pytest.mark.slow
def test_per_user_limits_are_not_the_host_roots(settings: Settings) -> None:
    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    # Enough descriptors to reach the per-user inotify limit (128 by default) first.
    sandbox = Sandbox(replace(settings, limits=replace(SMALL, open_files=1024)), backend=bwrap.BwrapBackend())
    tag = marker()
    code = reexec_prelude(tag) + textwrap.dedent("""
        import ctypes, time
        libc = ctypes.CDLL(None, use_errno=True)
        held = []
        while len(held) < 10_000:
            fd = libc.inotify_init()
            if fd < 0:
                break
            held.append(fd)
        print('held', len(held), flush=True)
        time.sleep(3)
    """)
    thread, box = _in_background(sandbox, code)
    try:
        assert _wait_for(tag)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not box and not _holding(tag):
            time.sleep(0.05)
        assert _holding(tag), "the sandbox did not get to hold its inotify instances"
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init()  # the host's root, while the sandbox holds every instance it can
        if fd >= 0:
            os.close(fd)
    finally:
        thread.join()
        leftovers(tag)
    out = box[0]
    assert "held " in out.exec.stdout  # type: ignore[attr-defined]
    assert fd >= 0, "the sandbox exhausted host root's inotify instances"


def _holding(tag: str) -> bool:
    """Whether a tagged process holds (about) the default 128 inotify instances."""
    for pid in processes_with(tag):
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        if sum(link == "anon_inode:inotify" for link in links) >= 100:
            return True
    return False


def test_nested_user_namespaces_cannot_be_created(bwrap_sandbox: Sandbox) -> None:
    tag = marker()
    out = run(
        bwrap_sandbox,
        reexec_prelude(tag)
        + textwrap.dedent("""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        print('unshare', libc.unshare(0x10000000), ctypes.get_errno())
        pid = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD)
        if pid == 0:
            libc.syscall(60, 0)
        print('clone', pid, ctypes.get_errno())
    """),
    )
    assert out.exec.ok, out.exec.stderr
    lines = dict(line.split(" ", 1) for line in out.exec.stdout.splitlines())
    assert lines["unshare"].startswith("-1 ") and lines["clone"].startswith("-1 ")
    assert leftovers(tag) == []


def test_the_only_inherited_fds_are_the_standard_streams(bwrap_sandbox: Sandbox, canary_env: str) -> None:
    out = run(
        bwrap_sandbox,
        """
        import os
        own_ns = os.readlink('/proc/self/ns/user')
        for fd in sorted(int(f) for f in os.listdir('/proc/self/fd')):
            try:
                target = os.readlink(f'/proc/self/fd/{fd}')
            except OSError:
                continue  # the listing's own descriptor, already closed
            print(fd, 'own-userns' if target == own_ns else target)
            if fd > 2 and target != own_ns:
                os.lseek(fd, 0, 0)
                print(os.read(fd, 1 << 16))
    """,
    )
    assert out.exec.ok, out.exec.stderr
    fds = dict(line.split(" ", 1) for line in out.exec.stdout.splitlines())
    assert fds["0"] == "/dev/null" and fds["1"].startswith("pipe:") and fds["2"].startswith("pipe:")
    # bwrap 0.8 does not close --userns; that descriptor names the namespace the run is in.
    assert set(fds) - {"0", "1", "2"} <= {k for k, v in fds.items() if v == "own-userns"}
    assert canary_env not in everything(out) and "memfd:" not in out.exec.stdout


def test_kernel_interfaces_no_tool_needs_are_denied(bwrap_sandbox: Sandbox) -> None:
    import platform

    from toolsmith.isolation.seccomp import DENIED

    column = {"x86_64": 0, "aarch64": 1}.get(platform.machine())
    if column is None:
        pytest.skip("no seccomp filter on this architecture")
    description = "toolsmith-test-" + uuid.uuid4().hex[:10]
    # add_key(type, description, payload, len, KEY_SPEC_USER_KEYRING): the user keyring is
    # per uid on the host, not per namespace.
    calls = {
        "add_key": [b"user", description.encode(), CANARY.encode(), len(CANARY), -4],
        "keyctl": [0, -4, 0, 0, 0],  # KEYCTL_GET_KEYRING_ID
        "bpf": [0, 0, 0],
        "perf_event_open": [0, 0, -1, -1, 0],
        "userfaultfd": [0],
        "io_uring_setup": [1, 0],
        "open_by_handle_at": [-100, 0, 0],
        "fsopen": [b"tmpfs", 0],
        "mount": [b"none", b"/tmp", b"tmpfs", 0, 0],
    }
    table = {name: [DENIED[name][column], *args] for name, args in calls.items()}
    out = run(
        bwrap_sandbox,
        f"""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        for name, (nr, *args) in {table!r}.items():
            print(name, libc.syscall(nr, *args), ctypes.get_errno())
    """,
    )
    assert out.exec.ok, out.exec.stderr
    results = dict(line.split(" ", 1) for line in out.exec.stdout.splitlines())
    assert set(results) == set(calls)
    assert all(value == "-1 1" for value in results.values()), results  # EPERM from the filter
    assert description not in Path("/proc/keys").read_text()  # nothing reached a host keyring


def test_descriptors_of_bwraps_init_cannot_be_taken(bwrap_sandbox: Sandbox) -> None:
    out = run(
        bwrap_sandbox,
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        init = libc.syscall(434, 1, 0)  # pidfd_open(bwrap's init): refused by the second filter
        child = os.fork()
        if child == 0:
            os.pause()
        pidfd = libc.syscall(434, child, 0)  # a pidfd of its own child is allowed...
        taken = [libc.syscall(438, pidfd, fd, 0) for fd in range(16)]  # ...but pidfd_getfd is not
        print('init pidfd', init >= 0, 'child pidfd', pidfd >= 0, 'taken', sum(fd >= 0 for fd in taken))
        os.kill(child, 9)
    """,
    )
    assert out.exec.ok, out.exec.stderr
    assert out.exec.stdout.strip() == "init pidfd False child pidfd True taken 0"


# --- abstract unix sockets -------------------------------------------------------------------


class AbstractServer:
    """A host service on an abstract unix socket (an X server, a bus, a shim) that logs peers."""

    def __init__(self) -> None:
        self.name = "toolsmith-test-" + uuid.uuid4().hex[:10]
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind("\0" + self.name)
        self.sock.listen(4)
        self.sock.settimeout(0.1)
        self.accepted: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.accepted.append(conn.recv(200) or b"(connected)")
                    conn.sendall(b"host secret " + CANARY.encode())
                except OSError:
                    self.accepted.append(b"(connected)")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@pytest.fixture
def abstract_server() -> Iterator[AbstractServer]:
    server = AbstractServer()
    yield server
    server.close()


_CONNECT = """
    import socket
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect('\\0{name}')
        s.sendall(b'from the sandbox')
        print('connected', s.recv(100))
    except OSError as exc:
        print('refused', exc.strerror)
"""


def test_host_abstract_sockets_are_unreachable_with_the_network_on(
    bwrap_sandbox: Sandbox, abstract_server: AbstractServer
) -> None:
    out = run(bwrap_sandbox, _CONNECT.format(name=abstract_server.name), network=True)
    assert out.exec.network is True
    assert "refused" in out.exec.stdout
    time.sleep(0.2)
    assert abstract_server.accepted == []
    assert CANARY not in everything(out)
    # Control: the same client from the host itself does get through.
    subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CONNECT.format(name=abstract_server.name))],
        check=True,
        capture_output=True,
        timeout=10,
    )
    time.sleep(0.2)
    assert abstract_server.accepted == [b"from the sandbox"]


def test_without_landlock_runs_with_the_network_on_get_no_unix_sockets(
    bwrap_sandbox: Sandbox, abstract_server: AbstractServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(landlock, "scope_hook", lambda: None)  # a kernel before 6.12
    out = run(
        bwrap_sandbox,
        textwrap.dedent(_CONNECT.format(name=abstract_server.name))
        + textwrap.dedent("""
        a, b = socket.socketpair()
        a.sendall(b'x')
        print('socketpair', b.recv(1))
    """),
        network=True,
    )
    assert "refused Operation not permitted" in out.exec.stdout
    assert "socketpair b'x'" in out.exec.stdout  # pipes between its own processes still work
    time.sleep(0.2)
    assert abstract_server.accepted == []


def test_unix_sockets_inside_the_sandbox_still_work(bwrap_sandbox: Sandbox) -> None:
    if not landlock.available():
        pytest.skip("without Landlock scopes unix sockets are refused with the network on")
    out = run(
        bwrap_sandbox,
        """
        import socket, multiprocessing
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind('\\0inside-only')
        server.listen(1)
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect('\\0inside-only')
        with multiprocessing.Pool(2) as pool:
            print('pool', pool.map(abs, [-1, -2]))
    """,
        network=True,
    )
    assert out.exec.ok, out.exec.stderr
    assert "pool [1, 2]" in out.exec.stdout


# --- CPU across the whole run ------------------------------------------------------------------


@pytest.mark.slow
def test_many_busy_processes_get_the_runs_cpu_quota_not_the_machine(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    if not cgroups.support().get("cpu", cgroups.Controller("cpu")).usable:
        pytest.skip("no writable cpu cgroup here")
    # The kernel's own account of the run's cpu group, read just before the group is removed:
    # how many enforcement periods it ran in and how many of them throttled it.
    accounts: list[dict[str, int]] = []
    remove = cgroups._remove

    def read_then_remove(path: Path) -> None:
        account = cgroups._read_keyed(path / "cpu.stat")
        if "nr_periods" in account:
            accounts.append(account)
        remove(path)

    monkeypatch.setattr(cgroups, "_remove", read_then_remove)
    limits = replace(SMALL, cpus=0.5, cpu_s=30, timeout_s=15)
    sandbox = Sandbox(replace(settings, limits=limits), backend=bwrap.BwrapBackend())
    out = run(
        sandbox,
        """
        import os, time
        end = time.monotonic() + 1.5
        kids = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                while time.monotonic() < end:
                    pass
                os._exit(0)
            kids.append(pid)
        used = 0.0
        for pid in kids:
            usage = os.wait4(pid, 0)[2]
            used += usage.ru_utime + usage.ru_stime
        print('used', used)
    """,
    )
    assert out.exec.stdout.startswith("used "), out.exec.stderr
    used = float(out.exec.stdout.split()[1])  # the CPU time the kernel charged the four spinners
    quota_s = cgroups.cpu_quota_us(limits) / 1e6
    assert quota_s == 0.05
    # After sandbox.yield_after_s the run waits for idle CPU in a group of its own, with the
    # same quota: the kernel's account is the two groups' together (one on cgroup v2).
    assert 1 <= len(accounts) <= 2, accounts
    periods = sum(account["nr_periods"] for account in accounts)
    # The kernel counts enforcement periods only for a group that has a quota: the quota was
    # in force. The spinners want up to four cores; each period grants them half a core, so
    # their CPU time stays within the periods they ran times the quota (one period of slack
    # per core and group for the last, partly used one).
    assert periods > 0, accounts
    granted = periods * quota_s
    slack = 2 * quota_s * (os.cpu_count() or 1) * len(accounts)
    assert used <= granted + slack, f"the spinners used {used:.2f} CPU-s; {periods} periods grant {granted:.2f}"


def test_cpu_quota_always_leaves_a_core_to_the_host() -> None:
    from toolsmith.limits import Limits

    assert cgroups.cpu_quota_us(Limits(cpus=8), cpu_count=2) == cgroups.CPU_PERIOD_US
    assert cgroups.cpu_quota_us(Limits(cpus=8), cpu_count=1) == cgroups.CPU_PERIOD_US
    assert cgroups.cpu_quota_us(Limits(cpus=1.5), cpu_count=16) == 150_000
    assert Limits.from_mapping({"cpus": 0.5}).cpus == 0.5


# --- the installer's sandbox -------------------------------------------------------------------


def test_installer_sandbox_cannot_write_sysctls_or_reach_abstract_sockets(
    tmp_path: Path, abstract_server: AbstractServer
) -> None:
    """A source build (``packages.only_binary = false``) runs a package's code here."""
    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    before = Path("/proc/sys/kernel/core_pattern").read_text()
    code = textwrap.dedent("""
        import os
        try:
            os.close(os.open('/proc/sys/kernel/core_pattern', os.O_WRONLY))
            print('SYSCTL OPEN')
        except OSError as exc:
            print('sysctl refused', exc.strerror)
    """) + textwrap.dedent(_CONNECT.format(name=abstract_server.name))
    work = tmp_path / "build"
    plan = bwrap.installer_plan(
        [str(base_python()), "-I", "-S", "-c", code],
        env={"PATH": "/usr/bin"},
        writable=[work],
        limits=replace(SMALL, timeout_s=20),
        cwd=tmp_path,
    )
    done, _ = run_plan(plan, backend="installer", network=True)  # as PackageEnv runs its installers
    assert "sysctl refused" in done.stdout, done.stderr
    assert "refused" in done.stdout.splitlines()[-1]
    time.sleep(0.2)
    assert abstract_server.accepted == []
    assert Path("/proc/sys/kernel/core_pattern").read_text() == before
