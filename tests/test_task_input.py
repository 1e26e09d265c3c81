"""Tasks too long for an argument list, or not fit to run: ``run -``, ``--task-file``, the
``budget.max_task_chars`` cap (CLI and MCP ``solve_task``), ``--json`` failures on stdout,
and tasks holding terminal escape sequences.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolsmith import cli
from toolsmith.cli.common import EXIT_CONFIG
from toolsmith.cli.render import PlainRenderer
from toolsmith.config import Settings
from toolsmith.config.providers import ProviderConfig
from toolsmith.errors import TaskTooLongError
from toolsmith.events import TaskStarted
from toolsmith.testing import ScriptedModel, ScriptedServer, final

MEGABYTE_TASK = "Sum these numbers: " + "1 " * 500_000


@pytest.fixture()
def server() -> Iterator[tuple[ScriptedModel, ScriptedServer]]:
    model = ScriptedModel(name="scripted")
    with ScriptedServer(model) as srv:
        yield model, srv


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("TOOLSMITH_HOME", str(home))
    monkeypatch.setenv("TOOLSMITH_NETWORK", "false")
    monkeypatch.setenv("TOOLSMITH_PRE_RETRIEVAL", "false")
    monkeypatch.delenv("TOOLSMITH_CONFIG", raising=False)
    return home


def _endpoint(srv: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "LLM_PROVIDER": "custom", "LLM_BASE_URL": srv.base_url, "LLM_MODEL": "scripted", "LLM_API_KEY": "sk-test-key",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


def _json_failure(out: str) -> dict[str, Any]:
    lines = out.strip().splitlines()
    record: dict[str, Any] = json.loads(lines[-1])
    assert record["ok"] is False and record["exit_code"] == EXIT_CONFIG, record
    return record


def test_run_dash_reads_one_multi_line_task_from_standard_input(
    home: Path,
    tmp_path: Path,
    server: tuple[ScriptedModel, ScriptedServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model, srv = server
    model.add(final("Noted: two lines."))
    _endpoint(srv, monkeypatch)
    task = "Read this table:\na | b\n1 | 2\n"
    _stdin(monkeypatch, task)
    out = tmp_path / "run.json"
    assert cli.run(["run", "-", "--output", str(out)]) == 0, capsys.readouterr()
    assert json.loads(out.read_text())["tasks"] == [task]
    assert task.splitlines()[0] in str(srv.requests[0])


def test_task_files_run_after_the_arguments(
    home: Path,
    tmp_path: Path,
    server: tuple[ScriptedModel, ScriptedServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model, srv = server
    model.add(final("first"), final("second"))
    _endpoint(srv, monkeypatch)
    (tmp_path / "task.txt").write_text("the task from a file\n", encoding="utf-8")
    out = tmp_path / "run.json"
    assert cli.run(["run", "an argument", "--task-file", str(tmp_path / "task.txt"), "--output", str(out)]) == 0
    assert json.loads(out.read_text())["tasks"] == ["an argument", "the task from a file\n"]


@pytest.mark.parametrize("source", ["stdin", "file"])
def test_a_megabyte_task_is_refused_before_any_model_call(
    source: str,
    home: Path,
    tmp_path: Path,
    server: tuple[ScriptedModel, ScriptedServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, srv = server
    _endpoint(srv, monkeypatch)
    if source == "stdin":
        _stdin(monkeypatch, MEGABYTE_TASK)
        args = ["run", "-", "--json"]
    else:
        (tmp_path / "big.txt").write_text(MEGABYTE_TASK, encoding="utf-8")
        args = ["run", "--task-file", str(tmp_path / "big.txt"), "--json"]
    assert cli.run(args) == EXIT_CONFIG
    captured = capsys.readouterr()
    record = _json_failure(captured.out)
    assert "budget.max_task_chars allows 50,000" in record["error"]
    assert captured.err.startswith("error: The task in ") and "Shorten it" in captured.err
    assert srv.requests == []  # nothing was sent to the model


def test_the_cap_is_a_setting(
    home: Path,
    tmp_path: Path,
    server: tuple[ScriptedModel, ScriptedServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model, srv = server
    model.add(final("read it all"))
    _endpoint(srv, monkeypatch)
    home.mkdir()
    (home / "config.toml").write_text("[budget]\nmax_task_chars = 0\n", encoding="utf-8")  # 0: no limit
    (tmp_path / "big.txt").write_text(MEGABYTE_TASK, encoding="utf-8")
    assert cli.run(["run", "--task-file", str(tmp_path / "big.txt")]) == 0, capsys.readouterr().err


def test_a_session_refuses_a_too_long_task_itself(tmp_path: Path) -> None:
    from toolsmith.agent.session import Session

    settings = Settings.load(home=tmp_path, env={})
    with pytest.raises(TaskTooLongError) as raised:  # demo --task and solve_task come this way
        Session(["x" * (settings.max_task_chars + 1)], settings=settings, model=ScriptedModel(name="unused"))
    assert raised.value.setting == "budget.max_task_chars" and raised.value.chars == settings.max_task_chars + 1
    assert not (tmp_path / "trajectories").exists()  # refused before anything was opened


def test_solve_task_refuses_a_too_long_task_without_running_the_agent(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from toolsmith.library import ToolLibrary
    from toolsmith.mcp.server import LibraryTools, ListChangeWatcher, build_server
    from toolsmith.mcp.solve import TaskSolver
    from toolsmith.sandbox import Sandbox

    class NeverSolve(TaskSolver):
        def solve(self, task: str) -> Any:
            raise AssertionError("the agent must not run")

    settings = Settings.load(home=tmp_path, env={})
    provider = ProviderConfig("custom", "scripted", "http://127.0.0.1:9/v1", "k", "LLM_API_KEY")
    with ToolLibrary.open(settings) as library:
        tools = LibraryTools(settings, library, Sandbox(settings))
        server = build_server(tools, ListChangeWatcher(tools), NeverSolve(settings, provider))

        async def main() -> None:
            async with Client(server) as client:
                result = await client.call_tool("solve_task", {"task": MEGABYTE_TASK})
                assert result.is_error is True
                data = result.structured_content or {}
                assert data["error_type"] == "bad_arguments" and "budget.max_task_chars" in data["error"]

        anyio.run(main)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["run", "", "--json"], "a task must not be empty"),
        (["run", "  ", "--json"], "a task must not be empty"),
        (["run", "--json"], "no task given. Usage: toolsmith run TASK..."),
        (["run", "hello", "--json", "--output", "/nonexistent-folder/run.json"], "does not exist"),
        (["demo", "--offline", "--json", "--output", "/nonexistent-folder/run.json"], "does not exist"),
    ],
)
def test_json_failures_print_the_ok_false_line_on_stdout(
    args: list[str], text: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.run(args) == EXIT_CONFIG
    captured = capsys.readouterr()
    assert text in _json_failure(captured.out)["error"]
    assert captured.err.count("\n") == 1 and captured.err.startswith("error: ")


def test_a_task_with_escape_sequences_is_shown_escaped() -> None:
    stream = io.StringIO()
    task = "clear \x1b[2J\x1b[31mred\x1b[0m, bell \x07, return \rover\u202eevil\nnext line\ttab"
    PlainRenderer(stream)(TaskStarted(task=0, text=task, session_id="s"))
    shown = stream.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown and "\u202e" not in shown
    assert "\\x1b[2J\\x1b[31mred" in shown and "\\x07" in shown and "\\r" in shown and "\\u202e" in shown
    assert "\nnext line\ttab" in shown  # layout characters stay


def test_the_run_command_shows_an_escaped_task(
    home: Path,
    server: tuple[ScriptedModel, ScriptedServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model, srv = server
    model.add(final("done"))
    _endpoint(srv, monkeypatch)
    assert cli.run(["run", "say \x1b]0;owned\x07 hi"]) == 0
    out = capsys.readouterr().out
    assert "== task 1: say \\x1b]0;owned\\x07 hi" in out and "\x1b" not in out
