"""The program's reminders and budgets against real model habits, over the real SDK and HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_helpers import VERIFY, answer_from_tool, evolve_script, rig
from toolsmith.agent import guards
from toolsmith.testing import final, last_tool_result, reply, tool_call

TASK = "How many days between 2020-01-01 and 2020-03-01?"
REUSE = "How many days between 2021-01-01 and 2021-12-31?"


def _evolved(r: Any) -> None:
    r.model.add(*evolve_script())
    assert r.agent().run_task(TASK).outcome == "evolved"
    r.events.clear()


# -- grounding -------------------------------------------------------------------------


def test_an_invented_number_gets_one_reminder(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(final("There are 61 days."), final("There are 61 days."))
        result = r.agent(allow_create=False).run_task(TASK)
        assert r.guards() == ["grounding"] and result.status == "answered"  # reminded, never forced
        reminder = r.model.requests[1][0][-1]["content"]
        assert "61" in reminder and "no tool output" in reminder
        r.model.assert_complete()


def test_numbers_from_tools_the_task_or_simple_arithmetic_pass(tmp_path: Path) -> None:
    code = "print({'close': 924.7899780273438, 'week_ago': 903.25, 'volume': 41234567})"
    answer = "From 2020-01-01: close 924.79 (a week ago 903.25), up 21.54 or 2.38%, volume 41.2 million, about 925."
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": code})), final(answer))
        result = r.agent(allow_create=False).run_task("NVDA close vs a week ago, since 2020-01-01")
        assert r.guards() == [] and result.answer == answer


@pytest.mark.slow
def test_an_answer_that_names_no_source_is_reminded(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        _evolved(r)
        r.model.add(
            reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})),
            final("364 days."),
            answer_from_tool,
        )
        result = r.agent().run_task(REUSE, index=1)
        assert r.guards() == ["grounding"] and "data source" in r.model.requests[-1][0][-1]["content"]
        assert "days_between" in result.answer and result.outcome == "reused"


def test_an_honest_failure_without_numbers_is_not_reminded(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("web_search", {"query": "free stock price library"})),
            final("I could not find a free library that gives this price, so I cannot answer."),
        )
        result = r.agent().run_task("What is the latest price of ACME Corp?")
        assert r.guards() == [] and result.status == "answered"


@pytest.mark.parametrize(
    ("answer", "evidence", "unbacked"),
    [
        ("60 days", '{"days": 60}', []),
        ("60 days", "", ["60"]),
        ("1,234.5 units", "1234.5", []),
        ("3 items and 7 more", "", []),  # small counts are not checked
        ("0.5 and 12.34", "12.339", ["0.5"]),  # rounding passes, a new decimal does not
        ("1.2万", "12000", []),  # rescaled (CJK ten-thousands)
        ("up 5.0%", "105 100", []),  # a percentage change of two numbers
        ("version 2024", "2023", ["2024"]),
        # issue 18: derived numbers, decimal commas and numbers that are part of a name
        ("236.59 mL per cup", "709.76 mL for 3 cups", []),  # a quotient, rounded as the answer rounds it
        ("1419.52 mL for 2 jugs", "709.76\n2 jugs", []),  # a product of a tool number and one of the task
        ("Das sind 42,1648128 Kilometer.", '{"km": 42.1648128}', []),  # a decimal comma is one number
        ("Das sind 42,17 Kilometer.", '{"km": 42.1648128}', []),
        ("Das sind 41,17 Kilometer.", '{"km": 42.1648128}', ["41,17"]),
        ("in ISO 8601 form: 2026-03-20", '{"date": "2026-03-20"}', []),  # a standard's name is no claim
        ("UTF-8, CO2, RFC 3339, WGS 84", "", []),
        ("USD 150", '{"days": 60}', ["150"]),  # a currency code is not a name: this is a claim
        ("２３６．５９ mL", "709.76 and 3", []),  # full-width digits
    ],
)
def test_ungrounded_numbers(answer: str, evidence: str, unbacked: list[str]) -> None:
    assert guards.ungrounded_numbers(answer, evidence) == unbacked


# -- language --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "language"),
    [
        ("2020-01-01 和 2020-03-01 之间相差多少天？", "Chinese"),
        ("英伟达 (NVDA) 的最新股价是多少？", "Chinese"),
        ("2020年1月1日から2020年3月1日まで何日ですか？", "Japanese"),
        ("2020-01-01과 2020-03-01 사이는 며칠입니까?", "Korean"),
        ("Сколько дней между 2020-01-01 и 2020-03-01?", "a Cyrillic-script language"),
        ("How many days between 2020-01-01 and 2020-03-01?", None),
        ("Translate 你好 into English", None),  # a quoted word does not make the task Chinese
    ],
)
def test_task_language(task: str, language: str | None) -> None:
    assert guards.task_language(task) == language


@pytest.mark.parametrize(
    ("task", "answer", "reminded"),
    [
        ("2020年1月1日から2020年3月1日まで何日ですか？", "60日", False),  # kanji-only Japanese is fine
        ("2020-01-01과 2020-03-01 사이는 며칠입니까?", "60天", True),  # Korean wants hangul
        ("2020-01-01과 2020-03-01 사이는 며칠입니까?", "60일입니다", False),
        ("Сколько дней между 2020-01-01 и 2020-03-01?", "60 days", True),
        ("2020-01-01 和 2020-03-01 之间相差多少天？", "60", True),  # a bare number: asked once
    ],
)
def test_language_reminder(task: str, answer: str, reminded: bool) -> None:
    assert (guards.wrong_language(task, answer) is not None) is reminded


def test_a_bare_number_for_a_chinese_task_is_accepted_after_one_reminder(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": VERIFY})), final("60"), final("60"))
        result = r.agent(allow_create=False).run_task("2020-01-01 和 2020-03-01 之间相差多少天？")
        assert r.guards() == ["language"] and result.answer == "60"


# -- reuse first, nudge ------------------------------------------------------------------


@pytest.mark.slow
def test_passing_over_a_hit_runs_the_search_without_a_word(tmp_path: Path) -> None:
    """The model saw the hit and chose the web: its call runs, and nothing is attached to it
    (a real model passed over such hits rightly every time, and a reminder read like advice)."""
    search = tool_call("web_search", {"query": "date library"})
    with rig(tmp_path) as r:
        _evolved(r)
        r.model.add(reply(search), final("I will not answer."))
        r.agent().run_task(REUSE, index=1)
        assert r.guards() == [] and r.web.searches == ["date library"]
        first = next(e.message for e in r.of_type("tool_result") if e.name == "web_search")
        assert first["ok"] and "guard" not in first and "intervention" not in first


@pytest.mark.slow
def test_web_search_after_a_successful_reuse_runs_without_a_word(tmp_path: Path) -> None:
    """A stored tool answered part of the task; the model may need the web for the rest."""
    with rig(tmp_path) as r:
        _evolved(r)
        r.model.add(
            reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})),
            reply(tool_call("web_search", {"query": "days in 2021"})),
            lambda m, t: final(
                f"{last_tool_result(m, name='days_between')['result']['days']} days "
                "(source: library tool days_between@1)"
            ),
        )
        result = r.agent().run_task(REUSE, index=1)
        assert r.guards() == [] and r.web.searches == ["days in 2021"]
        assert result.answer.startswith("364 days")


def test_building_before_any_search_of_the_library_is_refused(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("web_search", {"query": "date library"})), final("ok"))
        r.agent(pre_retrieval=False).run_task("days between 2020-01-01 and 2020-03-01")
        refused = next(e for e in r.of_type("tool_result") if e.name == "web_search")
        assert refused.outcome.refusal is not None and refused.outcome.refusal.guard == "reuse_first"
        assert r.web.searches == []


def test_the_nudge_offers_an_honest_way_out(tmp_path: Path) -> None:
    honest = "The library printed data, but not what the task needs; I cannot answer reliably."
    with rig(tmp_path, max_nudges=2) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": "print('unrelated output')"})),
            final(honest),
            final(honest),
        )
        result = r.agent().run_task("What is the latest price of ACME Corp?")
        nudges = [e.message for e in r.of_type("guard_fired") if e.guard == "nudge"]
        assert len(nudges) == 1 and "say so honestly" in nudges[0]  # once: the model's answer stands
        assert result.status == "answered" and result.answer == honest and len(r.library) == 0
        r.model.assert_complete()


# -- budgets -----------------------------------------------------------------------------


def test_the_last_model_call_is_told_to_answer(tmp_path: Path) -> None:
    def answer(messages: list[dict[str, Any]], tools: Any) -> Any:
        result = last_tool_result(messages)
        assert "One model call is left" in result["budget"]
        return final(f"{result['stdout'].strip()} days so far; I ran out of steps before storing a tool.")

    with rig(tmp_path, max_steps=2) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": VERIFY})), answer)
        result = r.agent().run_task(TASK)
        # the nudge is due but no call is left to act on it: the answer stands
        assert result.status == "answered" and result.answer.startswith("60 days") and r.guards() == []


def test_max_steps_reached_on_a_tool_call_turn_ends_honestly(tmp_path: Path) -> None:
    with rig(tmp_path, max_steps=2) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": "print(1)"})),
            reply(tool_call("code_interpreter", {"code": "print(2)"})),
        )
        result = r.agent().run_task("loop")
        assert result.status == "budget" and "max steps 2" in result.answer and result.model_calls == 2


def test_wall_time_budget(tmp_path: Path) -> None:
    with rig(tmp_path, max_wall_s=0.000001) as r:
        result = r.agent().run_task("anything")
        assert result.status == "budget" and "max wall time" in result.answer and result.model_calls == 0


def test_a_model_error_mid_task_keeps_what_was_done(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.server.inject(delay=0.001)  # the first request is answered normally
        r.server.inject(status=400)
        r.model.add(reply(tool_call("code_interpreter", {"code": VERIFY})))
        result = r.agent().run_task(TASK)
        assert result.status == "error" and "400" in (result.error or "")
        assert [a.name for a in result.actions] == ["search_tools", "code_interpreter"]
        assert result.messages[-1]["role"] == "tool"


def test_an_honest_answer_after_a_run_that_only_diagnosed_failure_is_not_pushed_to_store_a_tool(tmp_path: Path) -> None:
    """Issue 18: the run printed the library's version and its DNS failures; that verified
    nothing, so the honest answer stands and no nudge asks to store a tool that never worked."""
    code = (
        "print('yfinance 1.7.0')\n"
        "print(\"fast_info error: DNSError('Could not resolve host: query2.finance.example')\")\n"
    )
    honest = "I cannot give NVIDIA's live price: no market data source is reachable from the sandbox."
    with rig(tmp_path) as r:
        r.model.add(reply(tool_call("code_interpreter", {"code": code})), final(honest))
        result = r.agent().run_task("What is NVIDIA's (NVDA) stock price right now?")
        ran = next(e for e in r.of_type("tool_result") if e.name == "code_interpreter")
    assert ran.message["verified"] is False and "does not count as verification" in ran.message["note"]
    assert r.guards() == [] and result.answer == honest and result.model_calls == 2
