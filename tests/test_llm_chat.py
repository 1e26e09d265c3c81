"""ChatModel end to end: real openai SDK, real HTTP, against a ScriptedServer on loopback."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from toolsmith.config.providers import ProviderConfig
from toolsmith.errors import ModelConfigError, ModelError, ModelResponseError, ModelRetryExhausted, ModelTimeoutError
from toolsmith.model import ModelReply, ToolCallRequest, Usage, ban
from toolsmith.model.client import ChatModel
from toolsmith.model.retry import RetryPolicy
from toolsmith.testing import (
    ScriptedModel,
    ScriptedServer,
    final,
    last_tool_result,
    reply,
    tool_call,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Current time in a time zone.",
            "parameters": {
                "type": "object",
                "properties": {"tz": {"type": "string"}},
                "required": ["tz"],
            },
        },
    }
]
USER = [{"role": "user", "content": "What time is it in UTC?"}]


@pytest.fixture
def scripted() -> ScriptedModel:
    return ScriptedModel(name="scripted")


@pytest.fixture
def server(scripted: ScriptedModel) -> Iterator[ScriptedServer]:
    with ScriptedServer(scripted) as running:
        yield running


class Recorder:
    """A fake clock that only sleeping moves, standing in for time.sleep and time.monotonic;
    it also collects on_retry events. No test here asserts on wall-clock time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.retries: list[tuple[int, float, str]] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now

    def on_retry(self, attempt: int, delay: float, reason: str) -> None:
        self.retries.append((attempt, delay, reason))


def chat(
    server: ScriptedServer,
    recorder: Recorder | None = None,
    *,
    key_variable: str | None = None,
    timeout: float = 5.0,
    retry: RetryPolicy | None = None,
    **kwargs: Any,
) -> ChatModel:
    recorder = recorder or Recorder()
    config = ProviderConfig(
        provider="custom",
        model="scripted",
        base_url=server.base_url,
        api_key="test-key",
        key_variable=key_variable,
    )
    return ChatModel(
        config,
        timeout=timeout,
        retry=retry or RetryPolicy(),
        sleep=recorder.sleep,
        clock=recorder.clock,
        rng=lambda: 1.0,  # full jitter at its ceiling: the delays are exactly the backoff bounds
        on_retry=recorder.on_retry,
        **kwargs,
    )


# --- the happy path ------------------------------------------------------------------


def test_tool_call_round_trip(scripted: ScriptedModel, server: ScriptedServer) -> None:
    broken_json = '{"tz": "UTC"'  # malformed on purpose: it must arrive exactly as sent
    scripted.add(
        reply(tool_call("get_time", broken_json, id="call_1"), content="Let me check."),
        lambda messages, tools: final(f"It is {last_tool_result(messages)['time']} UTC."),
    )
    model = chat(server)

    first = model.complete(USER, TOOLS)

    assert first.tool_calls == (ToolCallRequest(id="call_1", name="get_time", arguments=broken_json),)
    assert first.content == "Let me check."
    assert first.finish_reason == "tool_calls"
    assert first.model == "scripted"
    transcript = [
        *USER,
        first.assistant_message(),
        {"role": "tool", "tool_call_id": "call_1", "content": '{"time": "12:34"}'},
    ]
    second = model.complete(transcript, TOOLS)

    assert second.content == "It is 12:34 UTC."
    assert second.tool_calls == ()
    assert second.finish_reason == "stop"
    # What the scripted model saw went through the SDK and HTTP unchanged.
    seen_messages, seen_tools = scripted.requests[1]
    assert seen_messages[1]["tool_calls"][0]["function"]["arguments"] == broken_json
    assert seen_tools == TOOLS
    assert server.requests[0]["tool_choice"] == "auto"
    assert server.authorizations == ["Bearer test-key", "Bearer test-key"]
    scripted.assert_complete()


def test_no_tools_means_no_tools_field(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("hello"))
    assert chat(server).complete(USER, []).content == "hello"
    assert "tools" not in server.requests[0] and "tool_choice" not in server.requests[0]
    assert server.requests[0]["model"] == "scripted"


