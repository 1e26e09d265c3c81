"""ScriptedModel and the script helpers."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from toolsmith.errors import ModelError, ModelResponseError
from toolsmith.model import Model, ModelReply, Usage
from toolsmith.testing import (
    ScriptedModel,
    estimate_tokens,
    final,
    last_tool_result,
    last_user_text,
    reply,
    tool_call,
)


def test_it_is_a_model() -> None:
    assert isinstance(ScriptedModel(), Model)
    assert ScriptedModel(name="x").name == "x"


def test_plays_in_order_and_records_deep_copies() -> None:
    model = ScriptedModel([reply(tool_call("search_tools", {"query": "dates"})), final("done")])
    messages: list[dict[str, Any]] = [{"role": "user", "content": "days between?"}]
    tools = [{"type": "function", "function": {"name": "search_tools"}}]

    first = model.complete(messages, tools)
    messages.append(first.assistant_message())  # the caller mutates its transcript...
    second = model.complete(messages, tools)

    assert first.tool_calls[0].name == "search_tools"
    assert json.loads(first.tool_calls[0].arguments) == {"query": "dates"}
    assert second.content == "done"
    assert len(model.requests[0][0]) == 1  # ...but the first record is unchanged
    assert len(model.requests[1][0]) == 2
    assert model.requests[0][1] == tools and model.remaining == 0
    model.assert_complete()


def test_exhaustion_is_a_clear_error() -> None:
    model = ScriptedModel([final("only one")], name="short")
    model.complete([{"role": "user", "content": "a"}], [])
    with pytest.raises(ModelError) as info:
        model.complete([{"role": "user", "content": "second question"}], [])
    message = str(info.value)
    assert "'short'" in message and "call #2" in message and "second question" in message
    assert len(model.requests) == 2  # the failed call is still recorded


def test_assert_complete_fails_on_unused_replies() -> None:
    model = ScriptedModel([final("a"), final("b")])
    model.complete([], [])
    with pytest.raises(AssertionError, match="1 of 2"):
        model.assert_complete()
    model.add(final("c"))
    assert model.remaining == 2


def test_callable_replies_compute_from_the_real_tool_result() -> None:
    def answer(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        days = last_tool_result(messages, name="days_between")["days"]
        return final(f"{days} days ({last_user_text(messages)})")

    model = ScriptedModel([answer])
    transcript = [
        {"role": "user", "content": "2020-01-01 to 2020-03-01"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "days_between", "arguments": "{}"},
                },
                {"id": "b", "type": "function", "function": {"name": "other", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": '{"days": 60}'},
        {"role": "tool", "tool_call_id": "b", "content": "not json"},
    ]
    assert model.complete(transcript, []).content == "60 days (2020-01-01 to 2020-03-01)"
    assert last_tool_result(transcript) == "not json"


def test_callable_must_return_a_reply() -> None:
    model = ScriptedModel([lambda messages, tools: "just text"])  # type: ignore[list-item]
    with pytest.raises(ModelResponseError, match="not a ModelReply"):
        model.complete([], [])


def test_no_tool_result_is_an_error() -> None:
    with pytest.raises(ModelError, match="No tool result"):
        last_tool_result([{"role": "user", "content": "x"}])
    with pytest.raises(ModelError, match="from 'x'"):
        last_tool_result([{"role": "tool", "tool_call_id": "q", "content": "1"}], name="x")
    with pytest.raises(ModelError):
        last_user_text([])


def test_usage_is_estimated_from_what_was_sent() -> None:
    messages = [{"role": "user", "content": "x" * 400}]
    tools = [{"type": "function", "function": {"name": "t"}}]
    call = tool_call("t", {"a": 1})
    usage = ScriptedModel([reply(call, content="abcd")]).complete(messages, tools).usage
    expected_prompt = math.ceil(len(json.dumps(messages)) / 4) + math.ceil(len(json.dumps(tools)) / 4)
    expected_completion = 1 + estimate_tokens("t") + estimate_tokens(call.arguments)
    assert usage == Usage(expected_prompt, expected_completion, expected_prompt + expected_completion)
    explicit = ScriptedModel([ModelReply(content="x", usage=Usage(7, 3, 10, 0.1))]).complete(messages, [])
    assert explicit.usage == Usage(7, 3, 10, 0.1) and explicit.model == "scripted"


def test_helpers() -> None:
    raw = tool_call("create_tool", '{"name": "broken"', id="fixed")
    assert (raw.id, raw.arguments) == ("fixed", '{"name": "broken"')
    assert tool_call("a").arguments == "{}"
    assert tool_call("a").id != tool_call("a").id
    assert tool_call("a", {"城市": "北京"}).arguments == '{"城市": "北京"}'
    assert reply(tool_call("a")).finish_reason == "tool_calls"
    assert reply(content="thinking").finish_reason == "stop"
    assert final("x") == ModelReply(content="x", finish_reason="stop")
    parts = [
        {
            "role": "tool",
            "tool_call_id": "z",
            "name": "n",
            "content": [{"type": "text", "text": "[1, 2]"}],
        }
    ]
    assert last_tool_result(parts, name="n") == [1, 2]
