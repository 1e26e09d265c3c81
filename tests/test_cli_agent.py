"""`toolsmith run` and `toolsmith demo` as a user runs them: a real process, a local endpoint."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_helpers import answer_from_tool, evolve_script
from cli_helpers import run_toolsmith
from library_backends import postgres_schema
from toolsmith.library import ToolLibrary
from toolsmith.testing import ScriptedModel, ScriptedServer, final, reply, tool_call

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them

SECRET = "sk-canary-0123456789abcdefghij"


@pytest.fixture()
def server() -> Iterator[tuple[ScriptedModel, ScriptedServer]]:
    model = ScriptedModel(name="scripted")
    with ScriptedServer(model) as srv:
        yield model, srv


def toolsmith(args: list[str], home: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_toolsmith(args, home, cwd=cwd, TOOLSMITH_NETWORK="false", **env)


def endpoint(srv: ScriptedServer) -> dict[str, str]:
    return {"LLM_PROVIDER": "custom", "LLM_BASE_URL": srv.base_url, "LLM_MODEL": "scripted", "LLM_API_KEY": SECRET}


def test_run_evolves_writes_trajectory_and_output(tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]) -> None:
    model, srv = server
    model.add(*evolve_script())
    out = tmp_path / "run.json"
    proc = toolsmith(
        ["run", "How many days between 2020-01-01 and 2020-03-01?", "--output", str(out)],
        tmp_path / "home",
        tmp_path,
        **endpoint(srv),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "60 days" in proc.stdout and "trajectory:" in proc.stdout
    trajectory = Path(proc.stdout.split("trajectory:")[1].split()[0])
    assert trajectory.is_file() and trajectory.parent == tmp_path / "home" / "trajectories"
    text = trajectory.read_text()
    records = [json.loads(line) for line in text.splitlines()]
    assert records[-1]["record"] == "task" and records[-1]["messages"][0]["role"] == "system"
    assert SECRET not in text and SECRET not in out.read_text() and SECRET not in proc.stdout
    data = json.loads(out.read_text())
    assert data["answers"][0].startswith("60 days") and data["results"][0]["outcome"] == "evolved"
    assert [a["tool"] for a in data["trajectories"][0]][:3] == ["search_tools", "code_interpreter", "create_tool"]
    # the key was really sent to the endpoint, and only there
    assert srv.authorizations and all(a == f"Bearer {SECRET}" for a in srv.authorizations)


def test_demo_with_two_tasks_exits_by_the_reuse_verdict(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]
) -> None:
    model, srv = server
    model.add(*evolve_script())
    model.add(reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})), answer_from_tool)
    out = tmp_path / "demo.json"
    tasks = ["--task", "days between 2020-01-01 and 2020-03-01", "--task", "days between 2021-01-01 and 2021-12-31"]
    proc = toolsmith(["demo", *tasks, "--output", str(out)], tmp_path / "home", tmp_path, **endpoint(srv))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reuse verdict: HELD" in proc.stdout
    data = json.loads(out.read_text())
    assert data["reuse"]["held"] is True and data["reuse_verdict"]["reused"] is True

    # a second demo with --fresh starts from zero: task 2 cannot reuse, exit code 1
    model.add(final("I cannot tell without a tool."), final("I cannot tell without a tool."))
    proc = toolsmith(["demo", *tasks, "--fresh", "--no-create"], tmp_path / "home", tmp_path, **endpoint(srv))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "reuse verdict: NOT HELD" in proc.stdout and "previous library moved to" in proc.stdout
    assert list((tmp_path / "home").glob("library.*.bak.db")), "--fresh must keep the old library"


def test_missing_key_exits_2_and_suggests_offline(tmp_path: Path) -> None:
    proc = toolsmith(["run", "anything"], tmp_path / "home", tmp_path, LLM_PROVIDER="openai")
    assert proc.returncode == 2
    assert "OPENAI_API_KEY" in proc.stderr and "demo --offline" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_dotenv_in_the_working_directory_is_read(tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]) -> None:
    model, srv = server
    model.add(final("hello"))
    (tmp_path / ".env").write_text(
        f"LLM_PROVIDER=custom\nLLM_BASE_URL={srv.base_url}\nLLM_MODEL=scripted\nLLM_API_KEY={SECRET}\n"
    )
    proc = toolsmith(["run", "say hello", "--json"], tmp_path / "home", tmp_path)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [e["type"] for e in events][-2:] == ["task_finished", "session_finished"] and SECRET not in proc.stdout
    assert Path(events[-1]["trajectory_file"]).is_file()


@pytest.mark.parametrize(
    "args",
    [["run"], ["demo", "--bogus"], ["tools", "search"], ["run", "x", "--output"], ["nonsense"]],
)
def test_bad_arguments_are_usage_errors_without_traceback(tmp_path: Path, args: list[str]) -> None:
    proc = toolsmith(args, tmp_path / "home", tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Usage" in proc.stderr + proc.stdout or "Error" in proc.stderr


def test_rejected_key_exits_2(tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]) -> None:
    _, srv = server
    srv.inject(status=401)
    proc = toolsmith(["run", "anything"], tmp_path / "home", tmp_path, **endpoint(srv))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "LLM_API_KEY" in proc.stderr and SECRET not in proc.stderr + proc.stdout


def test_model_outage_keeps_the_trajectory(tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]) -> None:
    _, srv = server
    srv.inject(status=503, retry_after=0, times=20)
    proc = toolsmith(["run", "anything", "-q"], tmp_path / "home", tmp_path, **endpoint(srv))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    files = list((tmp_path / "home" / "trajectories").glob("*.jsonl"))
    assert files and '"status": "error"' in files[0].read_text()


@pytest.mark.postgres
def test_run_stores_its_tool_in_a_postgres_library(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]
) -> None:
    """`toolsmith run` with TOOLSMITH_LIBRARY_URL: the new tool lands in PostgreSQL, and another
    machine (another home) finds it there."""
    model, srv = server
    model.add(*evolve_script())
    with postgres_schema() as url:
        proc = toolsmith(
            ["run", "How many days between 2020-01-01 and 2020-03-01?"],
            tmp_path / "home",
            tmp_path,
            TOOLSMITH_LIBRARY_URL=url,
            **endpoint(srv),
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "60 days" in proc.stdout
        assert not (tmp_path / "home" / "library.db").exists()
        with ToolLibrary(url) as library:
            [tool] = library.list_tools()
            assert library.audit_log(tool.name)[0].action == "add"
        listed = run_toolsmith(["tools", "list", "--json"], tmp_path / "other-machine", TOOLSMITH_LIBRARY_URL=url)
        assert listed.returncode == 0, listed.stderr
        assert [t["name"] for t in json.loads(listed.stdout)] == [tool.name]
        assert url.split("@")[0].split(":")[-1] not in listed.stdout + listed.stderr  # no password