def test_usage_and_cost_from_price_table(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(ModelReply(content="x", usage=Usage(1000, 500, 1500)))
    result = chat(server, prices={"scripted": (2.0, 8.0)}).complete(USER, [])
    assert result.usage == Usage(1000, 500, 1500, cost=pytest.approx(0.006))


def test_usage_estimated_by_scripted_model_and_reported_cost(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("four"), ModelReply(content="y", usage=Usage(10, 5, 15, cost=0.25)))
    model = chat(server)
    estimated = model.complete(USER, TOOLS).usage
    assert estimated.prompt_tokens > 20 and estimated.completion_tokens == 1
    assert estimated.total_tokens == estimated.prompt_tokens + 1 and estimated.cost is None
    # A cost the endpoint reports (OpenRouter does) is used when no price is configured.
    assert model.complete(USER, []).usage.cost == pytest.approx(0.25)


def test_reasoning_content_survives_the_round_trip(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(
        ModelReply(
            content=None,
            tool_calls=(tool_call("get_time", {"tz": "UTC"}, id="c"),),
            reasoning="hmm",
        )
    )
    result = chat(server).complete(USER, TOOLS)
    assert result.reasoning == "hmm"
    assert result.assistant_message()["reasoning_content"] == "hmm"


# --- retries -------------------------------------------------------------------------


def test_429_then_500_then_success(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("finally"))
    server.inject(status=429).inject(status=500)
    recorder = Recorder()

    result = chat(server, recorder).complete(USER, [])

    assert result.content == "finally"
    assert server.request_count == 3
    assert recorder.sleeps == [1.0, 2.0]  # exponential: base, then twice the base
    assert [(a, d) for a, d, _ in recorder.retries] == [(1, 1.0), (2, 2.0)]
    assert "HTTP 429" in recorder.retries[0][2] and "HTTP 500" in recorder.retries[1][2]


def test_retry_after_is_honoured_in_full(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("a"))
    recorder = Recorder()
    server.inject(status=429, retry_after=45)
    chat(server, recorder, retry=RetryPolicy(max_delay_s=10.0, total_s=120.0)).complete(USER, [])
    assert recorder.sleeps == [45.0]  # not cut to the backoff cap: that would retry into the limit


def test_retry_after_beyond_the_time_budget_gives_up_at_once(scripted: ScriptedModel, server: ScriptedServer) -> None:
    server.inject(status=429, retry_after=100000)
    recorder = Recorder()
    with pytest.raises(ModelRetryExhausted) as info:
        chat(server, recorder, retry=RetryPolicy(total_s=300.0)).complete(USER, [])
    assert info.value.attempts == 1 and "HTTP 429" in info.value.last_error
    assert info.value.retry_after == 100000 and info.value.reached
    assert "asked to wait 100000s" in str(info.value) and "retry_total_s" in str(info.value)
    assert recorder.sleeps == [] and server.request_count == 1


def test_five_quick_503s_do_not_end_a_request_with_budget_left(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("after the outage"))
    server.inject(status=503, times=5)
    recorder = Recorder()
    assert chat(server, recorder).complete(USER, []).content == "after the outage"
    assert server.request_count == 6
    assert recorder.sleeps == [1.0, 2.0, 4.0, 8.0, 16.0]


def test_attempts_are_bounded(server: ScriptedServer) -> None:
    server.inject(status=502, times=10)
    recorder = Recorder()
    with pytest.raises(ModelRetryExhausted) as info:
        chat(server, recorder, retry=RetryPolicy(max_attempts=3)).complete(USER, [])
    assert info.value.attempts == 3
    assert server.request_count == 3
    assert recorder.sleeps == [1.0, 2.0]
    assert "3 attempt(s)" in str(info.value) and "test-key" not in str(info.value)
    assert "TOOLSMITH_MODEL_MAX_ATTEMPTS" in str(info.value)


def test_retries_stop_on_the_time_budget(server: ScriptedServer) -> None:
    server.inject(status=502, times=10)
    recorder = Recorder()
    with pytest.raises(ModelRetryExhausted) as info:
        chat(server, recorder, retry=RetryPolicy(max_attempts=10, total_s=5.0)).complete(USER, [])
    # slept 1 then 2 (3 s on the fake clock); waiting 4 more would end past the 5 s budget
    assert recorder.sleeps == [1.0, 2.0] and info.value.attempts == 3
    assert "3 attempt(s) in 3.0s" in str(info.value) and "TOOLSMITH_MODEL_RETRY_TOTAL_S" in str(info.value)


@pytest.mark.parametrize("stream", [True, False])
def test_a_read_timeout_is_not_retried_and_names_the_setting(server: ScriptedServer, stream: bool) -> None:
    server.inject(hang=10)
    recorder = Recorder()
    with pytest.raises(ModelTimeoutError) as info:
        chat(server, recorder, timeout=0.3, stream=stream).complete(USER, [])
    assert server.request_count == 1  # no second generation on a busy server
    assert info.value.setting == "model.timeout_s" and "TOOLSMITH_MODEL_TIMEOUT_S" in str(info.value)
    assert "no answer within 0.3s" in str(info.value)
    assert recorder.retries == [] and recorder.sleeps == []


def test_read_timeouts_are_retried_when_asked(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("after the hang"))
    server.inject(hang=10)
    recorder = Recorder()
    model = chat(server, recorder, timeout=0.3, retry=RetryPolicy(retry_timeouts=True))
    assert model.complete(USER, []).content == "after the hang"
    assert server.request_count == 2
    assert "no answer within 0.3s" in recorder.retries[0][2]


def test_a_stream_that_stalls_part_way_names_what_arrived(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("x" * 200))
    server.inject(stall_after=3)
    with pytest.raises(ModelTimeoutError, match=r"stopped sending after .* no data for 0.3s"):
        chat(server, timeout=0.3).complete(USER, [])
    assert server.request_count == 1


def test_an_endpoint_slower_than_the_old_defaults_still_answers(
    scripted: ScriptedModel, server: ScriptedServer
) -> None:
    """Every request answered after a delay completes, given a timeout above the delay."""
    scripted.add(final("slow but sure"), final("again"))
    server.inject(delay=0.5, times=2)
    model = chat(server, timeout=5.0)
    assert model.complete(USER, []).content == "slow but sure"
    model.stream = False
    assert model.complete(USER, []).content == "again"
    assert server.request_count == 2


def test_dropped_connection_is_retried(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("ok"))
    server.inject(drop=True)
    recorder = Recorder()
    assert chat(server, recorder).complete(USER, []).content == "ok"
    assert server.request_count == 2
    assert recorder.retries[0][2].startswith("connection failed")


def test_an_endpoint_that_is_down_could_not_be_reached() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once the probe closes
    config = ProviderConfig("custom", "m", f"http://127.0.0.1:{port}/v1", "k", None)
    recorder = Recorder()
    model = ChatModel(config, retry=RetryPolicy(max_attempts=2), sleep=recorder.sleep, clock=recorder.clock)
    # Refused on loopback: nothing listens, so the hint comes at once instead of after the retry budget.
    with pytest.raises(ModelConfigError) as info:
        model.complete(USER, [])
    assert str(info.value).startswith(f"Nothing is listening at http://127.0.0.1:{port}/v1")


# --- errors that are not retried -------------------------------------------------------


def test_401_is_not_retried_and_names_the_key_variable(server: ScriptedServer) -> None:
    body = {
        "error": {
            "message": "Incorrect API key provided: test-key.",
            "type": "invalid_request_error",
        }
    }
    server.inject(status=401, body=body)
    recorder = Recorder()
    with pytest.raises(ModelError) as info:
        chat(server, recorder, key_variable="OPENAI_API_KEY").complete(USER, [])
    message = str(info.value)
    assert not isinstance(info.value, ModelRetryExhausted)
    assert "HTTP 401" in message and "OPENAI_API_KEY" in message
    assert "test-key" not in message  # the endpoint echoed the key; the message does not
    assert server.request_count == 1 and recorder.sleeps == []


def test_401_without_key_variable_points_at_llm_api_key(server: ScriptedServer) -> None:
    server.inject(status=401)
    with pytest.raises(ModelError, match="LLM_API_KEY"):
        chat(server).complete(USER, [])


def test_404_model_and_400_tools_hints(server: ScriptedServer) -> None:
    server.inject(
        status=404,
        body={"error": {"message": "The model `scripted` does not exist", "code": "model_not_found"}},
    )
    with pytest.raises(ModelError, match="LLM_MODEL"):
        chat(server).complete(USER, [])
    server.inject(
        status=400,
        body={"error": {"message": "registry.ollama.ai/library/gemma does not support tools"}},
    )
    with pytest.raises(ModelError, match="tool \\(function\\) calling"):
        chat(server).complete(USER, TOOLS)
    assert server.request_count == 2


def test_insufficient_quota_is_not_retried(server: ScriptedServer) -> None:
    server.inject(
        status=429,
        body={"error": {"message": "You exceeded your quota", "code": "insufficient_quota"}},
    )
    with pytest.raises(ModelError, match="no quota left"):
        chat(server).complete(USER, [])
    assert server.request_count == 1


def test_unusable_responses(server: ScriptedServer) -> None:
    server.inject(body={"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []})
    with pytest.raises(ModelResponseError, match="without any choices"):
        chat(server).complete(USER, [])
    server.inject(body="<html>a web page, not an API</html>")
    with pytest.raises(ModelResponseError, match="LLM_BASE_URL"):
        chat(server).complete(USER, [])


def test_scripted_model_failure_reaches_the_client_unretried(scripted: ScriptedModel, server: ScriptedServer) -> None:
    with pytest.raises(ModelError, match="no reply left"):
        chat(server).complete(USER, [])
    assert server.request_count == 1 and len(server.errors) == 1


# --- keys stay where they belong ------------------------------------------------------


def test_empty_key_never_picks_up_openai_api_key(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    scripted = server.model
    assert isinstance(scripted, ScriptedModel)
    scripted.add(final("a"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-secret")
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", "Authorization: Bearer sk-env-header-secret")
    config = ProviderConfig(
        provider="custom", model="scripted", base_url=server.base_url, api_key="", key_variable=None
    )
    ChatModel(config).complete(USER, [])
    assert server.authorizations == ["Bearer no-key-needed"]


def test_repr_has_no_key(server: ScriptedServer) -> None:
    model = chat(server)
    assert "test-key" not in repr(model) and server.base_url in repr(model)


# --- the real-model ban ----------------------------------------------------------------


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("network I/O attempted")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.mark.parametrize("base_url", [None, "https://openrouter.ai/api/v1", "http://10.0.0.5:8000/v1"])
def test_ban_refuses_non_loopback_before_any_io(no_network: None, base_url: str | None) -> None:
    config = ProviderConfig(
        provider="openai",
        model="gpt-5.4-mini",
        base_url=base_url,
        api_key="sk-x",
        key_variable=None,
    )
    with pytest.raises(ModelError, match="banned") as info:
        ChatModel(config).complete(USER, [])
    assert "TOOLSMITH_ALLOW_REAL_MODEL" in str(info.value)


def test_ban_switch_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not ban.real_models_allowed()
    monkeypatch.delenv(ban.BAN_ENV)
    assert not ban.real_models_allowed()  # the module switch alone bans
    monkeypatch.setattr(ban, "REAL_MODELS_ALLOWED", True)
    assert ban.real_models_allowed()
    assert not ban.real_models_allowed({ban.BAN_ENV: "1"})  # the variable alone bans (children)
    assert ban.real_models_allowed({ban.BAN_ENV: "1", ban.ALLOW_ENV: "1"})
    ban.ban_real_models()
    assert not ban.REAL_MODELS_ALLOWED
    monkeypatch.setenv(ban.ALLOW_ENV, "1")
    ban.check_endpoint_allowed("https://api.openai.com/v1")  # lifted on purpose: no error


@pytest.mark.parametrize("stream", [True, False])
def test_usage_is_estimated_when_the_endpoint_reports_none(scripted: ScriptedModel, stream: bool) -> None:
    """Without an estimate, budget.max_tokens could never stop a run on such an endpoint."""
    scripted.add(ModelReply(content="x" * 400, usage=Usage(1000, 500, 1500)))
    with ScriptedServer(scripted, report_usage=False) as quiet:
        usage = chat(quiet, stream=stream).complete(USER, TOOLS).usage
    assert usage.estimated and usage.completion_tokens == 100  # 400 characters, about 4 per token
    assert usage.prompt_tokens > 50 and usage.total_tokens == usage.prompt_tokens + 100
    assert (usage + Usage(1, 1, 2)).estimated  # a sum with an estimate in it is an estimate


def test_reported_usage_is_not_marked_estimated(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(ModelReply(content="x", usage=Usage(1000, 500, 1500)))
    assert chat(server).complete(USER, []).usage == Usage(1000, 500, 1500, estimated=False)
