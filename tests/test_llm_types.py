"""The reply types, response parsing and the retry arithmetic, without any HTTP."""

from __future__ import annotations

import email.utils
from types import SimpleNamespace as NS

import pytest

from toolsmith.errors import ModelResponseError
from toolsmith.model import ModelReply, ToolCallRequest, Usage, compute_cost
from toolsmith.model.completion import parse_completion, redact
from toolsmith.model.retry import RetryPolicy, Stop, parse_retry_after


def test_usage_adds_up_and_cost_none_is_neutral() -> None:
    a = Usage(10, 5, 15)
    b = Usage(1, 2, 3, cost=0.5)
    assert a + a == Usage(20, 10, 30, None)
    assert a + b == Usage(11, 7, 18, 0.5)
    assert b + a == Usage(11, 7, 18, 0.5)
    assert sum([a, b, b]) == Usage(12, 9, 21, 1.0)


def test_assistant_message_with_tool_calls() -> None:
    reply = ModelReply(content=None, tool_calls=(ToolCallRequest("c1", "search_tools", '{"query": "x"}'),))
    assert reply.assistant_message() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search_tools", "arguments": '{"query": "x"}'},
            }
        ],
    }


def test_assistant_message_plain_and_reasoning() -> None:
    assert ModelReply(content="hi").assistant_message() == {"role": "assistant", "content": "hi"}
    assert ModelReply(content=None).assistant_message() == {"role": "assistant", "content": ""}
    # Reasoning only travels with tool calls, where thinking models require it back.
    assert "reasoning_content" not in ModelReply(content="hi", reasoning="r").assistant_message()
    with_calls = ModelReply(content=None, tool_calls=(ToolCallRequest("c", "t", "{}"),), reasoning="r")
    assert with_calls.assistant_message()["reasoning_content"] == "r"


def _response(message: object, usage: object = None, model: str = "m-2025") -> NS:
    return NS(choices=[NS(message=message, finish_reason="stop")], usage=usage, model=model)


def test_parse_completion_is_lenient_about_servers() -> None:
    call_without_id = NS(id=None, function=NS(name="t", arguments={"a": 1}))  # an object, not a string
    message = NS(
        content=[{"type": "text", "text": "par"}, {"type": "text", "text": "ts"}],
        tool_calls=[call_without_id],
    )
    usage = NS(prompt_tokens=100, completion_tokens=20, total_tokens=None)
    parsed = parse_completion(_response(message, usage), model="m", prices={"m": (1.0, 2.0)})
    assert parsed.content == "parts"
    assert parsed.tool_calls == (ToolCallRequest("call_0", "t", '{"a": 1}'),)
    assert parsed.usage == Usage(100, 20, 120, pytest.approx(140 / 1_000_000))
    assert parsed.model == "m-2025"


def test_parse_completion_without_usage_or_price() -> None:
    parsed = parse_completion(_response(NS(content="x", tool_calls=None)), model="m")
    assert parsed.usage == Usage()


def test_parse_completion_refuses_unusable_answers() -> None:
    with pytest.raises(ModelResponseError, match="an error instead of an answer: upstream down"):
        parse_completion(NS(choices=None, error="upstream down"), model="m")
    with pytest.raises(ModelResponseError, match="without any choices") as info:
        parse_completion({"id": "x", "object": "chat.completion"}, model="m")
    assert info.value.check_url
    with pytest.raises(ModelResponseError, match="no message"):
        parse_completion(NS(choices=[NS(message=None)]), model="m")
    # a nameless tool call is the model's to fix: it is kept, and the toolbox answers it
    nameless = parse_completion(
        _response(NS(content=None, tool_calls=[NS(id="c", function=NS(name="", arguments=""))])),
        model="m",
    )
    assert nameless.tool_calls == (ToolCallRequest("c", "", ""),)


def test_cost_uses_the_first_priced_name() -> None:
    prices = {"gpt-x": (1.0, 4.0)}
    assert compute_cost(prices, ["nope", "gpt-x"], 1_000_000, 500_000) == pytest.approx(3.0)
    assert compute_cost(prices, ["nope"], 1, 1) is None


def test_backoff_grows_with_full_jitter_and_caps() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0, total_s=1000.0)
    assert [policy.next_delay(n, 0.0, None, lambda: 1.0) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert policy.next_delay(3, 0.0, None, lambda: 0.5) == 2.0
    assert policy.next_delay(1, 0.0, 2.5, lambda: 0.0) == 2.5  # Retry-After wins over the jitter
    assert policy.next_delay(1, 0.0, 99.0, lambda: 0.0) == 99.0  # and is honoured in full, not capped


def test_retries_stop_on_time_with_an_attempt_cap_as_backstop() -> None:
    policy = RetryPolicy(max_attempts=10, total_s=120.0)
    # five quick 503s leave most of the budget: keep going
    assert policy.next_delay(5, 4.0, None, lambda: 1.0) == 16.0
    assert policy.next_delay(5, 110.0, None, lambda: 1.0) is Stop.BUDGET
    assert policy.next_delay(10, 4.0, None, lambda: 1.0) is Stop.ATTEMPTS
    # a Retry-After longer than what is left ends the retries at once
    assert policy.next_delay(1, 0.0, 100_000.0, lambda: 1.0) is Stop.RETRY_AFTER
    assert policy.next_delay(1, 100.0, 30.0, lambda: 1.0) is Stop.RETRY_AFTER
    assert policy.next_delay(1, 100.0, 20.0, lambda: 1.0) == 20.0
    assert RetryPolicy(total_s=0).next_delay(1, 0.0, None, lambda: 0.0) is Stop.BUDGET


def test_defaults_suit_slow_models() -> None:
    from toolsmith.model.retry import DEFAULT_TIMEOUT_S

    assert DEFAULT_TIMEOUT_S >= 300  # an endpoint answering after 90 s must work out of the box
    assert not RetryPolicy().retry_timeouts  # no duplicate generation on a busy server


def test_retry_after_parsing() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    later = email.utils.formatdate(1_700_000_030, usegmt=True)
    assert parse_retry_after({"retry-after": later}, now=lambda: 1_700_000_000.0) == 30.0
    assert parse_retry_after({"retry-after": later}, now=lambda: 1_800_000_000.0) == 0.0  # a date past


def test_redact_hides_keys_and_tokens() -> None:
    text = "bad key sk-abc123def456 and Bearer abc.def for my-secret-key"
    cleaned = redact(text, "my-secret-key")
    assert "abc123def456" not in cleaned and "abc.def" not in cleaned and "my-secret-key" not in cleaned
