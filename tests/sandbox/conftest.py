"""Fixtures for the sandbox tests: small limits, a bwrap sandbox, canaries and host probes.

Attack tests judge the outcome on the *host* after the run (files, processes, a loopback
server's log, the canary's absence), never by the sandboxed program's exit code alone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.helpers import CANARY, SMALL, LoopbackServer
from toolsmith.config import Settings
from toolsmith.isolation import bwrap as bwrap_module
from toolsmith.isolation.process import ProcessBackend
from toolsmith.sandbox import Sandbox


def bwrap_usable() -> tuple[bool, str]:
    return bwrap_module.probe()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    home = tmp_path / "toolsmith-home"
    home.mkdir()
    return Settings(home=home, limits=SMALL)


@pytest.fixture
def bwrap_sandbox(settings: Settings) -> Sandbox:
    usable, why = bwrap_usable()
    if not usable:
        pytest.skip(f"bwrap unavailable: {why}")
    return Sandbox(settings, backend=bwrap_module.BwrapBackend())


@pytest.fixture
def process_sandbox(settings: Settings) -> Sandbox:
    return Sandbox(settings, backend=ProcessBackend())


@pytest.fixture
def canary_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """Secrets in the test process's environment, as a user would have them."""
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("OPENROUTER_API_KEY", CANARY)
    monkeypatch.setenv("TOOLSMITH_TEST_SECRET", CANARY)
    return CANARY


@pytest.fixture
def secrets_on_host(tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A user home, a project with a .env, the library DB and a data-dir file, all with the canary."""
    home = tmp_path / "userhome"
    (home / ".config").mkdir(parents=True)
    (home / ".netrc").write_text(f"machine example password {CANARY}\n")
    (home / ".config" / "credentials").write_text(CANARY)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(f"OPENAI_API_KEY={CANARY}\n")
    settings.db_path.write_bytes(b"SQLite format 3\x00" + CANARY.encode())
    (settings.home / "config.toml").write_text(f"# {CANARY}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    return {
        "home": home,
        "netrc": home / ".netrc",
        "env_file": project / ".env",
        "db": settings.db_path,
        "data_dir": settings.home,
        "config": settings.home / "config.toml",
    }


@pytest.fixture
def sentinel(canary_env: str) -> Iterator[subprocess.Popen[bytes]]:
    """A host process the sandbox must not be able to see, signal, trace or read."""
    proc = subprocess.Popen(["sleep", "120"], env={"PATH": "/usr/bin:/bin", "SENTINEL_SECRET": canary_env})
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def loopback_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer()
    yield server
    server.close()
