"""Attack suite, part 4: what a malicious *package* can do once a request was accepted.

A wheel runs no code when it is installed, but it can ship a start-up hook (a ``.pth``
file with code, a ``sitecustomize`` module) that the environment's interpreter runs at
every start: in every later run of every tool, and inside later installs, where uv
starts that interpreter while the environment and the package cache are writable. The
packages here come from a local index on the host's loopback, built by the test; each
case checks the environment on disk and a marker file the hook would write when run.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import shutil
import textwrap
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from sandbox.helpers import FORK_BOMB, SMALL, leftovers, marker, process_peak, reexec_prelude, run
from toolsmith.config import Settings
from toolsmith.errors import InstallError, PackageRefused
from toolsmith.isolation import bwrap, cgroups
from toolsmith.isolation.backend import base_python
from toolsmith.packages import hooks
from toolsmith.packages.env import PackageEnv
from toolsmith.sandbox import Sandbox


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(directory: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A minimal pure-Python wheel holding ``files`` (path inside site-packages -> text)."""
    info = f"{name}-{version}.dist-info"
    contents = {path: text.encode() for path, text in files.items()}
    contents[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    contents[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [_record_line(path, data) for path, data in contents.items()] + [f"{info}/RECORD,,"]
    contents[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, data in contents.items():
            zf.writestr(path, data)
    return wheel


class LocalIndex:
    """A PEP 503 simple index on 127.0.0.1 serving the wheels it is given."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "simple").mkdir(parents=True)
        handler = partial(_QuietHandler, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple/"

    def publish(self, name: str, version: str, files: dict[str, str]) -> Path:
        project = self.root / "simple" / name
        project.mkdir(parents=True, exist_ok=True)
        wheel = build_wheel(project, name, version, files)
        sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
        (project / "index.html").write_text(
            f'<html><body><a href="{wheel.name}#sha256={sha}">{wheel.name}</a></body></html>\n'
        )
        return wheel

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LocalIndex]:
    served = LocalIndex(tmp_path / "index")
    yield served
    served.close()


@pytest.fixture
def hook_marker(settings: Settings) -> Path:
    """Where a hook leaves its trace: the installer's cache, writable inside its sandbox."""
    cache = settings.cache_dir / PackageEnv(settings).tool
    cache.mkdir(parents=True, exist_ok=True)
    return cache / "the-hook-ran"


def _evil(index: LocalIndex, marker: Path, *, kind: str = "pth") -> None:
    payload = (
        f"import os, sys; sys.stderr.write('HOOK RAN\\n'); "
        f"os.path.isdir({str(marker.parent)!r}) and open({str(marker)!r}, 'a').write('ran\\n')"
    )
    files = {"evilpkg/__init__.py": "VALUE = 1\n"}
    if kind == "pth":
        files["evilpkg_hook.pth"] = payload + "\n"
    else:
        files["sitecustomize.py"] = payload.replace("; ", "\n") + "\n"
    index.publish("evilpkg", "1.0", files)
    index.publish("goodpkg", "1.0", {"goodpkg/__init__.py": "VALUE = 2\n"})


def _forget_interpreters(settings: Settings) -> None:
    """Drop uv's cached interpreter facts, as a uv upgrade or a cache expiry does, so the
    next install starts the environment's interpreter again (pip always does)."""
    for cached in (settings.cache_dir / "uv").glob("interpreter-v*"):
        shutil.rmtree(cached)


@pytest.mark.parametrize("kind", ["pth", "sitecustomize"])
@pytest.mark.slow
def test_a_wheel_with_a_startup_hook_is_refused_and_removed(
    settings: Settings, index: LocalIndex, hook_marker: Path, kind: str
) -> None:
    _evil(index, hook_marker, kind=kind)
    env = PackageEnv(replace(settings, index_url=index.url))
    with pytest.raises(PackageRefused) as caught:
        env.install(["evilpkg"], check=False)
    assert "start-up hook" in str(caught.value) and "packages.allow" in str(caught.value)
    assert hooks.names(env.site_packages) == []
    assert "evilpkg" not in env.installed()
    assert not (env.site_packages / "evilpkg").exists()
    # A later install starts the environment's interpreter (uv inspects it): nothing runs.
    _forget_interpreters(settings)
    env.install(["goodpkg"], check=False)
    assert "goodpkg" in env.installed()
    assert not hook_marker.exists(), hook_marker.read_text()


@pytest.mark.slow
def test_an_allowed_hook_stays_and_shows_what_the_guard_prevents(
    settings: Settings, index: LocalIndex, hook_marker: Path
) -> None:
    _evil(index, hook_marker)
    env = PackageEnv(replace(settings, index_url=index.url, allow_packages=("evilpkg",)))
    env.install(["evilpkg"], check=False)
    assert hooks.names(env.site_packages) == ["evilpkg_hook.pth"]
    assert not hook_marker.exists()
    _forget_interpreters(settings)
    env.install(["goodpkg"], check=False)
    # The hook ran inside the installer's sandbox, with the environment writable.
    assert hook_marker.exists()


@pytest.mark.slow
def test_a_hook_already_in_the_environment_is_removed_before_any_installer_runs(
    settings: Settings, index: LocalIndex, hook_marker: Path
) -> None:
    _evil(index, hook_marker)
    env = PackageEnv(replace(settings, index_url=index.url))
    env.ensure()
    (env.site_packages / "planted.pth").write_text(f"import os; open({str(hook_marker)!r}, 'w').write('x')\n")
    (env.site_packages / "paths-only.pth").write_text("/nonexistent\n")  # no code: left alone
    _forget_interpreters(settings)
    env.install(["goodpkg"], check=False)
    assert not hook_marker.exists()
    assert sorted(p.name for p in env.site_packages.glob("*.pth")) == ["paths-only.pth"]


@pytest.mark.slow
def test_a_refused_hook_never_reaches_a_sandboxed_run(settings: Settings, index: LocalIndex, hook_marker: Path) -> None:
    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    _evil(index, hook_marker)
    sandbox = Sandbox(replace(settings, index_url=index.url), backend=bwrap.BwrapBackend())
    sandbox.env.install(["goodpkg"], check=False)
    with pytest.raises(PackageRefused):
        sandbox.env.install(["evilpkg"], check=False)
    out = run(sandbox, "import sys, goodpkg; print(goodpkg.VALUE, 'sitecustomize' in sys.modules)")
    assert out.exec.stdout.strip() == "2 False", out.exec.stderr
    assert "HOOK RAN" not in out.exec.stderr
    assert not hook_marker.exists()


# --- source builds (packages.only_binary = false) run a package's code in the installer -----


@pytest.fixture
def small_installs(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsmith.packages import env as env_module

    monkeypatch.setattr(env_module, "INSTALL_LIMITS", replace(SMALL, timeout_s=6.0, output_bytes=16 * 1024))


def test_a_build_that_forks_without_end_is_capped_and_leaves_nothing(settings: Settings, small_installs: None) -> None:
    tag = marker()
    env = PackageEnv(settings)
    daemon = textwrap.dedent("""
        import time
        if os.fork() == 0:
            os.setsid()  # a daemon that means to outlive the build
            while True:
                time.sleep(1)
    """)
    with process_peak(tag) as peak, contextlib.suppress(InstallError):
        env._run(
            [str(base_python()), "-I", "-S", "-c", reexec_prelude(tag) + daemon + FORK_BOMB], what="Building evilpkg"
        )
    if cgroups.support()["pids"].usable:
        assert max(peak) <= SMALL.max_procs + cgroups.PIDS_SLACK
    assert leftovers(tag) == []


def test_a_build_that_floods_its_output_is_read_with_a_cap(settings: Settings, small_installs: None) -> None:
    env = PackageEnv(settings)
    flood = "import sys\nfor _ in range(4096):\n    sys.stderr.write('x' * 65536)\nsys.exit(1)\n"
    with pytest.raises(InstallError) as caught:
        env._run([str(base_python()), "-I", "-S", "-c", flood], what="Building evilpkg")
    assert len(caught.value.stderr) <= 16 * 1024 + 200  # 256 MiB written, 16 KiB kept
    assert "cut by the sandbox output cap" in caught.value.stderr


def test_a_build_reaches_neither_other_environments_nor_toolsmiths_caches(settings: Settings) -> None:
    env = PackageEnv(settings)
    if not env.isolated:
        pytest.skip("installers run under bwrap only where it works")
    other = settings.envs_dir / "cpython399"
    other.mkdir(parents=True)
    listing = settings.cache_dir / "index-listing-test.json"
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text('{"names": ["requests"]}')
    targets = [other / "planted.py", listing, settings.cache_dir / "planted", settings.home / "planted"]
    code = "\n".join(f"try:\n    open({str(t)!r}, 'w').write('x')\nexcept OSError:\n    pass" for t in targets)
    env._run([str(base_python()), "-I", "-S", "-c", code], what="Building evilpkg")
    assert not (other / "planted.py").exists()
    assert listing.read_text() == '{"names": ["requests"]}'
    assert not (settings.cache_dir / "planted").exists() and not (settings.home / "planted").exists()
