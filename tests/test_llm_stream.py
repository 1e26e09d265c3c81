"""Streaming completions: assembly, progress, and falling back for endpoints that do not stream."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolsmith.config.providers import ProviderConfig
from toolsmith.errors import ModelResponseError
from toolsmith.model import ModelReply, Usage
from toolsmith.model.client import ChatModel
from toolsmith.model.stream import StreamProgress, StreamReader
from toolsmith.testing import ScriptedModel, ScriptedServer, final, reply, tool_call

USER = [{"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}]


class Ticks:
    """A clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def model_for(server: ScriptedServer, **kwargs: object) -> ChatModel:
    config = ProviderConfig("custom", "scripted", server.base_url, "k", None, url_variable="LLM_BASE_URL")
    return ChatModel(config, timeout=5.0, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def scripted() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def server(scripted: ScriptedModel) -> Iterator[ScriptedServer]:
    with ScriptedServer(scripted, chunk_chars=3) as running:
        yield running


def test_a_streamed_answer_is_assembled_with_tool_calls_reasoning_and_usage(
    scripted: ScriptedModel, server: ScriptedServer
) -> None:
    sent = ModelReply(
        content="Checking both.",
        tool_calls=(tool_call("get_time", {"tz": "UTC"}, id="a"), tool_call("get_time", {"tz": "Asia/Tokyo"}, id="b")),
        usage=Usage(100, 20, 120, cost=0.5),
        reasoning="The user wants two zones.",
        finish_reason="tool_calls",
    )
    scripted.add(sent)
    progress: list[StreamProgress] = []
    got = model_for(server, on_progress=progress.append, clock=Ticks()).complete(USER, TOOLS)
    assert got.content == sent.content and got.reasoning == sent.reasoning
    assert got.tool_calls == sent.tool_calls  # arguments merged from many deltas, by index
    assert got.finish_reason == "tool_calls" and got.usage == Usage(100, 20, 120, cost=0.5)
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["stream_options"] == {"include_usage": True}
    # progress grows chunk by chunk (the ticking clock makes every chunk due), and ends complete
    assert len(progress) > 10
    assert [p.chars for p in progress] == sorted(p.chars for p in progress)
    last = progress[-1]
    expected = len(sent.content or "") + sum(len(c.arguments) for c in sent.tool_calls)
    assert last.chars == expected and last.reasoning_chars == len(sent.reasoning or "") and last.tool_calls == 2


def test_progress_is_reported_at_most_once_per_interval() -> None:
    frozen = StreamReader(clock=lambda: 0.0, on_progress=(seen := []).append, interval_s=1.0)
    for _ in range(50):
        frozen.add({"choices": [{"delta": {"content": "x"}}]})
    assert len(seen) == 1  # the first chunk only: no time passed
    assert frozen.reply(model="m").content == "x" * 50 and len(seen) == 2  # plus the final count


def test_an_endpoint_that_refuses_streaming_is_asked_without_it(scripted: ScriptedModel) -> None:
    scripted.add(final("one"), final("two"))
    with ScriptedServer(scripted, streaming="refuse") as server:
        model = model_for(server)
        assert model.complete(USER, []).content == "one"
        assert model.complete(USER, []).content == "two"
    assert [bool(r.get("stream")) for r in server.requests] == [True, False, False]
    assert model.stream is False


def test_an_endpoint_that_ignores_streaming_is_read_as_a_plain_completion(scripted: ScriptedModel) -> None:
    scripted.add(final("plain"), final("again"))
    with ScriptedServer(scripted, streaming="ignore") as server:
        model = model_for(server)
        assert model.complete(USER, []).content == "plain"
        assert model.complete(USER, []).content == "again"
    assert server.request_count == 2 and model.stream is False


def test_streaming_can_be_switched_off(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("no stream"))
    assert model_for(server, stream=False).complete(USER, []).content == "no stream"
    assert "stream" not in server.requests[0]


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ("data: {not json\n\n", "stream chunk that is not JSON"),
        (b"data: \xff\xfe\n\n", "not valid UTF-8"),
        ("data: " + "[" * 10_000 + "\n\n", "nested too deeply"),
        ('data: {"id": "x", "choices": []}\n\ndata: [DONE]\n\n', "stream without any choices"),
        ("data: [DONE]\n\n", "an empty stream"),
        ("", "an empty stream"),
    ],
)
def test_a_broken_stream_is_one_clear_error(server: ScriptedServer, events: str | bytes, expected: str) -> None:
    server.inject(events=events)
    with pytest.raises(ModelResponseError, match=expected) as info:
        model_for(server).complete(USER, [])
    assert str(info.value).startswith("The custom endpoint")
    assert server.request_count == 1


def test_an_error_event_in_the_stream_is_retried(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(final("second try"))
    server.inject(events='data: {"error": {"message": "upstream overloaded"}}\n\n')
    reasons: list[str] = []
    model = model_for(server, sleep=lambda s: None, on_retry=lambda a, d, r: reasons.append(r))
    assert model.complete(USER, []).content == "second try"
    assert "upstream overloaded" in reasons[0]


def test_reply_from_a_stream_with_reply_helper(scripted: ScriptedModel, server: ScriptedServer) -> None:
    scripted.add(reply(tool_call("get_time", "", id="c1")))
    got = model_for(server).complete(USER, TOOLS)
    assert got.tool_calls[0].id == "c1" and got.tool_calls[0].arguments == ""
