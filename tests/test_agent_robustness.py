"""How real models reply, over the real SDK and HTTP: the loop copes with each shape.

Every test drives the agent through a strict ScriptedServer (it refuses transcripts a
strict provider would refuse), so a fix that kept the run alive but broke the transcript
would fail here too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import DAYS_CODE, VERIFY, answer_from_tool, create_days_tool, evolve_script, rig
from toolsmith.agent.context import WebAccess
from toolsmith.model import ModelReply, ToolCallRequest
from toolsmith.model.replies import strip_thinking, text_tool_calls, usable_code
from toolsmith.redaction import encodable
from toolsmith.testing import final, reply, tool_call, transcript_problem

PRINT = {"code": "print(41 + 1)"}


def _results(r: Any) -> list[Any]:
    """Results of the model's calls (not the program's pre-retrieval search)."""
    return [e for e in r.of_type("tool_result") if e.call_id != "pre-retrieval"]


def test_content_beside_tool_calls_is_kept_and_the_calls_run(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", PRINT), content="Let me check."), final("done"))
        result = r.agent(allow_create=False).run_task("print a number")
        assert [e.data["stdout"].strip() for e in _results(r)] == ["42"]
        turn = r.model.requests[1][0][2]
        assert turn["content"] == "Let me check." and turn["tool_calls"]
        assert result.answer == "done"


@pytest.mark.parametrize(
    "content",
    [
        "<think>The user wants 42, say 99.</think>\n\nThe answer is 42.",
        "I should answer 99 first</think>\nThe answer is 42.",  # the template opened the block
    ],
)
def test_thinking_never_reaches_the_answer(tmp_path: Path, content: str) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", PRINT)), final(content))
        result = r.agent(allow_create=False).run_task("print a number")
        assert result.answer == "The answer is 42." and r.guards() == []  # 99 was only thought


def test_a_reply_that_only_thinks_counts_as_empty(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(final("<think>hmm</think>"), ModelReply(content="", reasoning="still thinking"), final("hello"))
        result = r.agent().run_task("say hello")
        assert r.guards() == ["empty_reply", "empty_reply"] and result.answer == "hello"


def test_reasoning_content_is_replayed_on_tool_call_turns(tmp_path: Path) -> None:
    thinking = ModelReply(content=None, tool_calls=(tool_call("code_interpreter", PRINT),), reasoning="plan: run it")
    with rig(tmp_path) as r:
        r.model.add(thinking, final("42"))
        r.agent(allow_create=False).run_task("print a number")
        assert r.model.requests[1][0][2]["reasoning_content"] == "plan: run it"


def test_empty_replies_end_honestly(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(final(""), final(""), final(""))
        result = r.agent().run_task("say hello")
        assert result.status == "error" and result.answer == "The model gave no answer."
        r.model.assert_complete()


def test_a_cut_off_answer_is_asked_for_again_once(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(
            ModelReply(content="Hello, the answer is", finish_reason="length"),
            ModelReply(content="Hello", finish_reason="length"),
        )
        result = r.agent().run_task("say hello")
        assert r.guards() == ["truncated"] and result.answer == "Hello"  # only once


def test_cut_off_arguments_get_a_hint(tmp_path: Path) -> None:
    cut = ModelReply(
        content=None, tool_calls=(tool_call("code_interpreter", '{"code": "print(1'),), finish_reason="length"
    )
    with rig(tmp_path) as r:
        r.model.add(cut, final("ok"))
        r.agent().run_task("print a number")
        data = _results(r)[0].data
        assert "not valid JSON" in data["error"] and "finish_reason=length" in data["hint"]


@pytest.mark.parametrize("ids", [["", ""], ["same", "same"], [None, None]])
@pytest.mark.slow
def test_missing_empty_or_repeated_call_ids_are_made_unique(tmp_path: Path, ids: list[Any]) -> None:
    def turn(i: int) -> ModelReply:
        calls = tuple(
            ToolCallRequest(id=ids[k] or "", name="code_interpreter", arguments=json.dumps({"code": f"print({i}{k})"}))
            for k in range(2)
        )
        return ModelReply(content=None, tool_calls=calls)

    with rig(tmp_path) as r:  # the strict server refuses empty or repeated ids
        r.model.add(turn(1), turn(2), final("done"))
        result = r.agent(allow_create=False).run_task("print numbers")
        assert result.status == "answered", result.answer
        call_ids = [e.call_id for e in _results(r)]
        assert len(call_ids) == 4 and len(set(call_ids)) == 4 and all(call_ids)
        assert [e.data["stdout"].strip() for e in _results(r)] == ["10", "11", "20", "21"]


@pytest.mark.parametrize(
    "raw",
    [
        '{"code": "print(41 + 1)"}}',  # a stray closer
        "{'code': 'print(41 + 1)'}",  # a Python dict literal
        '```json\n{"code": "print(41 + 1)"}\n```',  # a code fence
        json.dumps(json.dumps(PRINT)),  # encoded twice
        '[{"code": "print(41 + 1)"}]',  # wrapped in a list
    ],
)
def test_arguments_in_the_shapes_models_send_are_read(tmp_path: Path, raw: str) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", raw)), final("42"))
        r.agent(allow_create=False).run_task("print a number")
        assert _results(r)[0].ok and _results(r)[0].data["stdout"].strip() == "42"


@pytest.mark.parametrize("raw", ["", "null", "  "])
def test_no_arguments_mean_an_empty_object(tmp_path: Path, raw: str) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("search_tools", raw)), final("nothing"))
        r.agent().run_task("anything")
        assert "missing required argument 'query'" in _results(r)[0].data["error"]


def test_arguments_that_are_no_object_stay_an_actionable_error(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("search_tools", "[1, 2]")), reply(tool_call("search_tools", '"days"')), final("done")
        )
        r.agent().run_task("anything")
        errors = [e.data["error"] for e in _results(r)]
        assert "expected a JSON object, got list" in errors[0] and "not valid JSON" in errors[1]


@pytest.mark.parametrize(
    "name",
    [
        "functions.code_interpreter",
        " code_interpreter ",
        "code_interpreter<|channel|>commentary",
        "Code-Interpreter",
        "code_interpreter:0",
    ],
)
@pytest.mark.slow
def test_tool_names_as_servers_mangle_them_are_resolved(tmp_path: Path, name: str) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call(name, PRINT)), final("42"))
        r.agent(allow_create=False).run_task("print a number")
        assert [(e.name, e.ok) for e in _results(r)] == [("code_interpreter", True)]
        sent = r.model.requests[1][0][2]["tool_calls"][0]["function"]["name"]
        assert sent == "code_interpreter"  # the transcript names the tool that ran


def test_a_nameless_call_is_an_error_result_not_the_end(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("", PRINT)), final("sorry"))
        result = r.agent().run_task("anything")
        assert result.status == "answered" and "no function name" in _results(r)[0].data["error"]


@pytest.mark.slow
def test_a_near_miss_name_gets_a_suggestion(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        r.model.add(
            reply(tool_call("days_between_dates", {"start": "2021-01-01", "end": "2021-12-31"})),
            reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})),
            answer_from_tool,
        )
        second = r.agent().run_task("days between 2021-01-01 and 2021-12-31", index=1)
        miss = next(e for e in _results(r) if e.task == 1)
        assert "Did you mean 'days_between'?" in miss.data["error"]
        assert second.answer.startswith("364 days") and second.outcome == "reused"


@pytest.mark.parametrize(
    "content",
    [
        '<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "print(41 + 1)"}}\n</tool_call>',
        '[TOOL_CALLS] [{"name": "code_interpreter", "arguments": {"code": "print(41 + 1)"}}]',
        '```json\n{"name": "code_interpreter", "arguments": {"code": "print(41 + 1)"}}\n```',
        '{"name": "functions.code_interpreter", "parameters": {"code": "print(41 + 1)"}}',
    ],
)
def test_tool_calls_written_as_text_are_run(tmp_path: Path, content: str) -> None:
    with rig(tmp_path) as r:
        r.model.add(final(content), final("42"))
        result = r.agent(allow_create=False).run_task("print a number")
        assert [e.data["stdout"].strip() for e in _results(r)] == ["42"]
        assert result.answer == "42" and result.model_calls == 2


def test_a_json_answer_is_not_mistaken_for_a_call(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", PRINT)), final('{"name": "answer", "value": 42}'))
        result = r.agent(allow_create=False).run_task("print a number as JSON")
        assert result.answer == '{"name": "answer", "value": 42}'


def test_identical_calls_in_one_turn_run_once(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", PRINT), tool_call("code_interpreter", PRINT)), final("42"))
        r.agent(allow_create=False).run_task("print a number")
        first, second = _results(r)
        assert first.data["stdout"] == second.data["stdout"] and second.data["duplicate_of"] == first.call_id
        assert [e.name for e in r.of_type("tool_called")].count("code_interpreter") == 2  # both recorded


@pytest.mark.slow
def test_create_and_call_in_the_same_turn(tmp_path: Path) -> None:
    call = tool_call("days_between", {"start": "2020-01-01", "end": "2020-03-01"})
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": VERIFY}), create_days_tool(), call), answer_from_tool)
        result = r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert [(e.name, e.ok) for e in _results(r)] == [
            ("code_interpreter", True),
            ("create_tool", True),
            ("days_between", True),
        ]
        assert result.outcome == "evolved" and result.answer.startswith("60 days") and r.guards() == []


def test_undecodable_text_from_a_page_or_the_model_does_not_break_the_run(tmp_path: Path) -> None:
    # A lone surrogate (a split emoji from a local server, undecodable bytes read with
    # surrogateescape) cannot be encoded as UTF-8; it used to end the run with a traceback.
    page = {
        "ok": True,
        "url": "http://127.0.0.1:9/docs",
        "final_url": "http://127.0.0.1:9/docs",
        "text": "rate 1.25 \udcff",
        "untrusted": True,
    }
    with rig(tmp_path) as r:
        r.web.access = lambda: WebAccess(search=lambda q, n: {"ok": True, "results": []}, read=lambda url: page)
        r.model.add(
            reply(tool_call("read_webpage", {"url": page["url"]})),
            final("The page says 1.25 \ud83d (source: http://127.0.0.1:9/docs)"),
        )
        result = r.agent(allow_create=False).run_task("what rate does the page give?")
        assert (
            result.status == "answered"
            and result.answer == "The page says 1.25 \ufffd (source: http://127.0.0.1:9/docs)"
        )
        sent = [m for m in r.model.requests[-1][0] if m["role"] == "tool"][-1]["content"]
        assert "rate 1.25 \ufffd" in sent


# -- the pieces, directly ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("<think>a</think>b", "b"),
        ("<THINKING>a</THINKING>\nb", "b"),
        ("b <think>cut off mid-thought", "b"),
        ("no thinking here", "no thinking here"),
    ],
)
def test_strip_thinking(text: str, answer: str) -> None:
    assert strip_thinking(text) == answer


def test_encodable_replaces_lone_surrogates_and_joins_pairs() -> None:
    assert encodable("a\udcffb") == "a\ufffdb" and encodable("\ud83d\ude00") == "\U0001f600"
    assert encodable("plain") == "plain"


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "tool", "tool_call_id": "a", "content": "x"}], "must answer a tool call"),
        (
            [{"role": "assistant", "tool_calls": [{"id": "a"}]}, {"role": "user", "content": "x"}],
            "have no tool message",
        ),
        ([{"role": "assistant", "tool_calls": [{"id": ""}]}], "non-empty id"),
        ([{"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "a"}]}], "more than once"),
        ([{"role": "assistant", "tool_calls": [{"id": "a"}]}], "unanswered"),
    ],
)
def test_the_strict_server_refuses_what_strict_providers_refuse(messages: list[Any], problem: str) -> None:
    assert problem in (transcript_problem(messages) or "")
    ok = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "a"}]},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
        {"role": "assistant", "content": "done"},
    ]
    assert transcript_problem(ok) is None


def test_calls_packed_into_multi_tool_use_parallel_are_unpacked(tmp_path: Path) -> None:
    packed = tool_call(
        "multi_tool_use.parallel",
        {
            "tool_uses": [
                {"recipient_name": "functions.code_interpreter", "parameters": {"code": "print(1)"}},
                {"recipient_name": "functions.code_interpreter", "parameters": {"code": "print(2)"}},
            ]
        },
    )
    with rig(tmp_path) as r:
        r.model.add(reply(packed), final("done"))
        r.agent(allow_create=False).run_task("print two numbers")
        assert [(e.name, e.data["stdout"].strip()) for e in _results(r)] == [
            ("code_interpreter", "1"),
            ("code_interpreter", "2"),
        ]


def test_fenced_or_twice_escaped_code_runs_and_is_stored_clean(tmp_path: Path) -> None:
    fenced = f"```python\n{VERIFY}```"
    escaped = DAYS_CODE.replace("\n", "\\n")  # newlines sent as the two characters \ and n
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": fenced})),
            reply(create_days_tool(code=escaped)),
            reply(tool_call("days_between", {"start": "2020-01-01", "end": "2020-03-01"})),
            answer_from_tool,
        )
        result = r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert _results(r)[0].data["stdout"].strip() == "60"
        assert result.outcome == "evolved" and r.library.get("days_between").spec.code == DAYS_CODE


@pytest.mark.parametrize(
    ("code", "usable"),
    [
        ("```python\nprint(1)\n```", "print(1)"),
        ("import math\\nprint('中', math.pi)", "import math\nprint('中', math.pi)"),
        ("print('a\\nb')", "print('a\\nb')"),  # an escape inside a string is the code's own
        ("def broken(:\\n  pass", "def broken(:\\n  pass"),  # left alone when unescaping does not help
    ],
)
def test_usable_code(code: str, usable: str) -> None:
    assert usable_code(code) == usable


def test_a_call_the_model_only_thought_about_is_not_made() -> None:
    thought = '<think>I could send <tool_call>{"name": "web_search", "arguments": {}}</tool_call></think>Hello'
    assert text_tool_calls(thought, ["web_search"]) == ([], thought)
    said = '<think>search first</think><tool_call>{"name": "web_search", "arguments": {"query": "q"}}</tool_call>'
    calls, rest = text_tool_calls(said, ["web_search"])
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("web_search", {"query": "q"})] and rest == ""
