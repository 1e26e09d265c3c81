"""create_tool's note after a tool is stored: never false, whatever the test arguments were.

It tells the model to answer from ``test_result`` only when the task states every test
value (in whatever form the task writes it); otherwise it hands the judgement to the
model with the test arguments in view, instead of claiming they are not the task's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_helpers import VERIFY, create_days_tool, rig
from toolsmith.agent.metatools.task_values import task_values_match
from toolsmith.testing import final, reply, tool_call

STATED = [
    # dates written as the task writes them
    ("How many days from 1 April 2026 to 30 April 2026?", {"start": "2026-04-01", "end": "2026-04-30"}),
    ("Working days, 1–30 April 2026", {"start": "2026-04-01", "end": "2026-04-30"}),
    ("2027年1月15日是星期几？", {"date": "2027-01-15"}),
    ("¿Qué día es el 1 de diciembre de 2026?", {"date": "2026-12-01"}),
    ("Welcher Tag ist der 3. Oktober 2026?", {"date": "2026-10-03"}),
    ("What weekday is March 20, 2026?", {"date": "2026-03-20"}),
    ("What weekday is 20.03.2026?", {"date": "2026-03-20"}),
    # a time with its date, and the zones named by their cities
    (
        "A call at 09:30 New York time on 20 March 2026: what time in Berlin?",
        {"when": "2026-03-20T09:30", "from_tz": "America/New_York", "to_tz": "Europe/Berlin"},
    ),
    (
        "If it's 5 pm in Berlin on 2 November 2026, what's the time in Shanghai?",
        {"when": "2026-11-02 17:00", "to_tz": "Asia/Shanghai"},
    ),
    ("北京时间2026年3月1日晚上8点是纽约几点？", {"when": "2026-03-01T20:00"}),
    # numbers written with a decimal comma or thousands separators, full-width digits
    ("Wie viele Kilometer sind 26,2 Meilen?", {"value": 26.2}),
    ("Write 1,234,567 in French words.", {"number": 1234567}),
    ("１２３ 加 ４５６ 等于多少？", {"a": 123, "b": 456}),
    ("把“西安大学”转成拼音", {"text": "西安大学"}),
    # Chinese numerals and the lunar calendar's names for its months and days
    ("农历2030年八月十五（中秋节）是公历哪一天？", {"year": 2030, "month": 8, "day": 15}),
    ("2031年农历正月初一是公历哪天？", {"year": 2031, "month": 1, "day": 1}),
    ("二〇二六年有多少个工作日？", {"year": 2026}),
]

OPEN = [
    # values the task does not state: the note must not claim they are the task's
    (
        "How many working days does Germany have in April 2026?",
        {"start": "2026-04-01", "end": "2026-04-30", "country": "DE"},
    ),
    ("100元是多少美元？", {"amount": 100, "mode": "rmb"}),
    ("How many square feet is an 85 m² flat?", {"value": 85, "from_unit": "m**2"}),
    # test arguments that are not the task's
    ("days between 2020-01-01 and 2020-03-01", {"start": "2021-01-01", "end": "2020-03-01"}),
    ("Wie viele Kilometer sind 26,2 Meilen?", {"value": 262}),
    ("If it's 5 pm in Berlin on 2 November 2026, what's the time in Shanghai?", {"when": "2026-11-02 18:00"}),
    ("the first full moon after 1 September 2026", {"after": "2026-09-02"}),
    ("Is 'de' a word?", {"country": "DE", "text": "included"}),
    ("anything", {}),
    ("这一样吗？", {"n": 1}),  # a numeral inside a word is no number
]


@pytest.mark.parametrize(("task", "args"), STATED)
def test_values_the_task_states_in_its_own_words_count_as_its_arguments(task: str, args: dict[str, object]) -> None:
    assert task_values_match(task, args)


@pytest.mark.parametrize(("task", "args"), OPEN)
def test_values_the_task_does_not_state_are_never_claimed(task: str, args: dict[str, object]) -> None:
    assert not task_values_match(task, args)


def _note(tmp_path: Path, task: str, test_args: dict[str, str]) -> str:
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": VERIFY})),
            reply(create_days_tool(test_args=test_args)),
            final("done"),
        )
        r.agent().run_task(task)
        created = next(e.message for e in r.of_type("tool_result") if e.name == "create_tool")
    assert created["ok"], created
    return str(created["note"])


def test_the_note_says_answer_from_the_test_when_the_task_states_its_dates_another_way(tmp_path: Path) -> None:
    note = _note(tmp_path, "2020年1月1日到2020年3月1日有多少天？", {"start": "2020-01-01", "end": "2020-03-01"})
    assert "used this task's own arguments" in note and "answer from it" in note and "If not" not in note


def test_the_note_leaves_the_judgement_to_the_model_when_the_task_does_not_state_them(tmp_path: Path) -> None:
    note = _note(
        tmp_path,
        "How many days are there in the first two months of 2020?",
        {"start": "2020-01-01", "end": "2020-03-01"},
    )
    assert '"start": "2020-01-01"' in note and '"end": "2020-03-01"' in note  # the model sees what the test used
    assert "If those are this task's own arguments" in note and "If not, call days_between" in note
    assert "used this task's own arguments" not in note
