"""The run record: ``--output`` is written whatever ends a run, and exit codes tell outcomes apart."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from cli_helpers import run_toolsmith
from toolsmith import cli
from toolsmith.agent import session
from toolsmith.agent.loop import Agent
from toolsmith.cli.common import EXIT_CONFIG, EXIT_CRASH, EXIT_FAILED, EXIT_INTERRUPTED
from toolsmith.testing import ScriptedModel, ScriptedServer, final, reply, tool_call

KEY = "plain-looking-secret-value"


@pytest.fixture()
def server() -> Iterator[tuple[ScriptedModel, ScriptedServer]]:
    model = ScriptedModel(name="scripted")
    with ScriptedServer(model, strict=True) as srv:
        yield model, srv


def endpoint(srv: ScriptedServer) -> dict[str, str]:
    return {"LLM_PROVIDER": "custom", "LLM_BASE_URL": srv.base_url, "LLM_MODEL": "scripted", "LLM_API_KEY": KEY}


def toolsmith(args: list[str], tmp: Path, srv: ScriptedServer) -> subprocess.CompletedProcess[str]:
    return run_toolsmith(args, tmp / "home", cwd=tmp, TOOLSMITH_NETWORK="false", **endpoint(srv))


def in_process(args: list[str], srv: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> Result:
    for name, value in {**endpoint(srv), "TOOLSMITH_NETWORK": "false"}.items():
        monkeypatch.setenv(name, value)
    return CliRunner().invoke(cli.app, args)


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_a_key_refused_mid_run_still_writes_the_output(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]
) -> None:
    model, srv = server
    model.add(final("hello"))
    srv.inject(delay=0.001)  # task 1 is answered; task 2's call is refused
    srv.inject(status=401)
    out = tmp_path / "out.json"
    proc = toolsmith(["run", "one", "two", "three", "--output", str(out)], tmp_path, srv)
    assert proc.returncode == EXIT_CONFIG, proc.stderr
    data = read(out)
    assert [(r["index"], r["status"]) for r in data["results"]] == [(0, "answered"), (1, "error")]
    assert data["results"][1]["error"] and data["not_run"] == ["three"]
    assert data["stop"]["kind"] == "config" and data["stop"]["task"] == 1 and data["stop"]["setting"]
    assert KEY not in out.read_text()


@pytest.mark.parametrize(
    ("raised", "code", "status", "kind"),
    [
        (ZeroDivisionError("a bug in toolsmith"), EXIT_CRASH, "crashed", "crash"),
        (KeyboardInterrupt(), EXIT_INTERRUPTED, "interrupted", "interrupted"),
    ],
)
def test_a_crash_or_ctrl_c_mid_run_still_writes_the_output(
    tmp_path: Path,
    server: tuple[ScriptedModel, ScriptedServer],
    monkeypatch: pytest.MonkeyPatch,
    raised: BaseException,
    code: int,
    status: str,
    kind: str,
) -> None:
    model, srv = server
    model.add(final("hello"))
    real = Agent.run_task

    def second_task_breaks(self: Agent, task: str, *, index: int = 0) -> Any:
        if index == 1:
            raise raised
        return real(self, task, index=index)

    monkeypatch.setattr(Agent, "run_task", second_task_breaks)
    out = tmp_path / "out.json"
    result = in_process(["run", "one", "two", "three", "--output", str(out)], srv, monkeypatch)
    assert result.exit_code == code, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    data = read(out)
    assert [(r["index"], r["status"]) for r in data["results"]] == [(0, "answered"), (1, status)]
    assert data["answers"][0] == "hello" and data["not_run"] == ["three"] and data["stop"]["kind"] == kind
    trajectory = Path(data["trajectory_file"])
    assert str(trajectory) in result.stderr
    stops = [json.loads(line) for line in trajectory.read_text().splitlines() if '"record": "stop"' in line]
    assert len(stops) == 1 and stops[0]["kind"] == kind
    if kind == "crash":  # the traceback goes to the trajectory, not to the terminal
        assert "ZeroDivisionError: a bug in toolsmith" in stops[0]["traceback"]
        assert "second_task_breaks" in stops[0]["traceback"]


def test_a_budget_stop_is_recorded_and_exits_1(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, srv = server
    model.add(reply(tool_call("search_tools", {"query": "days between dates"})), final("hello"))
    (tmp_path / "config.toml").write_text("[budget]\nmax_steps = 1\n")
    monkeypatch.setenv("TOOLSMITH_CONFIG", str(tmp_path / "config.toml"))
    out = tmp_path / "out.json"
    result = in_process(["run", "one", "two", "--output", str(out)], srv, monkeypatch)
    data = read(out)
    statuses = [r["status"] for r in data["results"]]
    assert statuses == ["budget", "answered"]
    assert result.exit_code == EXIT_FAILED and data["stop"] is None and data["not_run"] == []


@pytest.mark.parametrize("where", ["a directory", "a missing folder"])
def test_a_bad_output_path_fails_before_any_model_call(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer], where: str
) -> None:
    _, srv = server
    folder = tmp_path / "results"
    folder.mkdir()
    target = folder if where == "a directory" else tmp_path / "missing" / "out.json"
    before = sorted(p.name for p in tmp_path.rglob("*"))
    proc = toolsmith(["run", "one", "--output", str(target)], tmp_path, srv)
    assert proc.returncode == EXIT_CONFIG
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --output") and "Traceback" not in proc.stderr
    assert srv.request_count == 0  # refused before the model was asked anything
    after = sorted(p.name for p in tmp_path.rglob("*") if "home" not in p.parts)
    assert after == [n for n in before if n != "home"]  # no stray temporary file anywhere


def test_output_to_a_special_file_is_written_in_place(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]
) -> None:
    model, srv = server
    model.add(final("hello"))
    proc = toolsmith(["run", "one", "--json", "--output", "/dev/null"], tmp_path, srv)
    assert proc.returncode == 0, proc.stderr
    assert Path("/dev/null").is_char_device()


def test_a_bug_before_the_first_task_still_writes_the_output(
    tmp_path: Path,
    server: tuple[ScriptedModel, ScriptedServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, srv = server

    class BrokenSandbox:
        def __init__(self, settings: object) -> None:
            raise ZeroDivisionError("a bug while setting up")

    monkeypatch.setattr(session, "Sandbox", BrokenSandbox)
    for name, value in endpoint(srv).items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "out.json"
    monkeypatch.setattr(sys, "argv", ["toolsmith", "run", "one", "--output", str(out)])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == EXIT_CRASH
    assert "internal error (ZeroDivisionError" in capsys.readouterr().err
    data = read(out)
    assert data["results"] == [] and data["not_run"] == ["one"] and data["stop"]["kind"] == "crash"
