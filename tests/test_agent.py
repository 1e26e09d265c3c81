"""The agent loop over the real openai SDK and HTTP: evolve, reuse, guards, bad output, budgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import VERIFY, answer_from_tool, create_days_tool, evolve_script, last_tool_result, rig
from toolsmith.agent import prompts
from toolsmith.agent.metatools.task_values import task_values_match
from toolsmith.agent.toolbox import RESULT_CHARS
from toolsmith.calls import Origin
from toolsmith.errors import ModelConfigError
from toolsmith.events import TaskFinished
from toolsmith.library import Provenance, Status, ToolSpec
from toolsmith.testing import final, reply, tool_call


@pytest.mark.slow
def test_evolve_then_reuse_through_http(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        first = r.agent().run_task("How many days between 2020-01-01 and 2020-03-01?")
        assert first.status == "answered" and first.answer.startswith("60 days")
        assert first.created == ["days_between@1"] and first.outcome == "evolved"
        stored = r.library.get("days_between")
        assert stored.status == Status.ACTIVE and stored.gate["ok"] is True
        assert stored.provenance.task.startswith("How many days") and stored.provenance.model == "scripted"

        r.model.add(reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})), answer_from_tool)
        second = r.agent().run_task("How many days between 2021-01-01 and 2021-12-31?", index=1)
        assert second.answer.startswith("364 days")
        verdict = second.reuse_verdict()
        assert verdict == {
            "search_tools_called": True,
            "library_tools_called": ["days_between"],
            "web_search_called": False,
            "create_tool_called": False,
            "reused": True,
        }
        assert second.model_calls == 2 and second.outcome == "reused"
        assert r.library.get("days_between").stats.calls == 2
        r.model.assert_complete()
        # the requests really went through HTTP with the configured key
        assert r.server.requests and all(a == "Bearer test-key" for a in r.server.authorizations)


@pytest.mark.slow
def test_pre_retrieval_off_costs_a_model_call(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        r.model.add(
            reply(tool_call("search_tools", {"query": "days between dates"})),
            reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})),
            answer_from_tool,
        )
        result = r.agent(pre_retrieval=False).run_task("days between 2021-01-01 and 2021-12-31")
        assert result.model_calls == 3 and result.reuse_verdict()["reused"]
        program_calls = [e for e in r.of_type("tool_called") if e.call.origin is Origin.PROGRAM]
        assert len(program_calls) == 1  # only task 1 (pre-retrieval on) searched on the program's behalf


def test_reuse_first_guard_refuses_web_search_before_search_tools(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("web_search", {"query": "date library"})),
            reply(
                tool_call(
                    "create_tool", {"name": "x", "description": "d", "parameters": {}, "code": "", "test_args": {}}
                )
            ),
            final("I could not find a way."),
        )
        result = r.agent(pre_retrieval=False).run_task("days between two dates")
        assert r.guards()[:2] == ["reuse_first", "reuse_first"]
        assert r.web.searches == []  # the refused call never reached the web
        assert result.status == "answered"


@pytest.mark.slow
def test_unlocking_guard_requires_search_before_calling_a_library_tool(tmp_path: Path) -> None:
    # past the catalogue's size (here: no catalogue), only search unlocks a stored tool
    with rig(tmp_path, catalogue_max_tools=0) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        r.model.add(
            reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})),
            final("stopped"),
        )
        r.agent(pre_retrieval=False).run_task("days between 2021-01-01 and 2021-12-31", index=1)
        assert "unlocking" in r.guards()
        locked = [e for e in r.of_type("tool_result") if e.task == 1]
        assert locked and not locked[0].ok and "locked" in locked[0].summary
        assert r.library.get("days_between").stats.calls == 1  # only task 1's call ran


def test_verify_before_create_guard(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(create_days_tool()), final("gave up"))
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert "verify_before_create" in r.guards()
        assert len(r.library) == 0


def test_empty_stdout_does_not_count_as_verification(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": "x = 1"})), reply(create_days_tool()), final("no"))
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        results = r.of_type("tool_result")
        assert "does not count as verification" in json.dumps(results[1].message)
        assert "verify_before_create" in r.guards() and len(r.library) == 0


def test_a_run_that_printed_only_a_dns_error_does_not_verify(tmp_path: Path) -> None:
    code = "try:\n    raise OSError('[Errno -3] Temporary failure in name resolution')\nexcept OSError as e:\n    print(e)\n"
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": code})), reply(create_days_tool()), final("no"))
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        first = next(e.message for e in r.of_type("tool_result") if e.name == "code_interpreter")
        assert first["exit_code"] == 0 and first["verified"] is False and "only errors" in first["note"]
        assert "verify_before_create" in r.guards() and len(r.library) == 0


def test_anti_mock_refusal_goes_back_to_the_model(tmp_path: Path) -> None:
    mock_code = "def run(start, end):\n    fake_days = {'days': 60}\n    return fake_days\n"
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": VERIFY})),
            reply(create_days_tool(code=mock_code)),
            final("refused"),
        )
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        create = next(e for e in r.of_type("tool_result") if e.name == "create_tool")
        assert create.message["check"] == "anti_mock" and len(r.library) == 0
        # the model saw the refusal as a tool result
        tool_messages = [m for m in r.model.requests[-1][0] if m["role"] == "tool"]
        assert "anti_mock" in tool_messages[-1]["content"]


def test_nudge_is_bounded(tmp_path: Path) -> None:
    run = reply(tool_call("code_interpreter", {"code": VERIFY}))
    with rig(tmp_path, max_nudges=2) as r:
        # newly verified data before each answer: reminded each time, up to the bound
        r.model.add(run, final("60 days"), run, final("60 days"), run, final("60 days"))
        result = r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert r.guards().count("nudge") == 2
        assert result.status == "answered" and result.model_calls == 6
        r.model.assert_complete()


def test_a_nudge_is_not_repeated_for_the_same_evidence(tmp_path: Path) -> None:
    """A model that answers again after a reminder, with nothing newly verified, has decided."""
    with rig(tmp_path, max_nudges=2) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": VERIFY})), final("60 days"), final("60 days"))
        result = r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert r.guards().count("nudge") == 1
        assert result.status == "answered" and result.model_calls == 3
        r.model.assert_complete()


def test_no_create_removes_the_tool_and_the_nudge(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": VERIFY})), final("60 days"))
        result = r.agent(allow_create=False).run_task("days between 2020-01-01 and 2020-03-01")
        offered = {t["function"]["name"] for t in r.model.requests[0][1]}
        assert "create_tool" not in offered and "code_interpreter" in offered
        assert "nudge" not in r.guards() and result.model_calls == 2


def test_language_guard_asks_for_the_tasks_language(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        # the 60 comes from a real run, so only the language is wrong
        r.model.add(reply(tool_call("code_interpreter", {"code": VERIFY})), final("60 days"), final("相差 60 天"))
        result = r.agent(allow_create=False).run_task("2020-01-01 和 2020-03-01 之间相差多少天？")
        assert r.guards() == ["language"] and result.answer == "相差 60 天"


def test_bad_model_output_becomes_error_results(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", "{not json")),
            reply(tool_call("no_such_tool", {})),
            reply(tool_call("code_interpreter", {"code": 5})),
            reply(tool_call("code_interpreter", {})),
            reply(tool_call("search_tools", "[1, 2]")),
            final("done"),
        )
        result = r.agent().run_task("anything")
        errors = [e.summary for e in r.of_type("tool_result") if e.task == 0][1:]
        assert "not valid JSON" in errors[0]
        assert "no tool named 'no_such_tool'" in errors[1]
        assert "should be of type string" in errors[2]
        assert "missing required argument 'code'" in errors[3]
        assert "expected a JSON object" in errors[4]
        assert result.status == "answered"


def test_parallel_tool_calls_run_in_order(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        calls = [tool_call("code_interpreter", {"code": f"print({i})"}, id=f"c{i}") for i in range(3)]
        r.model.add(reply(*calls), final("done"))
        r.agent().run_task("print three numbers")
        results = [e for e in r.of_type("tool_result") if e.name == "code_interpreter"]
        assert [e.call_id for e in results] == ["c0", "c1", "c2"]
        assert [e.message["stdout"].strip() for e in results] == ["0", "1", "2"]
        sent = [m for m in r.model.requests[-1][0] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in sent][-3:] == ["c0", "c1", "c2"]


def test_repeated_failing_call_gets_an_intervention(tmp_path: Path) -> None:
    failing = tool_call("code_interpreter", {"code": "raise SystemExit(2)"})
    with rig(tmp_path) as r:
        r.model.add(reply(failing), reply(failing), reply(failing), final("cannot"))
        r.agent().run_task("something impossible")
        assert r.guards() == ["repeat"]
        last = [m for m in r.model.requests[-1][0] if m["role"] == "tool"][-1]
        assert "failed 3 times" in last["content"]


def test_a_fourth_identical_failing_call_is_refused_without_running(tmp_path: Path) -> None:
    failing = tool_call("code_interpreter", {"code": "raise SystemExit(2)"})
    with rig(tmp_path) as r:
        r.model.add(*[reply(failing) for _ in range(5)], final("cannot"))
        r.agent().run_task("something impossible")
        runs = [e for e in r.of_type("tool_result") if e.name == "code_interpreter"]
        assert [e.message.get("exit_code") for e in runs[:3]] == [2, 2, 2]
        assert all("refused" in e.message["error"] and "exit_code" not in e.message for e in runs[3:])
        assert len(runs) == 5 and r.guards() == ["repeat"] * 3  # told once, then refused twice
        other = tool_call("code_interpreter", {"code": "print(7)"})
        r.model.add(reply(other), final("7"))
        r.agent().run_task("something else", index=1)  # a new task starts a new count
        assert r.of_type("tool_result")[-1].message["stdout"].strip() == "7"


def test_calls_past_the_per_turn_cap_are_refused_and_the_prompt_says_so(tmp_path: Path) -> None:
    with rig(tmp_path, max_calls_per_turn=2) as r:
        calls = [tool_call("code_interpreter", {"code": f"print({i})"}, id=f"c{i}") for i in range(4)]
        r.model.add(reply(*calls), final("done"))
        r.agent().run_task("print four numbers")
        results = [e for e in r.of_type("tool_result") if e.name == "code_interpreter"]
        assert [e.message.get("stdout", "").strip() for e in results] == ["0", "1", "", ""]
        assert all("at most 2 tool calls run per reply" in e.message["error"] for e in results[2:])
        assert "at most 2 tool calls per reply" in r.model.requests[0][0][0]["content"]


def test_a_near_miss_in_the_library_does_not_block_web_search(tmp_path: Path) -> None:
    task = "Write a Klingon poem about calendar dates"
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert [h.tool.name for h in r.library.search(task, floor=0)] == ["days_between"]  # BM25 alone hits
        r.events.clear()
        r.model.add(reply(tool_call("web_search", {"query": "klingon poetry generator"})), final("none found"))
        r.agent().run_task(task, index=1)
        assert r.guards() == [] and r.web.searches[-1] == "klingon poetry generator"
        assert "no tool shares them" in r.model.requests[-2][0][1]["content"]


def answer_in_chinese(messages: list[dict[str, Any]], tools: Any = None) -> Any:
    result = last_tool_result(messages)
    return final(f"相差 {result['result']['days']} 天（来源：{result['source']}）")


def test_a_small_library_is_listed_whole_so_a_chinese_task_reuses_in_two_calls(tmp_path: Path) -> None:
    task = "2021年1月1日到2021年12月31日之间有多少天？"
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert r.library.search(task) == []  # the Chinese task shares no word with the English tool
        r.events.clear()
        r.model.add(reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})), answer_in_chinese)
        result = r.agent().run_task(task, index=1)
        assert result.model_calls == 2 and "364" in result.answer and "grounding" not in r.guards()
        first = r.model.requests[-2][0][1]["content"]
        assert "- days_between: Count the days between two ISO dates." in first


def test_a_large_library_shows_its_recently_used_tools_so_a_chinese_task_still_reuses(tmp_path: Path) -> None:
    """Past the catalogue's size the library is not listed whole, but the tools used lately
    are: a task in another language, which search cannot match, still finds the tool."""
    task = "2021年1月1日到2021年12月31日之间有多少天？"
    with rig(tmp_path, catalogue_max_tools=1) as r:
        _store_unrelated_tools(r.library, 3)
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        r.events.clear()
        r.model.add(reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})), answer_in_chinese)
        result = r.agent().run_task(task, index=1)
        first = r.model.requests[-2][0][1]["content"]
    assert result.model_calls == 2 and "364" in result.answer
    assert (
        "no tool shares them, but a tool may still fit" in first
        and "If a tool listed below fits, call it" in first
        and "all 4 tools" in first
    )
    assert "most recently used tools" in first and "- days_between: Count the days" in first
    assert "holds 4 tools" in first and "unrelated_0" not in first  # one line: the newest tool only


def _store_unrelated_tools(library: Any, n: int) -> None:
    for i in range(n):
        spec = ToolSpec(
            name=f"unrelated_{i}",
            description=f"Reverse a text, variant {i}.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            code="def run(text):\n    return {'text': text[::-1]}\n",
            test_args={"text": "abc"},
        )
        library.add(spec, provenance=Provenance(task="seed", model="none", origin="test"), gate={"ok": True})


def test_the_catalogue_is_bounded_and_left_out_above_its_size(tmp_path: Path) -> None:
    with rig(tmp_path, catalogue_max_tools=1) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        r.model.add(final("ok"))
        r.agent().run_task("anything", index=1)
        assert "The whole tool library" in r.model.requests[-1][0][1]["content"]
    with rig(tmp_path / "two", catalogue_max_tools=0) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        r.model.add(final("ok"))
        r.agent().run_task("anything", index=1)
        assert "The whole tool library" not in r.model.requests[-1][0][1]["content"]
    tools = [(f"tool_{i}", f"Does thing number {i} with a long description.\nSecond line.") for i in range(100)]
    note = prompts.catalogue_note(tools, 1000)
    assert len(note) <= 1000 and "more: search_tools finds them" in note and "Second line" not in note


def test_create_tool_result_offers_its_test_output_when_it_used_the_task_arguments(tmp_path: Path) -> None:
    assert task_values_match("days between 2020-01-01 and 2020-03-01", {"start": "2020-01-01", "end": "2020-03-01"})
    assert not task_values_match("days between 2020-01-01 and 2020-03-01", {"start": "2021-01-01", "end": "2020-03-01"})
    assert task_values_match("Write 5000 seconds in words", {"seconds": 5000, "full": True})
    assert not task_values_match("anything", {})
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        created = next(e.message for e in r.of_type("tool_result") if e.name == "create_tool")
        assert created["test_result"] == {"days": 60} and "answer from it" in created["note"]


def test_budget_ends_the_task_honestly(tmp_path: Path) -> None:
    with rig(tmp_path, max_steps=3) as r:
        r.model.add(*[reply(tool_call("code_interpreter", {"code": "print(1)"})) for _ in range(3)])
        result = r.agent().run_task("loop forever")
        assert result.status == "budget" and "Budget reached (max steps 3)" in result.answer
        assert result.model_calls == 3


def test_token_budget(tmp_path: Path) -> None:
    with rig(tmp_path, max_tokens=10) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": "print(1)"})))
        result = r.agent().run_task("anything")
        assert result.status == "budget" and "max tokens 10" in result.answer and result.total_tokens > 10


def test_token_budget_holds_when_the_endpoint_reports_no_usage(tmp_path: Path) -> None:
    with rig(tmp_path, max_tokens=10) as r:
        r.server.report_usage = False  # as some local servers answer
        r.model.add(reply(tool_call("code_interpreter", {"code": "print(1)"})))
        result = r.agent().run_task("anything")
        assert result.status == "budget" and "max tokens 10" in result.answer
        assert result.total_tokens > 10 and result.tokens_estimated
        assert result.to_dict()["tokens"]["estimated"] is True
        finished = r.of_type("task_finished")[-1]
        assert isinstance(finished, TaskFinished) and finished.tokens_estimated


def test_huge_tool_results_are_capped(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": "print('x' * 200000)"})), final("ok"))
        r.agent().run_task("print a lot")
        content = [m for m in r.model.requests[-1][0] if m["role"] == "tool"][-1]["content"]
        assert len(content) <= RESULT_CHARS + 100 and "characters cut to fit the context" in content


def test_model_error_ends_the_task_with_status_error(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.server.inject(status=400)
        result = r.agent().run_task("anything")
        assert result.status == "error" and result.error and "400" in result.error
        assert [e.type for e in r.events][-2:] == ["final_answer", "task_finished"]


def test_rejected_key_is_a_configuration_error(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.server.inject(status=401)
        with pytest.raises(ModelConfigError) as caught:
            r.agent().run_task("anything")
        assert caught.value.setting == "LLM_API_KEY" and "test-key" not in str(caught.value)


@pytest.mark.slow
def test_double_encoded_arguments_are_decoded_where_the_schema_is_clear(tmp_path: Path) -> None:
    call = create_days_tool()
    args = json.loads(call.arguments)
    args["parameters"] = json.dumps(args["parameters"])  # some models send objects as JSON text
    args["test_args"] = json.dumps(args["test_args"])
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": VERIFY})),
            reply(tool_call("create_tool", args)),
            reply(tool_call("search_tools", {"query": "days", "limit": "3"})),
            final("stored"),
        )
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        created = next(e.message for e in r.of_type("tool_result") if e.name == "create_tool")
        assert created["ok"] is True, created
        assert r.library.get("days_between").spec.parameters["required"] == ["start", "end"]
        searched = [e.message for e in r.of_type("tool_result") if e.name == "search_tools"][-1]
        assert searched["ok"] and searched["results"][0]["name"] == "days_between"


def test_without_pre_retrieval_the_prompt_asks_the_model_to_search_first() -> None:
    """Step 0 says what happened: the program searched (pre-retrieval on), or the model must."""
    on, off = prompts.system_prompt(10), prompts.system_prompt(10, pre_retrieval=False)
    assert "The program has already searched the whole library" in on and "search_tools with what" not in on
    assert "Call search_tools with what the task needs" in off and "already searched" not in off
    assert on.count("1. Otherwise, web_search") == off.count("1. Otherwise, web_search") == 1


# A run that prints the answer and then fails on the next line it tries (as a model exploring
# a library does: pint printed the conversion, then did not know 'square_meter').
PRINTED_THEN_FAILED = VERIFY + "date.fromisoformat('not a date')\n"


def test_a_run_that_printed_data_then_failed_backs_a_tool_whose_tests_expect_that_data(tmp_path: Path) -> None:
    tests = [{"args": {"start": "2020-01-01", "end": "2020-03-01"}, "contains": {"days": 60}}]
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": PRINTED_THEN_FAILED})),
            reply(create_days_tool(tests=tests)),
            final("stored"),
        )
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        ran = next(e.message for e in r.of_type("tool_result") if e.name == "code_interpreter")
        assert ran["exit_code"] != 0 and "60" in ran["stdout"]
        assert "verify_before_create" not in r.guards()
        assert len(r.library) == 1


@pytest.mark.parametrize(
    "tests",
    [
        [{"args": {"start": "2020-01-01", "end": "2020-03-01"}, "contains": {"days": 59}}],  # not what it printed
        [{"args": {"start": "2020-01-01", "end": "2020-03-01"}}],  # nothing expected at all
    ],
)
def test_a_failed_run_does_not_back_tests_that_expect_nothing_it_printed(tmp_path: Path, tests: object) -> None:
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": PRINTED_THEN_FAILED})),
            reply(create_days_tool(tests=tests)),
            final("no"),
        )
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        refused = next(e.message for e in r.of_type("tool_result") if e.name == "create_tool")
        assert refused["guard"] == "verify_before_create"
        assert "expects a value that run printed" in refused["error"]
        assert len(r.library) == 0
