"""Attack suite, part 1: secrets, the file system and the network, under bwrap.

Every case checks the host after the run (files on the host, a loopback server's log,
the canary's absence from everything the run returned), not just an exit code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.helpers import (
    CANARY,
    SMALL,
    LoopbackServer,
    digest,
    everything,
    marker,
    run,
    tree_state,
)
from toolsmith.config import Settings
from toolsmith.isolation import etc as etc_module
from toolsmith.isolation.bwrap import ENV_MOUNT
from toolsmith.sandbox import Sandbox

pytestmark = pytest.mark.bwrap


# --- secrets ----------------------------------------------------------------------------


def test_environment_variables_do_not_leak(bwrap_sandbox: Sandbox, canary_env: str) -> None:
    out = run(bwrap_sandbox, "import os, json; print(json.dumps(dict(os.environ)))")
    assert out.exec.ok, out.exec.stderr
    seen = json.loads(out.exec.stdout)
    assert canary_env not in everything(out)
    assert not {"OPENAI_API_KEY", "OPENROUTER_API_KEY", "TOOLSMITH_TEST_SECRET"} & set(seen)
    assert set(seen) <= {
        "PATH",
        "HOME",
        "LANG",
        "TZ",
        "TMPDIR",
        "PWD",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "LC_CTYPE",
    }


def test_proc_environ_of_every_visible_process_is_clean(bwrap_sandbox: Sandbox, canary_env: str) -> None:
    out = run(
        bwrap_sandbox,
        """
        import os
        for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
            for name in ('environ', 'cmdline'):
                try:
                    print(pid, name, open(f'/proc/{pid}/{name}', 'rb').read())
                except OSError as exc:
                    print(pid, name, 'denied', exc)
    """,
    )
    assert out.exec.ok, out.exec.stderr
    assert canary_env not in everything(out)
    assert "1 environ b''" in out.exec.stdout  # bwrap itself was started from an empty environment
    assert "toolsmith-home" not in out.exec.stdout  # no host path of the data dir in any cmdline


def test_proc_1_environ_is_empty(bwrap_sandbox: Sandbox, canary_env: str) -> None:
    out = run(bwrap_sandbox, "print(repr(open('/proc/1/environ','rb').read()))")
    assert out.exec.stdout.strip() == "b''"
    assert canary_env not in everything(out)


def test_host_processes_are_invisible(bwrap_sandbox: Sandbox, sentinel: subprocess.Popen[bytes]) -> None:
    out = run(
        bwrap_sandbox,
        f"""
        import os
        pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
        print(pids)
        try:
            print(open('/proc/{sentinel.pid}/environ','rb').read())
        except OSError as exc:
            print('no sentinel', type(exc).__name__)
    """,
    )
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
    allowed = (
        {Path(sys.base_prefix).relative_to(real_home).parts[0]} if sys.base_prefix.startswith(str(real_home)) else set()
    )
    assert visible <= allowed
    assert "HOME /sandbox/.home []" in out.exec.stdout


def test_an_interpreter_prefix_holding_the_home_is_not_bound_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolsmith.isolation import bwrap as bwrap_module

    home = tmp_path / "alice"  # Python built with --prefix=$HOME: the prefix *is* the home
    (home / "bin").mkdir(parents=True)
    (home / "lib" / "python3.11").mkdir(parents=True)
    (home / ".env").write_text(f"OPENAI_API_KEY={CANARY}\n")
    exe = home / "bin" / "python3"
    exe.write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(sys, "base_prefix", str(home))
    monkeypatch.setattr(bwrap_module, "base_python", lambda: exe)
    roots = bwrap_module.interpreter_roots()
    assert not any(root == str(home) or str(home).startswith(root.rstrip("/") + "/") for root in roots)
    assert set(roots) == {str(exe), str(home / "lib")}
    assert not any(str(home / ".env").startswith(root) for root in roots)


def test_project_env_file_is_not_readable(bwrap_sandbox: Sandbox, secrets_on_host: dict[str, Path]) -> None:
    env_file = secrets_on_host["env_file"]
    out = run(
        bwrap_sandbox,
        f"""
        import os
        for path in ({str(env_file)!r}, '.env', '../.env', {str(env_file.parent)!r}):
            try:
                print(path, open(path).read() if not os.path.isdir(path) else os.listdir(path))
            except OSError as exc:
                print(path, 'ERR', type(exc).__name__)
    """,
    )
    assert CANARY not in everything(out)
    assert out.exec.stdout.count("ERR") == 4


@pytest.mark.slow
def test_library_db_and_data_dir_are_invisible(bwrap_sandbox: Sandbox, secrets_on_host: dict[str, Path]) -> None:
    db, data_dir = secrets_on_host["db"], secrets_on_host["data_dir"]
    out = run(
        bwrap_sandbox,
        f"""
        import os
        for path in ({str(db)!r}, {str(data_dir)!r}, {str(secrets_on_host["config"])!r}):
            print(path, os.path.exists(path))
        for root, dirs, files in os.walk('/'):
            if root.startswith(('/proc', '/sys', '/usr', '/dev')):
                dirs[:] = []
                continue
            for name in files:
                if name in ('library.db', 'config.toml'):
                    print('FOUND', os.path.join(root, name))
    """,
    )
    assert out.exec.ok, out.exec.stderr
    assert CANARY not in everything(out)
    assert "FOUND" not in out.exec.stdout
    assert out.exec.stdout.count(" False") == 3


def test_only_allowlisted_etc_entries_exist_inside(bwrap_sandbox: Sandbox) -> None:
    out = run(
        bwrap_sandbox,
        """
        import os
        found = []
        for root, dirs, files in os.walk('/etc'):
            found += [os.path.relpath(os.path.join(root, n), '/etc') for n in dirs + files]
        print('\\n'.join(found))
        for name in ('shadow', 'gshadow', 'pip.conf', 'npmrc', 'machine-id', 'environment', 'gitconfig'):
            print(name, os.path.exists('/etc/' + name))
    """,
    )
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
    targets = [
        f"/etc/{tag}",
        f"/usr/{tag}",
        f"/{tag}",
        f"/root/{tag}",
        str(outside / tag),
        f"/tmp/{tag}",
        f"/var/tmp/{tag}",
        f"{sys.base_prefix}/{tag}",
    ]
    out = run(
        bwrap_sandbox,
        f"""
        import os
        for path in {targets!r}:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, 'w') as fh:
                    fh.write('pwned')
                print('wrote', path)
            except OSError as exc:
                print('refused', path, exc.strerror)
    """,
    )
    assert out.exec.ok, out.exec.stderr
    for path in targets:
        assert not Path(path).exists(), f"{path} was written on the host"
    assert "refused /etc/" in out.exec.stdout and "refused /usr/" in out.exec.stdout


def test_work_dir_does_not_survive_and_host_workdir_is_unreachable(bwrap_sandbox: Sandbox, tmp_path: Path) -> None:
    out = run(
        bwrap_sandbox,
        """
        import os
        open('leftover.txt', 'w').write('x')
        print(os.getcwd())
        try:
            open('main.py', 'a').write('# tampered')
            print('main.py writable')
        except OSError as exc:
            print('main.py', exc.strerror)
        print([line.split()[5] for line in open('/proc/self/mountinfo') if line.split()[4] == '/sandbox/main.py'])
    """,
    )
    assert out.exec.stdout.splitlines()[0] == "/sandbox"
    # Refused by the read-only bind (and, under a root launcher, by the file's owner too).
    assert out.exec.stdout.splitlines()[1] in ("main.py Read-only file system", "main.py Permission denied")
    assert out.exec.stdout.splitlines()[2].startswith("['ro,")
    assert not list(Path("/tmp").glob("toolsmith-run-*/leftover.txt"))


def test_package_env_cannot_be_planted(bwrap_sandbox: Sandbox) -> None:
    env = bwrap_sandbox.env
    env.ensure()
    before = tree_state(env.path)
    site = f"{ENV_MOUNT}/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
    targets = [
        f"{site}/evil.pth",
        f"{site}/sitecustomize.py",
        f"{ENV_MOUNT}/bin/python3-evil",
        f"{env.site_packages}/evil.pth",
        f"{ENV_MOUNT}/pyvenv.cfg",
    ]
    out = run(
        bwrap_sandbox,
        f"""
        import os, sys
        print(sys.prefix)
        for path in {targets!r}:
            try:
                with open(path, 'a') as fh:
                    fh.write('import os; os.system("touch /tmp/pwned")\\n')
                print('planted', path)
            except OSError as exc:
                print('refused', path, exc.strerror)
    """,
    )
    assert out.exec.stdout.splitlines()[0] == ENV_MOUNT
    assert "planted" not in out.exec.stdout
    assert tree_state(env.path) == before
    follow = run(bwrap_sandbox, "import sys; print('sitecustomize' in sys.modules)")
    assert follow.exec.stdout.strip() == "False"


def test_library_db_cannot_be_tampered_with(bwrap_sandbox: Sandbox, secrets_on_host: dict[str, Path]) -> None:
    db = secrets_on_host["db"]
    before = digest(db)
    out = run(
        bwrap_sandbox,
        f"""
        import sqlite3
        try:
            con = sqlite3.connect({str(db)!r})
            con.execute('create table pwned(x)')
            con.commit()
            print('tampered')
        except Exception as exc:
            print('refused', type(exc).__name__, exc)
    """,
    )
    assert "tampered" not in out.exec.stdout
    assert digest(db) == before
    assert sorted(p.name for p in db.parent.iterdir()) == sorted(["library.db", "config.toml"])


def test_filling_the_work_dir_stops_at_the_tmpfs_cap(bwrap_sandbox: Sandbox) -> None:
    out = run(
        bwrap_sandbox,
        """
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
    """,
    )
    assert out.exec.killed_by == "disk"
    written = int(out.exec.stdout.split()[1])
    assert written <= (SMALL.tmp_size_mb + 1) * (1 << 20)


def test_filling_tmp_stops_at_the_tmpfs_cap(bwrap_sandbox: Sandbox) -> None:
    out = run(
        bwrap_sandbox,
        """
        import os
        written = 0
        try:
            for i in range(100_000):
                with open(f'/tmp/f{i}', 'wb') as fh:
                    fh.write(b'y' * (256 << 10))
                written += 256 << 10
        except OSError as exc:
            print('stopped', written, exc.strerror)
    """,
    )
    assert out.exec.stdout.startswith("stopped")
    assert int(out.exec.stdout.split()[1]) <= (SMALL.tmp_size_mb + 1) * (1 << 20)


def test_single_file_is_capped_by_file_size_limit(bwrap_sandbox: Sandbox) -> None:
    out = run(
        bwrap_sandbox,
        f"""
        with open('/dev/shm/big', 'wb') as fh:
            for _ in range({SMALL.file_size_mb + 4}):
                fh.write(b'z' * (1 << 20))
    """,
    )
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

    from toolsmith.isolation.bwrap import BwrapBackend, probe

    if not probe()[0]:
        pytest.skip("bwrap unavailable")
    sandbox = Sandbox(replace(settings, network=False), backend=BwrapBackend())
    out = run(
        sandbox,
        f"""
        import socket
        try:
            socket.create_connection(('127.0.0.1', {loopback_server.port}), timeout=2); print('connected')
        except OSError as exc:
            print('refused', exc)
    """,
    )
    assert out.exec.network is False and "refused" in out.exec.stdout
    assert loopback_server.connections == 0


def test_outbound_connections_fail_without_network(bwrap_sandbox: Sandbox) -> None:
    from urllib.parse import urlsplit

    from toolsmith.packages.index import resolve_index_url

    host = urlsplit(resolve_index_url()).hostname
    out = run(
        bwrap_sandbox,
        f"""
        import socket
        for target in (({host!r}, 443), ('1.1.1.1', 53), ('10.0.0.1', 80)):
            try:
                socket.create_connection(target, timeout=2)
                print('connected', target)
            except OSError as exc:
                print('failed', target[0], type(exc).__name__)
        import os; print(sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') else 'no sysfs')
    """,
        network=False,
    )
    assert "connected" not in out.exec.stdout
    assert out.exec.stdout.count("failed") == 3


# --- the host reading a call's result -----------------------------------------------------


@pytest.mark.parametrize("depth", [200_000, 150])
def test_a_result_nested_to_exhaust_the_hosts_recursion_is_refused(bwrap_sandbox: Sandbox, depth: int) -> None:
    code = f"""
import os
def run():
    with open('_result.json', 'w') as fh:
        fh.write('{{"ok": true, "value": ' + '[' * {depth} + ']' * {depth} + '}}')
    os._exit(0)
"""
    result = bwrap_sandbox.call_tool(code, {})  # used to raise RecursionError in the host process
    assert not result.ok and result.error_type == "not_json"
    assert "nested deeper than" in (result.error or "")
    flat = bwrap_sandbox.call_tool("def run():\n    return [[[1]]]\n", {})
    assert flat.ok and flat.value == [[[1]]]
