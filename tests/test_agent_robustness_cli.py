"""`toolsmith run` (and the session under it) against model behaviour that used to break it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import evolve_script, make_settings
from cli_helpers import run_toolsmith
from toolsmith.agent.session import run_session
from toolsmith.config.providers import ProviderConfig
from toolsmith.testing import ScriptedModel, ScriptedServer, final, reply, tool_call

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them

# Not key-shaped: only its presence in the environment marks it as a secret.
SECRET = "plain-looking-secret-value"
TOKEN = "ghp_" + "Z" * 36  # key-shaped, wherever it appears


@pytest.fixture()
def server() -> Iterator[tuple[ScriptedModel, ScriptedServer]]:
    model = ScriptedModel(name="scripted")
    with ScriptedServer(model, strict=True) as srv:
        yield model, srv


def toolsmith(args: list[str], tmp: Path, srv: ScriptedServer) -> subprocess.CompletedProcess[str]:
    return run_toolsmith(
        args,
        tmp / "home",
        cwd=tmp,
        TOOLSMITH_NETWORK="false",
        LLM_PROVIDER="custom",
        LLM_BASE_URL=srv.base_url,
        LLM_MODEL="scripted",
        LLM_API_KEY=SECRET,
    )


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_rejected_key_mid_run_stops_and_keeps_the_trajectory(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]
) -> None:
    model, srv = server
    model.add(final("hello"))
    srv.inject(delay=0.001)  # task 1's call is answered; task 2's is refused
    srv.inject(status=401)
    proc = toolsmith(["run", "say hello", "say hello again", "and once more"], tmp_path, srv)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "LLM_API_KEY" in proc.stderr and "Traceback" not in proc.stderr
    path = Path(proc.stderr.split("trajectory so far is in")[1].split()[0].rstrip("."))
    tasks = [r for r in records(path) if r["record"] == "task"]
    assert [(t["index"], t["status"]) for t in tasks] == [(0, "answered"), (1, "error")]
    started = [r["task"] for r in records(path) if r.get("type") == "task_started"]
    assert started == [0, 1] and srv.request_count == 2  # the third task never ran
    assert SECRET not in proc.stdout + proc.stderr + path.read_text()


def test_secrets_are_redacted_from_every_output(tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]) -> None:
    model, srv = server
    for _ in range(2):
        model.add(
            reply(tool_call("code_interpreter", {"code": f"print('token {TOKEN}')"})),
            final(f"The key is {SECRET} and the token is {TOKEN}."),
        )
    out = tmp_path / "out.json"
    plain = toolsmith(["run", "leak it", "--no-create", "--output", str(out)], tmp_path, srv)
    as_json = toolsmith(["run", "leak it", "--no-create", "--json"], tmp_path, srv)
    assert plain.returncode == 0 and as_json.returncode == 0, plain.stderr + as_json.stderr
    trajectories = list((tmp_path / "home" / "trajectories").glob("*.jsonl"))
    texts = [plain.stdout, as_json.stdout, out.read_text()] + [p.read_text() for p in trajectories]
    assert len(trajectories) == 2 and "[redacted]" in plain.stdout
    for text in texts:
        assert SECRET not in text and TOKEN not in text


def test_output_modes_when_piped(tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]) -> None:
    model, srv = server
    for _ in range(3):
        model.add(reply(tool_call("code_interpreter", {"code": "print(6 * 7)"})), final("42 (computed with Python)"))
    verbose = toolsmith(["run", "compute 6 x 7", "--no-create", "-v"], tmp_path, srv)
    quiet = toolsmith(["run", "compute 6 x 7", "--no-create", "-q"], tmp_path, srv)
    as_json = toolsmith(["run", "compute 6 x 7", "--no-create", "--json"], tmp_path, srv)
    assert "\x1b[" not in verbose.stdout + quiet.stdout + as_json.stdout  # no styling in a pipe
    assert "step 1" in verbose.stdout and "model scripted:" in verbose.stdout and "→ code_interpreter" in verbose.stdout
    body = [line for line in quiet.stdout.splitlines() if line.strip() and not line.startswith("trajectory:")]
    assert len(body) == 2 and body[0] == "  = answer (answered): 42 (computed with Python)"
    assert body[1].startswith("  summary: answered-without-tool")
    events = [json.loads(line) for line in as_json.stdout.splitlines()]  # every line is one JSON object
    assert events[0]["type"] == "task_started" and events[-1]["type"] == "session_finished"
    assert Path(str(events[-1]["trajectory_file"])).is_file() and events[-1]["outcomes"] == ["answered-without-tool"]


def test_undecodable_model_text_is_printed_and_recorded(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]
) -> None:
    model, srv = server
    model.add(final("hello \ud83d"))  # half an emoji, as some local servers send
    proc = toolsmith(["run", "say hello"], tmp_path, srv)
    assert proc.returncode == 0, proc.stderr
    assert "hello \ufffd" in proc.stdout and "Traceback" not in proc.stderr
    path = Path(proc.stdout.split("trajectory:")[1].split()[0])
    answers = [r["answer"] for r in records(path) if r["record"] == "task"]
    assert answers == ["hello \ufffd"]


def test_the_trajectory_has_every_message_call_result_timing_and_usage(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer]
) -> None:
    model, srv = server
    model.add(*evolve_script())
    config = ProviderConfig(
        provider="custom", model="scripted", base_url=srv.base_url, api_key=SECRET, key_variable="LLM_API_KEY"
    )
    report = run_session(
        ["How many days between 2020-01-01 and 2020-03-01?"],
        settings=make_settings(tmp_path),
        provider=config,
        env={"LLM_API_KEY": SECRET},
    )
    assert report.trajectory_path is not None
    lines = records(report.trajectory_path)
    task = lines[-1]
    roles = [m["role"] for m in task["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    events = [r for r in lines if r["record"] == "event"]
    usage = [e for e in events if e["type"] == "model_usage"]
    assert len(usage) == 4 and all(e["total_tokens"] and isinstance(e["wall_s"], float) for e in usage)
    assert sum(e["total_tokens"] for e in usage) == task["tokens"]["total"]
    calls = [e["call_id"] for e in events if e["type"] == "tool_called"]
    results = [e for e in events if e["type"] == "tool_result"]
    assert calls == [e["call_id"] for e in results] and all("wall_s" in e and "data" in e for e in results)
    assert [a["tool"] for a in task["actions"]] == ["search_tools", "code_interpreter", "create_tool", "days_between"]
    assert SECRET not in report.trajectory_path.read_text()
