"""The scripted scenario's tasks: one day of use, each task a failure mode a precision issue
measured (#10, then #18 with a real model), with the code a well-behaved model would write.

Every failure of issue #18 has a case here except one: pinning a data package (``tzdata``
behind ``zoneinfo``) needs a real install, which this offline run cannot make;
``tests/test_pins.py`` covers it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DAYS_CODE = '''\
"""Days between two ISO dates, with Python's datetime."""
from datetime import date


def run(start: str, end: str) -> dict:
    return {"start": start, "end": end, "days": (date.fromisoformat(end) - date.fromisoformat(start)).days}
'''
MOON_CODE = '''\
"""Age of the moon (days since new moon) and its illuminated fraction on a date."""
import math
from datetime import datetime, timezone

SYNODIC_DAYS = 29.530588853
REFERENCE_NEW_MOON = datetime(2000, 1, 6, 18, 14, tzinfo=timezone.utc)


def run(date: str) -> dict:
    when = datetime.fromisoformat(date).replace(hour=12, tzinfo=timezone.utc)
    age = ((when - REFERENCE_NEW_MOON).total_seconds() / 86400) % SYNODIC_DAYS
    lit = (1 - math.cos(2 * math.pi * age / SYNODIC_DAYS)) / 2
    return {"date": date, "age_days": round(age, 1), "illuminated": round(lit, 3)}
'''
DURATION_CODE = '''\
"""A number of seconds as hours, minutes and seconds, in words or short form."""


def run(seconds: int, style: str = "full") -> dict:
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    if style == "full":
        text = f"{hours} hours {minutes} minutes {secs} seconds"
    else:
        text = f"{hours}h {minutes}m {secs}s"
    return {"seconds": int(seconds), "text": text}
'''
PRICE_CODE = """\
import urllib.request
print("urllib 3.11")  # the version it imported: no data yet
try:
    print(urllib.request.urlopen("https://api.exchange.invalid/v1/btc-usd", timeout=5).read()[:200])
except Exception as exc:  # the model's code reports the failure, with a label, and exits 0
    print(f"quote error: {exc!r}")
"""
WEEKDAY_CODE = '''\
"""The weekday of an ISO date, in English, with Python's datetime."""
from datetime import date


def run(date_iso: str) -> dict:
    day = date.fromisoformat(date_iso)
    return {"date": date_iso, "weekday": day.strftime("%A"), "iso_weekday": day.isoweekday()}
'''
CASE_CODE = '''\
"""Change the case of a text: title, upper or lower."""


def run(text: str, style: str = "title") -> dict:
    key = (style or "title").lower()
    change = {"title": str.title, "upper": str.upper, "lower": str.lower}[key]
    return {"text": change(text), "style": key}
