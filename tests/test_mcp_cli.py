"""``toolsmith mcp`` as a command: usage errors, a missing SDK, a missing key, a busy port,
and ``--solve-task`` running the whole agent (against a scripted model on loopback)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from agent_helpers import DAYS_CODE, DAYS_PARAMS, answer_from_tool
from toolsmith.cli import app
from toolsmith.library import Provenance, ToolLibrary, ToolSpec
from toolsmith.testing import ScriptedModel, ScriptedServer, reply, tool_call

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("LLM_")}
    env.pop("OPENAI_BASE_URL", None)
    env.update({"TOOLSMITH_HOME": str(home), "TOOLSMITH_NETWORK": "false", **extra})
    return env


def toolsmith_mcp(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolsmith", "mcp", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_bogus_transport_is_a_usage_error(tmp_path: Path) -> None:
    proc = toolsmith_mcp(["--transport", "bogus"], clean_env(tmp_path / "home"), tmp_path)
    assert proc.returncode == 2
    assert "bogus" in proc.stderr and "stdio" in proc.stderr and "http" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_bad_port_is_a_usage_error(tmp_path: Path) -> None:
    proc = toolsmith_mcp(["--transport", "http", "--port", "70000"], clean_env(tmp_path / "home"), tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_a_port_in_use_says_which_option_to_change(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = toolsmith_mcp(["--transport", "http", "--port", str(port)], clean_env(tmp_path / "home"), tmp_path)
    assert proc.returncode == 2
    assert f"Cannot listen on 127.0.0.1:{port}" in proc.stderr and "--port" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_without_the_sdk_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # makes `import mcp` fail, as when it is not installed
    monkeypatch.delitem(sys.modules, "toolsmith.mcp.server", raising=False)
    result = CliRunner().invoke(app, ["mcp"])
    assert result.exit_code == 2
    assert "needs the MCP Python SDK" in result.output and "pip install 'toolsmith[mcp]'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_solve_task_without_a_model_key_fails_at_startup(tmp_path: Path) -> None:
    proc = toolsmith_mcp(["--solve-task"], clean_env(tmp_path / "home", LLM_PROVIDER="openai"), tmp_path)
    assert proc.returncode == 2
    assert "No API key" in proc.stderr and "OPENAI_API_KEY" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""  # nothing was served


def test_solve_task_runs_the_agent_and_reuses_a_library_tool(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    home = tmp_path / "home"
    home.mkdir()
    with ToolLibrary(home / "library.db") as library:
        spec = ToolSpec(
            name="days_between",
            description="Count the days between two ISO dates.",
            parameters=DAYS_PARAMS,
            code=DAYS_CODE,
            test_args={"start": "2020-01-01", "end": "2020-03-01"},
        )
        library.add(spec, provenance=Provenance(origin="test"), gate={"passed": True})
    model = ScriptedModel(name="scripted")
    model.add(reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})), answer_from_tool)
    secret = "sk-canary-0123456789abcdefghij"

    async def main(url: str) -> None:
        env = clean_env(home, LLM_PROVIDER="custom", LLM_BASE_URL=url, LLM_MODEL="scripted", LLM_API_KEY=secret)
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "toolsmith", "mcp", "--solve-task"], env=env, cwd=str(tmp_path)
        )
        async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"days_between", "solve_task"}
            assert tools["solve_task"].input_schema["required"] == ["task"]
            empty = await client.call_tool("solve_task", {"task": "  "})
            assert empty.is_error is True and (empty.structured_content or {})["error_type"] == "bad_arguments"
            result = await client.call_tool("solve_task", {"task": "How many days from 2021-01-01 to 2021-12-31?"})
            assert result.is_error is False, result.content
            data = result.structured_content or {}
            assert data["answer"].startswith("364 days") and "days_between@1" in data["answer"]
            assert data["reused"] is True and data["created_tools"] == []
            assert "days_between v1" in data["trajectory"]
            assert secret not in str(result.content)

    with ScriptedServer(model) as server:
        anyio.run(main, server.base_url)
    with ToolLibrary(home / "library.db") as library:
        assert library.get("days_between").stats.calls == 1  # the agent's call, recorded
