"""The model fuzz cases that matter most, through the installed ``toolsmith run`` command.

Each case must exit with a documented code (0 done, 1 not done, 2 a setting to change),
print no traceback, and leave both the ``--output`` record and the trajectory on disk.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import run_toolsmith
from toolsmith.testing import ScriptedModel, ScriptedServer, final, reply, tool_call

pytestmark = pytest.mark.slow  # one CLI process per case

DEEP_ARGS = '{"query": ' + "[" * 500 + "]" * 500 + "}"


@pytest.fixture
def endpoint() -> Iterator[tuple[ScriptedModel, ScriptedServer]]:
    model = ScriptedModel(name="fuzz")
    with ScriptedServer(model) as server:
        yield model, server


def run(tmp: Path, server: ScriptedServer, *tasks: str, **env: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    out = tmp / "out.json"
    proc = run_toolsmith(
        ["run", *tasks, "--output", str(out)],
        tmp / "home",
        cwd=tmp,
        TOOLSMITH_NETWORK="false",
        LLM_PROVIDER="custom",
        LLM_BASE_URL=server.base_url,
        LLM_MODEL="fuzz",
        **env,
    )
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text, text
    assert proc.returncode in (0, 1, 2), text
    assert out.is_file(), text
    trajectories = list((tmp / "home" / "trajectories").glob("*.jsonl"))
    assert len(trajectories) == 1, text
    return proc, json.loads(out.read_text(encoding="utf-8"))


def statuses(record: Any) -> list[str]:
    return [r["status"] for r in record["results"]]


@pytest.mark.parametrize(
    ("inject", "says"),
    [
        ({"body": "upstream says no", "content_type": "application/json"}, "not JSON"),
        ({"body": "<html><body>Sign in</body></html>", "content_type": "application/json"}, "HTML page"),
        ({"body": b'{"choices": "\xff"}'}, "not valid UTF-8"),
        ({"body": {"object": "chat.completion"}}, "without any choices"),
        ({"body": "{" * 10_000 + "}" * 10_000, "content_type": "application/json"}, "nested too deeply"),
        ({"events": "data: " + "[" * 10_000 + "\n\n"}, "nested too deeply"),
        ({"status": 429, "retry_after": 100000}, "asked to wait 100000s"),
    ],
    ids=["not-json", "html-as-json", "invalid-utf8", "no-choices", "deep-body", "deep-stream", "retry-after"],
)
def test_a_bad_answer_is_a_recorded_clear_error(
    endpoint: tuple[ScriptedModel, ScriptedServer], tmp_path: Path, inject: dict[str, Any], says: str
) -> None:
    _, server = endpoint
    server.inject(**inject)
    proc, record = run(tmp_path, server, "say hello")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert statuses(record) == ["error"]
    assert says in proc.stdout + proc.stderr and says in json.dumps(record)


def test_a_stall_names_the_timeout_setting(endpoint: tuple[ScriptedModel, ScriptedServer], tmp_path: Path) -> None:
    model, server = endpoint
    model.add(final("x" * 400))
    server.inject(stall_after=3)
    proc, record = run(tmp_path, server, "say hello", TOOLSMITH_MODEL_TIMEOUT_S="0.5")
    assert proc.returncode == 1 and statuses(record) == ["error"]
    assert "TOOLSMITH_MODEL_TIMEOUT_S" in proc.stdout + proc.stderr
    assert server.request_count == 1  # not sent again while the server may still be generating


def test_deep_arguments_go_back_to_the_model(endpoint: tuple[ScriptedModel, ScriptedServer], tmp_path: Path) -> None:
    model, server = endpoint
    model.add(reply(tool_call("search_tools", DEEP_ARGS)), final("hello after the refusal"))
    proc, record = run(tmp_path, server, "say hello")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert statuses(record) == ["answered"]
    tool_messages = [m for m in server.requests[-1]["messages"] if m.get("role") == "tool"]
    assert "nested too deeply" in tool_messages[-1]["content"]  # the model was told, and answered


@pytest.mark.parametrize("stream", ["true", "false"])
def test_an_endpoint_that_answers_every_request_late_completes_the_tasks(
    endpoint: tuple[ScriptedModel, ScriptedServer], tmp_path: Path, stream: str
) -> None:
    model, server = endpoint
    model.add(final("hello"), final("hello again"))
    server.inject(delay=1.0, times=2)
    proc, record = run(
        tmp_path, server, "say hello", "say hello again", TOOLSMITH_MODEL_TIMEOUT_S="20", TOOLSMITH_MODEL_STREAM=stream
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert statuses(record) == ["answered", "answered"]
    assert [bool(r.get("stream")) for r in server.requests] == [stream == "true"] * 2


@pytest.mark.parametrize(
    ("status", "body", "setting"),
    [
        (401, {"error": {"message": "Incorrect API key"}}, "LLM_API_KEY"),
        (404, {"error": {"message": "The model `fuzz` does not exist", "code": "model_not_found"}}, "LLM_MODEL"),
    ],
)
def test_a_refusal_mid_run_exits_2_with_the_record_written(
    endpoint: tuple[ScriptedModel, ScriptedServer], tmp_path: Path, status: int, body: Any, setting: str
) -> None:
    model, server = endpoint
    model.add(final("hello"))
    server.inject(delay=0.001)  # task 1 is answered, task 2 is refused
    server.inject(status=status, body=body)
    proc, record = run(tmp_path, server, "say hello", "say hello again", "and once more", LLM_API_KEY="k")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert setting in proc.stderr
    assert statuses(record)[:2] == ["answered", "error"]
    assert server.request_count == 2  # the third task never asked the model
