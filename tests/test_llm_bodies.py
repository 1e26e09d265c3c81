"""Bodies that are not a chat completion, and JSON nested too deeply, become clear errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from toolsmith.config.providers import ProviderConfig
from toolsmith.errors import ModelConfigError, ModelResponseError
from toolsmith.model.client import ChatModel
from toolsmith.model.nesting import MAX_DEPTH, nesting_depth
from toolsmith.model.replies import normalise_reply, parse_arguments, text_tool_calls
from toolsmith.testing import ScriptedModel, ScriptedServer, reply, tool_call

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(ScriptedModel()) as running:
        yield running


def model_for(server: ScriptedServer, *, stream: bool, url_variable: str | None = "LLM_BASE_URL") -> ChatModel:
    config = ProviderConfig("custom", "scripted", server.base_url, "k", None, url_variable=url_variable)
    return ChatModel(config, timeout=5.0, stream=stream)


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


BAD_BODIES: list[tuple[Any, str | None, str]] = [
    ("this is not json", "application/json", "a body that is not JSON"),
    ("<!doctype html><html><body>Welcome to nginx</body></html>", "application/json", "an HTML page"),
    (b'{"choices": "\xff\xfe"}', "application/json", "not valid UTF-8"),
    ({"id": "x", "object": "chat.completion"}, None, "JSON without any choices"),
    ({"error": {"message": "upstream exploded"}}, None, "an error instead of an answer: upstream exploded"),
    ([1, 2, 3], None, "JSON that is not an object"),
    ("", "application/json", "an empty body"),
    ('{"choices": ' + deep(10_000) + "}", "application/json", "nested too deeply"),
    (
        '{"choices": [{"message": {"content": "x"}}], "junk": ' + deep(500) + "}",
        "application/json",
        "nested too deeply",
    ),
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(("body", "content_type", "expected"), BAD_BODIES)
def test_a_body_that_is_not_a_completion_is_one_clear_error(
    server: ScriptedServer, stream: bool, body: Any, content_type: str | None, expected: str
) -> None:
    server.inject(body=body, content_type=content_type)
    with pytest.raises(ModelResponseError, match=expected) as info:
        model_for(server, stream=stream).complete(USER, [])
    message = str(info.value)
    assert message.startswith(f"The custom endpoint {server.base_url} answered with")
    assert server.request_count == 1  # a bad body is not retried
    if info.value.check_url:
        assert "LLM_BASE_URL" in message


def test_the_error_names_the_url_variable_the_user_set(server: ScriptedServer) -> None:
    server.inject(body="<html></html>", content_type="text/html")
    with pytest.raises(ModelResponseError, match="Check that OPENAI_BASE_URL"):
        model_for(server, stream=False, url_variable="OPENAI_BASE_URL").complete(USER, [])
    server.inject(status=404, body={"error": {"message": "Not Found"}})
    with pytest.raises(ModelConfigError) as info:
        model_for(server, stream=False, url_variable="OPENAI_BASE_URL").complete(USER, [])
    assert info.value.setting == "OPENAI_BASE_URL"


def test_nesting_depth_ignores_brackets_in_strings() -> None:
    assert nesting_depth('{"a": "[[[[{{{{"}') == 1
    assert nesting_depth(r'{"a": "\"[[[["}') == 1
    assert nesting_depth(r'{"a": "\\", "b": [[1]]}') == 3
    assert nesting_depth(deep(10_000)) == MAX_DEPTH + 1  # counting stops past the limit


@pytest.mark.parametrize("depth", [500, 10_000])
def test_arguments_nested_too_deeply_are_a_tool_call_error(depth: int) -> None:
    raw = '{"x": ' + deep(depth) + "}"
    args, error = parse_arguments(raw)
    assert args == {} and error is not None and "nested too deeply" in error
    ok, none = parse_arguments('{"x": ' + deep(10) + "}")
    assert none is None and ok["x"] == [[[[[[[[[[]]]]]]]]]]


def test_deep_json_in_the_content_is_not_taken_for_a_tool_call() -> None:
    content = '{"name": "get_time", "arguments": ' + "{" * 10_000 + "}" * 10_000 + "}"
    calls, rest = text_tool_calls(content, ["get_time"])
    assert calls == [] and rest == content
    normalised = normalise_reply(reply(content=content), ["get_time"], set())
    assert normalised.tool_calls == () and normalised.content == content


def test_a_deep_argument_from_the_endpoint_reaches_the_loop_as_text(server: ScriptedServer) -> None:
    """About 1 KB nested 500 deep: it arrives intact, and only argument parsing refuses it."""
    scripted = server.model
    assert isinstance(scripted, ScriptedModel)
    arguments = json.dumps({"q": 1})[:-1] + ', "deep": ' + deep(500) + "}"
    scripted.add(reply(tool_call("get_time", arguments, id="c")))
    got = model_for(server, stream=True).complete(USER, [])
    assert got.tool_calls[0].arguments == arguments and len(arguments) > 1000
    assert "nested too deeply" in (parse_arguments(got.tool_calls[0].arguments)[1] or "")


def test_events_cut_data_nested_too_deeply() -> None:
    """A tool (or a model) may hand back anything; recording and showing it must not recurse without end."""
    from toolsmith.events import CUT, ToolCalled, ToolResult

    nested: list[Any] = []
    inner = nested
    for _ in range(10_000):
        inner.append([])
        inner = inner[0]
    result = ToolResult(task=0, step=1, call_id="c", name="t", ok=True, summary="s", wall_s=0.1, data={"x": nested})
    text = json.dumps(result.to_dict())
    assert CUT in text and text.count("[") < 100
    called = ToolCalled(task=0, step=1, call_id="c", name="t", arguments={"a": (1, {"b": 2})})
    assert called.to_dict()["arguments"] == {"a": (1, {"b": 2})}  # shallow data is unchanged