'''
BADGE_README = (
    "# moonlib\n\nMoon ages and phases.\n\n<table>\n"
    + "".join(
        f'  <tr><td>\n    <a href="https://ci.example/{i}"><img src="https://img.example/b/{i}" alt="b"></a>'
        f'&nbsp;<a href="https://ci.example/x{i}"><img src="https://img.example/b/x{i}" alt="c"></a>\n  </td></tr>\n'
        for i in range(120)
    )
    + "</table>\n\n## Quick Start\n\n```python\nimport math\nage = elapsed_days % 29.530588853\n```\n"
)
STRING = {"type": "string"}


@dataclass(frozen=True)
class Evolve:
    """Build a tool: search the web, read its docs, verify, create, answer."""

    query: str
    url: str
    verify: str
    create: dict[str, Any]
    answer: Callable[[dict[str, Any]], str]
    enum_param: str | None = None  # dropped from test_args when the gate calls it hard-coded
    usage: str = ""  # what the docs must show before coding; absent from the page: read its section


@dataclass(frozen=True)
class Reuse:
    """Use stored tools: call the ones offered, else search for them in English first."""

    calls: tuple[tuple[str, dict[str, Any], str], ...]  # (tool, arguments, English search query)
    answer: Callable[[list[dict[str, Any]]], str]


@dataclass(frozen=True)
class Impossible:
    """No key-free source works offline: try once, then say so honestly."""

    query: str
    code: str
    answer: str


@dataclass(frozen=True)
class Misuse:
    """Call a stored tool with an input it cannot take until told to stop, then say so."""

    tool: str
    args: dict[str, Any]
    answer: str


@dataclass(frozen=True)
class Task:
    kind: str  # what it shows
    text: str
    plan: Evolve | Reuse | Impossible | Misuse


def _days_args(text: str) -> dict[str, Any]:
    iso = re.findall(r"\d{4}-\d{2}-\d{2}", text)
    if len(iso) >= 2:
        return {"start": iso[0], "end": iso[1]}
    ymd = [f"{y}-{int(m):02d}-{int(d):02d}" for y, m, d in re.findall(r"(\d{4})年(\d{1,2})月(\d{1,2})日", text)]
    return {"start": ymd[0], "end": ymd[1]}


def _create(
    name: str, description: str, params: dict[str, Any], code: str, test_args: dict[str, Any]
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": params, "required": [next(iter(params))]},
        "code": code,
        "test_args": test_args,
        "keywords": [name.replace("_", " ")],
    }


T1 = "How many days are there between 2020-01-01 and 2020-03-01?"
T2 = "2021年1月1日到2021年12月31日之间有多少天？"
T3 = "Moon phase on 2024-03-25: how many days old is the moon, and what is the illumination?"
T4 = "Write 5000 seconds as hours and minutes, in full words."
T5 = "What is the bitcoin price in US dollars right now?"
T6 = "How many days are there between 2024-01-01 and 2024-03-01, and how long is 7384 seconds in full words?"
T7 = "How long is 86399 seconds in full words?"
T8 = "2026年1月15日是星期几？"
T9 = "Write 'the old man and the sea' in title case."
T10 = "Split the days between 2020-01-01 and 2020-03-01 into 3 equal parts: how many days is each part?"
T11 = "How many days are there between yesterday and 2020-03-01?"

TASKS: tuple[Task, ...] = (
    Task(
        "evolve",
        T1,
        Evolve(
            "python date difference in days",
            "https://docs.example/datetime",
            "from datetime import date\nprint((date(2020, 3, 1) - date(2020, 1, 1)).days)\n",
            _create(
                "days_between",
                "Count the days between two ISO dates (end minus start).",
                {"start": STRING, "end": STRING},
                DAYS_CODE,
                _days_args(T1),
            ),
            lambda r: f"There are {r['days']} days between {r['start']} and {r['end']} (source: days_between).",
        ),
    ),
    Task(
        "reuse, cross-lingual",
        T2,
        Reuse(
            (("days_between", _days_args(T2), "days between two dates"),),
            lambda rs: f"{rs[0]['start']} 到 {rs[0]['end']} 之间相差 {rs[0]['days']} 天（来源：days_between）。",
        ),
    ),
    Task(
        "evolve, out-of-scope hit, badge page",  # #18: reuse-first, package pages
        T3,
        Evolve(
            "python moon phase library",
            "https://docs.example/moon",
            "import math\nage = ((24 * 3600 * 8845.7) / 86400) % 29.530588853\nprint(round(age, 1))\n",
            _create(
                "moon_age",
                "Age of the moon in days since new moon, and its illuminated fraction, on a date.",
                {"date": STRING},
                MOON_CODE,
                {"date": "2024-03-25"},
            ),
            lambda r: (
                f"On {r['date']} the moon is {r['age_days']} days old, {r['illuminated']} lit (source: moon_age)."
            ),
            usage="29.530588853",
        ),
    ),
    Task(
        "evolve, enum-default parameter",
        T4,
        Evolve(
            "python format seconds as hours minutes",
            "https://docs.example/divmod",
            "h, rest = divmod(5000, 3600)\nprint(h, rest // 60, rest % 60)\n",
            _create(
                "format_duration",
                "Write a number of seconds as hours, minutes and seconds, in full words or short form.",
                {"seconds": {"type": "integer"}, "style": {"type": "string", "enum": ["full", "short"]}},
                DURATION_CODE,
                {"seconds": 5000, "style": "full"},
            ),
            lambda r: f"{r['seconds']} seconds is {r['text']} (source: format_duration).",
            enum_param="style",
        ),
    ),
    Task(
        "no offline source, diagnosis-only run",  # #18: the nudge after an honest failure
        T5,
        Impossible(
            "bitcoin price api without key",
            PRICE_CODE,
            "I could not get a real bitcoin price: the price service could not be reached from the "
            "sandbox, so I will not guess a number.",
        ),
    ),
    Task(
        "a caller's bad input, three times",  # #18: quarantine needs the tool's own tests to fail
        T11,
        Misuse(
            "days_between",
            {"start": "yesterday", "end": "2020-03-01"},
            "days_between needs an ISO date for the start; 'yesterday' is not one, so I cannot count the days.",
        ),
    ),
    Task(
        "reuse, composed (after the bad inputs)",
        T6,
        Reuse(
            (
                ("days_between", _days_args(T6), "days between two dates"),
                ("format_duration", {"seconds": 7384, "style": "full"}, "seconds as hours and minutes"),
            ),
            lambda rs: (
                f"{rs[0]['days']} days; 7384 seconds is {rs[1]['text']} (sources: days_between, format_duration)."
            ),
        ),
    ),
    Task(
        "reuse, paraphrase",
        T7,
        Reuse(
            (("format_duration", {"seconds": 86399, "style": "full"}, "seconds as hours and minutes"),),
            lambda rs: f"86399 seconds is {rs[0]['text']} (source: format_duration).",
        ),
    ),
    Task(
        "evolve, dates in other words, near-miss tests",  # #18: create_tool's note, test formats
        T8,
        Evolve(
            "python weekday of a date",
            "https://docs.example/weekday",
            "from datetime import date\nprint(date(2026, 1, 15).strftime('%A'))\n",
            {
                **_create(
                    "weekday_of",
                    "The weekday of an ISO date.",
                    {"date_iso": STRING},
                    WEEKDAY_CODE,
                    {"date_iso": "2026-01-15"},
                ),
                "tests": [
                    {
                        "input": {"date_iso": "2024-02-29"},
                        "expected": {"date": "2024-02-29", "weekday": "Thursday", "iso_weekday": 4},
                    }
                ],
            },
            lambda r: f"{r['date']} 是 {r['weekday']}（星期{r['iso_weekday']}，来源：weekday_of）。",
        ),
    ),
    Task(
        "evolve, an option flagged on syntax",  # #18: generality judged on the tests
        T9,
        Evolve(
            "python change text case",
            "https://docs.example/str-methods",
            "print('the old man and the sea'.title())\n",
            {
                **_create(
                    "change_case",
                    "Change the case of a text: title, upper or lower.",
                    {"text": STRING, "style": {"type": "string"}},
                    CASE_CODE,
                    {"text": "the old man and the sea", "style": "title"},
                ),
                "tests": [{"args": {"text": "a b", "style": "upper"}, "expect": {"text": "A B", "style": "upper"}}],
            },
            lambda r: f"{r['text']} (source: change_case).",
        ),
    ),
    Task(
        "reuse, a derived number",  # #18: grounding allows computed numbers
        T10,
        Reuse(
            (("days_between", _days_args(T10), "days between two dates"),),
            lambda rs: (
                f"{rs[0]['days']} days in all, so each of the 3 parts is {rs[0]['days'] / 3:.2f} days "
                "(source: days_between)."
            ),
        ),
    ),
)
