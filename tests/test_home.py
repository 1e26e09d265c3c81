"""A home that cannot be used as it is: a file in its place, or a read-only mount.

A home that is a file is one sentence naming the path and the fix, and a problem in
``doctor``. A read-only home (a real read-only bind mount, made with bubblewrap) serves
browsing: ``tools list/show/search``, ``library where`` and ``ui``; commands that write say
the home is read-only, and ``doctor`` says so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from toolsmith import cli
from toolsmith.cli.common import EXIT_CONFIG, EXIT_FAILED
from toolsmith.config import Settings
from toolsmith.errors import ConfigError
from toolsmith.library import Provenance, ToolLibrary, ToolSpec

SPEC = ToolSpec(
    name="days_between",
    description="Count the days between two ISO dates.",
    parameters={"type": "object", "properties": {"start": {"type": "string"}}, "required": ["start"]},
    code="def run(start: str) -> dict:\n    return {'start': start}\n",
    test_args={"start": "2020-01-01"},
)


@pytest.mark.parametrize("below", [False, True])
def test_a_home_that_is_a_file_is_one_sentence_naming_the_path_and_the_fix(tmp_path: Path, below: bool) -> None:
    blocker = tmp_path / "home"
    blocker.write_text("not a folder")
    home = blocker / "toolsmith" if below else blocker
    with pytest.raises(ConfigError) as raised:
        Settings.load(env={"TOOLSMITH_HOME": str(home)})
    assert raised.value.setting == "TOOLSMITH_HOME"
    assert str(home) in str(raised.value) and "Point TOOLSMITH_HOME at a folder" in str(raised.value)
    assert f"move {blocker} out of the way" in str(raised.value)


def test_every_command_refuses_a_file_home_with_that_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.write_text("")
    monkeypatch.setenv("TOOLSMITH_HOME", str(home))
    for args in (["tools", "list"], ["library", "where"], ["sandbox", "describe"], ["run", "hello"]):
        assert cli.run(args) == EXIT_CONFIG, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"The toolsmith home {home} cannot be used: it is a file" in err, err
    assert home.read_text() == ""  # left as it was


def _doctor(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    monkeypatch.setenv("TOOLSMITH_SEARCH_BACKENDS", "searxng")  # no probe leaves the machine
    monkeypatch.setenv("LLM_PROVIDER", "moonshot")
    monkeypatch.delenv("MOONSHOT_API_KEY", raising=False)
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    assert cli.run(["doctor", "--json"]) == EXIT_FAILED
    return {row["check"]: row for row in json.loads(capsys.readouterr().out)}


def test_doctor_reports_a_file_home_as_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.write_text("")
    monkeypatch.setenv("TOOLSMITH_HOME", str(home))
    rows = _doctor(monkeypatch, capsys)
    assert rows["toolsmith home"]["ok"] is False and "it is a file" in str(rows["toolsmith home"]["detail"])
    assert rows["tool library"]["ok"] is False and "cannot be created" in str(rows["tool library"]["detail"])
    assert rows["sandbox"]["detail"]  # the other checks still ran


def test_doctor_shows_the_sandbox_network_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path))
    monkeypatch.delenv("TOOLSMITH_NETWORK", raising=False)
    rows = _doctor(monkeypatch, capsys)
    assert rows["toolsmith home"]["ok"] is True
    detail = str(rows["sandbox network"]["detail"])
    assert detail.startswith("on by default (sandbox.network = true)") or "cannot take the network away" in detail
    assert "127.0.0.1" in detail or "loopback" in detail
    monkeypatch.setenv("TOOLSMITH_NETWORK", "false")
    rows = _doctor(monkeypatch, capsys)
    detail = str(rows["sandbox network"]["detail"])
    assert detail.startswith("off (sandbox.network = false)") or "cannot take the network away" in detail


# --- a read-only home: a real read-only mount -------------------------------------------


def _bwrap() -> str | None:
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = subprocess.run([path, "--dev-bind", "/", "/", "true"], capture_output=True, timeout=60)
    return path if probe.returncode == 0 else None


@pytest.fixture()
def read_only_home(tmp_path: Path) -> Iterator[tuple[list[str], Path]]:
    """A home holding one tool, and the command prefix that runs toolsmith with it mounted read-only."""
    bwrap = _bwrap()
    if bwrap is None:
        pytest.skip("bubblewrap cannot make a mount namespace here")
    home = tmp_path / "home"
    home.mkdir()
    with ToolLibrary(home / "library.db") as library:
        library.add(SPEC, provenance=Provenance(origin="test"), gate={"passed": True})
    before = sorted(p.name for p in home.iterdir())
    prefix = [bwrap, "--dev-bind", "/", "/", "--ro-bind", str(home), str(home), "--die-with-parent"]
    yield [*prefix, sys.executable, "-m", "toolsmith"], home
    assert sorted(p.name for p in home.iterdir()) == before  # nothing was written


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("LLM_")}
    env.update({"TOOLSMITH_HOME": str(home), "TOOLSMITH_SEARCH_BACKENDS": "searxng", **extra})
    return env


@pytest.mark.slow
def test_a_read_only_home_serves_browsing_and_refuses_writes_with_a_reason(
    read_only_home: tuple[list[str], Path],
) -> None:
    command, home = read_only_home

    def toolsmith(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*command, *args], capture_output=True, text=True, env=_env(home, **extra), timeout=120)

    for args in (["tools", "list"], ["tools", "show", "days_between"], ["tools", "search", "days between dates"]):
        done = toolsmith(*args)
        assert done.returncode == 0 and "days_between" in done.stdout, (args, done.stderr)
    where = toolsmith("library", "where", "--json")
    assert where.returncode == 0 and json.loads(where.stdout)["tools"] == 1, where.stderr

    writes = (["tools", "rm", "days_between"], ["tools", "quarantine", "days_between", "--reason", "x"])
    for args in writes:
        done = toolsmith(*args)
        assert done.returncode == EXIT_CONFIG, (args, done.stderr)
        assert f"The toolsmith home {home} (TOOLSMITH_HOME) is read-only" in done.stderr
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    run = toolsmith("run", "hello", LLM_PROVIDER="custom", LLM_BASE_URL="http://127.0.0.1:9/v1", LLM_MODEL="m")
    assert run.returncode == EXIT_CONFIG and "is read-only" in run.stderr, run.stderr

    doctor = toolsmith("doctor", "--json")
    rows = {row["check"]: row for row in json.loads(doctor.stdout)}
    assert doctor.returncode == EXIT_FAILED
    assert rows["toolsmith home"]["ok"] is False and "is read-only" in rows["toolsmith home"]["detail"]
    assert rows["tool library"]["ok"] is True and "1 tool(s)" in rows["tool library"]["detail"]


@pytest.mark.slow
def test_the_ui_serves_a_read_only_home(read_only_home: tuple[list[str], Path]) -> None:
    command, home = read_only_home
    with subprocess.Popen(
        [*command, "ui", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(home)
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            found = re.search(r"(http://\S+)\?token=(\S+)", line)
            assert found, line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
            url, token = found.groups()
            headers = {"Authorization": f"Bearer {token}"}
            page = httpx.get(url, headers=headers, timeout=30)  # the library page
            assert page.status_code == 200 and "days_between" in page.text
            tool = httpx.get(url + "tools/days_between", headers=headers, timeout=30)
            assert tool.status_code == 200 and "Count the days" in tool.text
        finally:
            proc.terminate()
            proc.wait(timeout=60)
