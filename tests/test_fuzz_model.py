"""Fuzzing the model endpoint: bad bodies, broken streams, deep JSON, faults and slow answers.

Every case runs a whole session (agent, toolbox, trajectory) against a real local HTTP
endpoint through the real SDK, and must end in an answer or a clear error: no exception
escapes, the trajectory holds the task with its status, and the ``--output`` record can be
written. ``test_fuzz_model_cli.py`` drives a subset through the installed ``toolsmith``
command. Retry waits go to a recorder, not to the wall clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import make_settings
from toolsmith.agent.session import run_session
from toolsmith.cli.output import write_output
from toolsmith.config.providers import ProviderConfig
from toolsmith.events import Event, ToolResult
from toolsmith.model.client import ChatModel
from toolsmith.model.retry import RetryPolicy
from toolsmith.testing import ScriptedModel, ScriptedServer, final, reply, tool_call


def deep(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


DEEP_ARGS_1KB = '{"query": ' + deep(500) + "}"  # about 1 KB, nested 500 deep
DEEP_ARGS_10K = '{"query": ' + deep(10_000, "{", "}").replace("{}", '{"a": 1}', 1) + "}"


@dataclass(frozen=True)
class Case:
    """One fuzz case: what the endpoint does, and how the task must end."""

    name: str
    setup: Callable[[ScriptedModel, ScriptedServer], None]
    status: str  # answered | error
    says: str = ""  # text the answer (for errors: the error) must contain
    stream: bool = True
    timeout: float = 5.0


def answers(*items: Any) -> Callable[[ScriptedModel, ScriptedServer], None]:
    def setup(model: ScriptedModel, server: ScriptedServer) -> None:
        model.add(*items)

    return setup


def fault(*, then: Any = None, times: int = 1, **kwargs: Any) -> Callable[[ScriptedModel, ScriptedServer], None]:
    def setup(model: ScriptedModel, server: ScriptedServer) -> None:
        server.inject(times=times, **kwargs)
        if then is not None:
            model.add(then)

    return setup


BODIES: list[tuple[str, dict[str, Any], str]] = [
    ("not-json", {"body": "Internal gateway says hi", "content_type": "application/json"}, "not JSON"),
    ("html-as-json", {"body": "<html><body>login</body></html>", "content_type": "application/json"}, "HTML page"),
    ("html", {"body": "<!DOCTYPE html><title>x</title>", "content_type": "text/html"}, "HTML page"),
    ("invalid-utf8", {"body": b'{"choices": [{"message": {"content": "\xc3\x28"}}]}'}, "not valid UTF-8"),
    ("no-choices", {"body": {"id": "c", "object": "chat.completion", "model": "m"}}, "without any choices"),
    ("empty-choices", {"body": {"id": "c", "choices": []}}, "without any choices"),
    ("error-object", {"body": {"error": {"message": "model overloaded"}}}, "model overloaded"),
    ("json-array", {"body": [{"choices": []}]}, "not an object"),
    ("json-string", {"body": '"just a string"', "content_type": "application/json"}, "not an object"),
    ("empty-body", {"body": "", "content_type": "application/json"}, "empty body"),
    ("choice-without-message", {"body": {"choices": [{"index": 0}]}}, "no message"),
    ("deep-body-10000", {"body": deep(10_000, "{", "}").replace("{}", '{"a":1}', 1)}, "nested too deeply"),
    ("deep-body-500", {"body": '{"choices": ' + deep(500) + "}", "content_type": "application/json"}, "too deeply"),
]
STREAMS: list[tuple[str, Any, str]] = [
    ("stream-not-json", "data: {oops\n\n", "not JSON"),
    ("stream-invalid-utf8", b'data: {"choices": [{"delta": {"content": "\xff"}}]}\n\n', "not valid UTF-8"),
    ("stream-deep", "data: " + deep(10_000) + "\n\n", "nested too deeply"),
    ("stream-empty", "", "empty stream"),
    ("stream-only-done", "data: [DONE]\n\n", "empty stream"),
    ("stream-no-choices", 'data: {"id": "x", "choices": []}\n\ndata: [DONE]\n\n', "without any choices"),
    ("stream-html", "<html>not a stream</html>", "empty stream"),
]

CASES: list[Case] = [
    *[
        Case(f"body-{n}-{'stream' if s else 'plain'}", fault(**kw), "error", says, s)
        for n, kw, says in BODIES
        for s in (True, False)
    ],
    *[Case(n, fault(events=events), "error", says) for n, events, says in STREAMS],
    Case(
        "stream-error-event-retried",
        fault(events='data: {"error": {"message": "busy"}}\n\n', then=final("ok")),
        "answered",
        "ok",
    ),
    Case("five-503s-then-answer", fault(status=503, times=5, then=final("back")), "answered", "back"),
    Case("429-then-answer", fault(status=429, retry_after=2, then=final("waited")), "answered", "waited"),
    Case("retry-after-beyond-budget", fault(status=429, retry_after=100000), "error", "asked to wait 100000s"),
    Case("503-forever", fault(status=503, times=50), "error", "kept failing"),
    Case("drop-then-answer", fault(drop=True, then=final("reconnected")), "answered", "reconnected"),
    Case("hang-stream", fault(hang=30), "error", "TOOLSMITH_MODEL_TIMEOUT_S", timeout=0.3),
    Case("hang-plain", fault(hang=30), "error", "TOOLSMITH_MODEL_TIMEOUT_S", stream=False, timeout=0.3),
    Case(
        "stall-mid-stream", fault(stall_after=4, then=final("x" * 300)), "error", "stopped sending after", timeout=0.3
    ),
    Case("slow-every-request", fault(delay=0.4, then=final("slow answer")), "answered", "slow answer", timeout=3.0),
    Case("slow-plain", fault(delay=0.4, then=final("slow plain")), "answered", "slow plain", stream=False, timeout=3.0),
    Case(
        "bad-request-400",
        fault(status=400, body={"error": {"message": "context too long"}}),
        "error",
        "context too long",
    ),
    Case(
        "deep-arguments-1kb",
        answers(reply(tool_call("search_tools", DEEP_ARGS_1KB)), final("recovered")),
        "answered",
        "recovered",
    ),
    Case(
        "deep-arguments-10000",
        answers(reply(tool_call("search_tools", DEEP_ARGS_10K)), final("recovered")),
        "answered",
        "recovered",
        stream=False,
    ),
    Case("deep-content-10000", answers(final(deep(10_000, "{", "}"))), "answered", "{{{{"),
    Case(
        "deep-content-as-call",
        answers(final('{"name": "search_tools", "arguments": ' + deep(10_000, "{", "}") + "}")),
        "answered",
        "search_tools",
    ),
]


@pytest.fixture
def endpoint() -> Iterator[tuple[ScriptedModel, ScriptedServer]]:
    model = ScriptedModel(name="fuzz")
    with ScriptedServer(model) as server:
        yield model, server


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_case_ends_in_an_answer_or_a_clear_error(
    case: Case, endpoint: tuple[ScriptedModel, ScriptedServer], tmp_path: Path
) -> None:
    scripted, server = endpoint
    case.setup(scripted, server)
    waits: list[float] = []
    config = ProviderConfig("custom", "fuzz", server.base_url, "k", None, url_variable="LLM_BASE_URL")
    chat = ChatModel(
        config,
        timeout=case.timeout,
        retry=RetryPolicy(total_s=300.0),
        stream=case.stream,
        sleep=waits.append,  # retries wait on a recorder, not on the wall clock
    )
    events: list[Event] = []
    settings = make_settings(tmp_path / "home", pre_retrieval=False)
    report = run_session(["say hello"], settings=settings, model=chat, provider=config, on_event=events.append)

    (result,) = report.results
    assert result.status == case.status, (result.answer, result.error)
    text = result.error if case.status == "error" else result.answer
    assert case.says in (text or ""), text
    if case.status == "error":
        assert result.answer.startswith("The model"), result.answer
        assert "Traceback" not in (result.error or "")
    # the trajectory holds the task with its status, and the run record can be written
    assert report.trajectory_path is not None
    lines = [json.loads(line) for line in report.trajectory_path.read_text(encoding="utf-8").splitlines()]
    assert [t["status"] for t in lines if t.get("record") == "task"] == [case.status]
    out = tmp_path / "out.json"
    write_output(out, report.to_dict())
    assert json.loads(out.read_text(encoding="utf-8"))["results"][0]["status"] == case.status
    if case.name.startswith("deep-arguments"):
        refused = [e for e in events if isinstance(e, ToolResult) and not e.ok]
        assert refused and "nested too deeply" in refused[0].summary


def test_the_fuzz_matrix_covers_the_issue() -> None:
    names = {c.name for c in CASES}
    for needed in ("not-json", "html-as-json", "invalid-utf8", "no-choices", "deep-body-10000", "stream-deep"):
        assert any(needed in n for n in names), needed
    assert {"deep-arguments-1kb", "deep-arguments-10000", "deep-content-10000", "slow-every-request"} <= names
    assert len(CASES) >= 45
