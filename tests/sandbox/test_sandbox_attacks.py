"""The attack suite: hostile code under the bwrap backend, judged by host state afterwards.

Every case checks the host after the run (files, processes, a loopback server's log, the
canary's absence from everything the run returned), not just an exit code.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sandbox.helpers import CANARY, SMALL, LoopbackServer, leftovers, marker, processes_with, reexec_prelude
from toolsmith.config import Settings
from toolsmith.errors import PackageRefused
from toolsmith.sandbox import CodeRun, Sandbox
from toolsmith.sandbox import etc as etc_module
from toolsmith.sandbox.bwrap import ENV_MOUNT
from toolsmith.sandbox.cgroups import PIDS_SLACK, support

pytestmark = pytest.mark.bwrap


def run(sandbox: Sandbox, code: str, **kwargs: Any) -> CodeRun:
    return sandbox.run_code(textwrap.dedent(code), **kwargs)


def everything(outcome: CodeRun) -> str:
    return outcome.exec.stdout + outcome.exec.stderr + json.dumps(outcome.to_dict())


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_state(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): digest(p) for p in sorted(root.rglob("*")) if p.is_file()}


# --- secrets ----------------------------------------------------------------------------


def test_environment_variables_do_not_leak(bwrap_sandbox: Sandbox, canary_env: str) -> None:
    out = run(bwrap_sandbox, "import os, json; print(json.dumps(dict(os.environ)))")
    assert out.exec.ok, out.exec.stderr
    seen = json.loads(out.exec.stdout)
    assert canary_env not in everything(out)
    assert not {"OPENAI_API_KEY", "OPENROUTER_API_KEY", "TOOLSMITH_TEST_SECRET"} & set(seen)
    assert set(seen) <= {"PATH", "HOME", "LANG", "TZ", "TMPDIR", "PWD", "SSL_CERT_FILE", "SSL_CERT_DIR",
                         "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "LC_CTYPE"}


def test_proc_environ_of_every_visible_process_is_clean(bwrap_sandbox: Sandbox, canary_env: str) -> None:
    out = run(bwrap_sandbox, """
        import os
        for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
            for name in ('environ', 'cmdline'):
                try:
                    print(pid, name, open(f'/proc/{pid}/{name}', 'rb').read())
                except OSError as exc:
                    print(pid, name, 'denied', exc)
    """)
    assert out.exec.ok, out.exec.stderr
    assert canary_env not in everything(out)
    assert "1 environ b''" in out.exec.stdout  # bwrap itself was started from an empty environment
    assert "toolsmith-home" not in out.exec.stdout  # no host path of the data dir in any cmdline


def test_proc_1_environ_is_empty(bwrap_sandbox: Sandbox, canary_env: str) -> None:
    out = run(bwrap_sandbox, "print(repr(open('/proc/1/environ','rb').read()))")
    assert out.exec.stdout.strip() == "b''"
    assert canary_env not in everything(out)


def test_host_processes_are_invisible(bwrap_sandbox: Sandbox, sentinel: subprocess.Popen[bytes]) -> None:
    out = run(bwrap_sandbox, f"""
        import os
        pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
        print(pids)
        try:
            print(open('/proc/{sentinel.pid}/environ','rb').read())
        except OSError as exc:
            print('no sentinel', type(exc).__name__)
    """)
    pids = json.loads(out.exec.stdout.splitlines()[0])
    assert max(pids) < 10, "only the sandbox's own few processes are visible"
    assert CANARY not in everything(out)
    assert sentinel.poll() is None


def test_home_directory_is_not_visible(bwrap_sandbox: Sandbox, secrets_on_host: dict[str, Path]) -> None:
    real_home = Path("/root") if os.getuid() == 0 else Path.home()
    code = f"""
        import os
        for path in {[str(secrets_on_host["home"]), str(secrets_on_host["netrc"]), str(real_home)]!r}:
            try:
                print(path, sorted(os.listdir(path)) if os.path.isdir(path) else open(path).read())
            except OSError as exc:
                print(path, 'ERR', type(exc).__name__)
        print('HOME', os.environ['HOME'], os.listdir(os.environ['HOME']))
    """
    out = run(bwrap_sandbox, code)
    assert CANARY not in everything(out)
    assert f"{secrets_on_host['home']} ERR FileNotFoundError" in out.exec.stdout
    # The only thing of the real home that exists inside is the path to the interpreter.
    line = next(ln for ln in out.exec.stdout.splitlines() if ln.startswith(str(real_home) + " "))
    visible = set() if "ERR" in line else set(json.loads(line.split(" ", 1)[1].replace("'", '"')))
    allowed = {Path(sys.base_prefix).relative_to(real_home).parts[0]} if sys.base_prefix.startswith(str(real_home)) \
        else set()
    assert visible <= allowed
    assert "HOME /sandbox/.home []" in out.exec.stdout


def test_project_env_file_is_not_readable(bwrap_sandbox: Sandbox, secrets_on_host: dict[str, Path]) -> None:
    env_file = secrets_on_host["env_file"]
    out = run(bwrap_sandbox, f"""
        import os
        for path in ({str(env_file)!r}, '.env', '../.env', {str(env_file.parent)!r}):
            try:
                print(path, open(path).read() if not os.path.isdir(path) else os.listdir(path))
            except OSError as exc:
                print(path, 'ERR', type(exc).__name__)
    """)
    assert CANARY not in everything(out)
    assert out.exec.stdout.count("ERR") == 4


def test_library_db_and_data_dir_are_invisible(bwrap_sandbox: Sandbox, secrets_on_host: dict[str, Path]) -> None:
    db, data_dir = secrets_on_host["db"], secrets_on_host["data_dir"]
    out = run(bwrap_sandbox, f"""
        import os
        for path in ({str(db)!r}, {str(data_dir)!r}, {str(secrets_on_host['config'])!r}):
            print(path, os.path.exists(path))
        for root, dirs, files in os.walk('/'):
            if root.startswith(('/proc', '/sys', '/usr', '/dev')):
                dirs[:] = []
                continue
            for name in files:
                if name in ('library.db', 'config.toml'):
                    print('FOUND', os.path.join(root, name))
    """)
    assert out.exec.ok, out.exec.stderr
    assert CANARY not in everything(out)
    assert "FOUND" not in out.exec.stdout
    assert out.exec.stdout.count(" False") == 3


def test_only_allowlisted_etc_entries_exist_inside(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, """
        import os
        found = []
        for root, dirs, files in os.walk('/etc'):
            found += [os.path.relpath(os.path.join(root, n), '/etc') for n in dirs + files]
        print('\\n'.join(found))
        for name in ('shadow', 'gshadow', 'pip.conf', 'npmrc', 'machine-id', 'environment', 'gitconfig'):
            print(name, os.path.exists('/etc/' + name))
    """)
    assert out.exec.ok, out.exec.stderr
    allowed = set(etc_module.FILES) | set(etc_module.DIRS)
    tops = {line.split(" ")[0] for line in out.exec.stdout.splitlines() if " " not in line}
    top_level = {t for t in tops if not any(t.startswith(d + "/") for d in etc_module.DIRS)}
    assert top_level <= allowed | {"ssl", "pki"}
    for name in ("shadow", "gshadow", "pip.conf", "npmrc", "machine-id", "environment", "gitconfig"):
        assert f"{name} False" in out.exec.stdout


# --- the file system --------------------------------------------------------------------


def test_writes_outside_the_sandbox_do_not_reach_the_host(bwrap_sandbox: Sandbox, tmp_path: Path) -> None:
    tag = marker()
    outside = tmp_path / "outside"
    outside.mkdir()
    targets = [f"/etc/{tag}", f"/usr/{tag}", f"/{tag}", f"/root/{tag}", str(outside / tag), f"/tmp/{tag}",
               f"/var/tmp/{tag}", f"{sys.base_prefix}/{tag}"]
    out = run(bwrap_sandbox, f"""
        import os
        for path in {targets!r}:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, 'w') as fh:
                    fh.write('pwned')
                print('wrote', path)
            except OSError as exc:
                print('refused', path, exc.strerror)
    """)
    assert out.exec.ok, out.exec.stderr
    for path in targets:
        assert not Path(path).exists(), f"{path} was written on the host"
    assert "refused /etc/" in out.exec.stdout and "refused /usr/" in out.exec.stdout


def test_work_dir_does_not_survive_and_host_workdir_is_unreachable(bwrap_sandbox: Sandbox, tmp_path: Path) -> None:
    out = run(bwrap_sandbox, """
        import os
        open('leftover.txt', 'w').write('x')
        print(os.getcwd())
        try:
            open('main.py', 'a').write('# tampered')
            print('main.py writable')
        except OSError as exc:
            print('main.py', exc.strerror)
    """)
    assert out.exec.stdout.splitlines()[0] == "/sandbox"
    assert "main.py Read-only file system" in out.exec.stdout
    assert not list(Path("/tmp").glob("toolsmith-run-*/leftover.txt"))


def test_package_env_cannot_be_planted(bwrap_sandbox: Sandbox) -> None:
    env = bwrap_sandbox.env
    env.ensure()
    before = tree_state(env.path)
    site = f"{ENV_MOUNT}/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
    targets = [f"{site}/evil.pth", f"{site}/sitecustomize.py", f"{ENV_MOUNT}/bin/python3-evil",
               f"{env.site_packages}/evil.pth", f"{ENV_MOUNT}/pyvenv.cfg"]
    out = run(bwrap_sandbox, f"""
        import os, sys
        print(sys.prefix)
        for path in {targets!r}:
            try:
                with open(path, 'a') as fh:
                    fh.write('import os; os.system("touch /tmp/pwned")\\n')
                print('planted', path)
            except OSError as exc:
                print('refused', path, exc.strerror)
    """)
    assert out.exec.stdout.splitlines()[0] == ENV_MOUNT
    assert "planted" not in out.exec.stdout
    assert tree_state(env.path) == before
    follow = run(bwrap_sandbox, "import sys; print('sitecustomize' in sys.modules)")
    assert follow.exec.stdout.strip() == "False"


def test_library_db_cannot_be_tampered_with(bwrap_sandbox: Sandbox, secrets_on_host: dict[str, Path]) -> None:
    db = secrets_on_host["db"]
    before = digest(db)
    out = run(bwrap_sandbox, f"""
        import sqlite3
        try:
            con = sqlite3.connect({str(db)!r})
            con.execute('create table pwned(x)')
            con.commit()
            print('tampered')
        except Exception as exc:
            print('refused', type(exc).__name__, exc)
    """)
    assert "tampered" not in out.exec.stdout
    assert digest(db) == before
    assert sorted(p.name for p in db.parent.iterdir()) == sorted(["library.db", "config.toml"])


def test_filling_the_work_dir_stops_at_the_tmpfs_cap(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, """
        import os
        written = 0
        try:
            for i in range(10_000):
                with open(f'fill{i}.bin', 'wb') as fh:
                    fh.write(b'x' * (1 << 20))
                written += 1 << 20
        except OSError as exc:
            print('stopped', written, exc.strerror)
            raise
    """)
    assert out.exec.killed_by == "disk"
    written = int(out.exec.stdout.split()[1])
    assert written <= (SMALL.tmp_size_mb + 1) * (1 << 20)


def test_filling_tmp_stops_at_the_tmpfs_cap(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, """
        import os
        written = 0
        try:
            for i in range(100_000):
                with open(f'/tmp/f{i}', 'wb') as fh:
                    fh.write(b'y' * (256 << 10))
                written += 256 << 10
        except OSError as exc:
            print('stopped', written, exc.strerror)
    """)
    assert out.exec.stdout.startswith("stopped")
    assert int(out.exec.stdout.split()[1]) <= (SMALL.tmp_size_mb + 1) * (1 << 20)


def test_single_file_is_capped_by_file_size_limit(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, f"""
        with open('/dev/shm/big', 'wb') as fh:
            for _ in range({SMALL.file_size_mb + 4}):
                fh.write(b'z' * (1 << 20))
    """)
    assert out.exec.killed_by in ("file_size", "disk")
    assert not out.exec.ok


# --- the network ------------------------------------------------------------------------


def test_host_loopback_service_unreachable_without_network(
    bwrap_sandbox: Sandbox, loopback_server: LoopbackServer
) -> None:
    code = f"""
        import socket
        try:
            s = socket.create_connection(('127.0.0.1', {loopback_server.port}), timeout=2)
            s.sendall(b'{CANARY}')
            print('connected', s.recv(100))
        except OSError as exc:
            print('refused', exc)
    """
    out = run(bwrap_sandbox, code, network=False)
    assert out.exec.network is False
    assert "refused" in out.exec.stdout
    assert loopback_server.connections == 0 and loopback_server.received == []
    # Control: with the network on the same code does reach it, so the check above is real.
    control = run(bwrap_sandbox, code, network=True)
    assert "connected" in control.exec.stdout
    assert loopback_server.connections == 1


def test_network_off_from_config(settings: Settings, loopback_server: LoopbackServer) -> None:
    from dataclasses import replace

    from toolsmith.sandbox.bwrap import BwrapBackend, probe

    if not probe()[0]:
        pytest.skip("bwrap unavailable")
    sandbox = Sandbox(replace(settings, network=False), backend=BwrapBackend())
    out = run(sandbox, f"""
        import socket
        try:
            socket.create_connection(('127.0.0.1', {loopback_server.port}), timeout=2); print('connected')
        except OSError as exc:
            print('refused', exc)
    """)
    assert out.exec.network is False and "refused" in out.exec.stdout
    assert loopback_server.connections == 0


def test_outbound_connections_fail_without_network(bwrap_sandbox: Sandbox) -> None:
    from urllib.parse import urlsplit

    from toolsmith.index import resolve_index_url

    host = urlsplit(resolve_index_url()).hostname
    out = run(bwrap_sandbox, f"""
        import socket
        for target in (({host!r}, 443), ('1.1.1.1', 53), ('10.0.0.1', 80)):
            try:
                socket.create_connection(target, timeout=2)
                print('connected', target)
            except OSError as exc:
                print('failed', target[0], type(exc).__name__)
        import os; print(sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') else 'no sysfs')
    """, network=False)
    assert "connected" not in out.exec.stdout
    assert out.exec.stdout.count("failed") == 3


# --- processes --------------------------------------------------------------------------


def test_fork_bomb_is_contained_by_the_pids_cgroup(bwrap_sandbox: Sandbox) -> None:
    if not support()["pids"].usable and os.getuid() == 0:
        pytest.skip("no writable pids cgroup; RLIMIT_NPROC does not hold for root")
    tag = marker()
    peak: list[int] = []
    stop = threading.Event()

    def watch() -> None:  # sample the host's process table while the bomb runs
        while not stop.is_set():
            peak.append(len(processes_with(tag)))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        out = run(bwrap_sandbox, reexec_prelude(tag) + textwrap.dedent("""
            import time
            start = time.monotonic()
            while time.monotonic() - start < 2:
                try:
                    os.fork()
                except OSError:
                    time.sleep(0.01)
            os._exit(0)
        """), timeout_s=4)
    finally:
        stop.set()
        watcher.join()
    assert max(peak) > SMALL.max_procs // 2, "the bomb did fork (the probe sees it)"
    assert max(peak) <= SMALL.max_procs + PIDS_SLACK
    assert leftovers(tag) == []
    assert out.exec.wall_s < 8
    again = run(bwrap_sandbox, "print('alive')")
    assert again.exec.stdout.strip() == "alive"


def test_daemon_escape_by_double_fork_and_setsid(bwrap_sandbox: Sandbox) -> None:
    tag = marker()
    out = run(bwrap_sandbox, f"""
        import os, signal, sys
        if os.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            if os.fork() == 0:
                os.execv('/bin/sleep', ['/bin/sleep', '300', {tag!r}])
            os._exit(0)
        import time; time.sleep(0.3)
        print('parent done')
    """)
    assert out.exec.stdout.strip() == "parent done"
    assert leftovers(tag) == []


def test_daemon_left_when_the_main_process_times_out(bwrap_sandbox: Sandbox) -> None:
    tag = marker()
    out = run(bwrap_sandbox, reexec_prelude(tag) + textwrap.dedent("""
        import time
        for _ in range(3):
            if os.fork() == 0:
                os.setsid()
                while True:
                    time.sleep(1)
        time.sleep(1000)
    """), timeout_s=1)
    assert out.exec.timed_out and out.exec.killed_by == "timeout"
    assert leftovers(tag) == []


def test_killing_the_parent_and_everything_else(bwrap_sandbox: Sandbox, sentinel: subprocess.Popen[bytes]) -> None:
    out = run(bwrap_sandbox, f"""
        import os, signal
        for target in (os.getppid(), 1, {sentinel.pid}, {os.getpid()}, -1):
            try:
                os.kill(target, signal.SIGKILL)
                print('sent', target)
            except OSError as exc:
                print('failed', target, type(exc).__name__)
        print('still here')
    """)
    assert sentinel.poll() is None, "a host process was killed from inside the sandbox"
    assert f"failed {sentinel.pid} ProcessLookupError" in out.exec.stdout
    assert "still here" in out.exec.stdout


def test_ptrace_of_host_processes_fails(bwrap_sandbox: Sandbox, sentinel: subprocess.Popen[bytes]) -> None:
    out = run(bwrap_sandbox, f"""
        import ctypes, ctypes.util, os
        libc = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6', use_errno=True)
        for pid in ({sentinel.pid}, {os.getpid()}, 1):
            rc = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
            print(pid, rc, os.strerror(ctypes.get_errno()))
    """)
    lines = out.exec.stdout.splitlines()
    assert [line.split()[1] for line in lines] == ["-1", "-1", "-1"]  # host pids and bwrap's own init
    assert out.exec.ok and out.exec.wall_s < 5
    status = Path(f"/proc/{sentinel.pid}/status").read_text()
    assert "TracerPid:\t0" in status
    assert sentinel.poll() is None


# --- resources --------------------------------------------------------------------------


def test_memory_bomb_single_allocation(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, "x = bytearray(8 * 1024 ** 3)")
    assert out.exec.killed_by == "memory"


def test_memory_bomb_gradual(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, """
        chunks = []
        while True:
            chunks.append(bytearray(32 * 1024 * 1024))
    """)
    assert out.exec.killed_by == "memory"
    assert out.exec.wall_s < 8


def test_memory_bomb_across_processes_hits_the_memory_cgroup(bwrap_sandbox: Sandbox) -> None:
    if not support()["memory"].usable:
        pytest.skip("no writable memory cgroup")
    out = run(bwrap_sandbox, f"""
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
    """)
    assert out.exec.killed_by == "memory"


def test_cpu_bound_c_loop_is_stopped_by_the_cpu_limit(settings: Settings) -> None:
    from dataclasses import replace

    from toolsmith.sandbox.bwrap import BwrapBackend, probe

    if not probe()[0]:
        pytest.skip("bwrap unavailable")
    sandbox = Sandbox(replace(settings, limits=replace(SMALL, cpu_s=1, timeout_s=10)), backend=BwrapBackend())
    out = run(sandbox, "print(sum(range(10 ** 12)))")
    assert out.exec.killed_by == "cpu"
    assert out.exec.wall_s < 6


def test_catastrophic_regex_is_stopped_by_the_wall_clock(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, "import re; print(re.match(r'(a+)+$', 'a' * 64 + 'b'))", timeout_s=1.5)
    assert out.exec.timed_out and out.exec.killed_by == "timeout"
    assert out.exec.wall_s < 4


def test_sleeping_forever_is_killed(bwrap_sandbox: Sandbox) -> None:
    tag = marker()
    out = run(bwrap_sandbox, reexec_prelude(tag) + "import time\ntime.sleep(10 ** 6)\n", timeout_s=1)
    assert out.exec.killed_by == "timeout"
    assert leftovers(tag) == []


def test_stdout_flood_is_capped(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, """
        import sys
        while True:
            sys.stdout.write('x' * 65536)
            sys.stderr.write('y' * 65536)
    """, timeout_s=1.5)
    assert out.exec.truncated
    assert len(out.exec.stdout) <= SMALL.output_bytes + 200
    assert len(out.exec.stderr) <= SMALL.output_bytes + 200
    assert "cut by the sandbox output cap" in out.exec.stdout


def test_thread_exhaustion_is_bounded(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, """
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
    """)
    assert out.exec.stdout.startswith("stopped at")
    assert int(out.exec.stdout.split()[2]) <= SMALL.max_procs + PIDS_SLACK


def test_file_descriptor_exhaustion_is_bounded(bwrap_sandbox: Sandbox) -> None:
    out = run(bwrap_sandbox, """
        files = []
        try:
            while True:
                files.append(open('/dev/null'))
        except OSError as exc:
            print('stopped at', len(files), exc.strerror)
    """)
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
