"""Do a new tool's test arguments restate the task's own values?

When they do, the gate's test run already answered the task, and the model can answer
from ``test_result`` without calling the tool again. The task writes its values its own
way: "1 April 2026", "2026年4月1日" or "1. April 2026" for ``2026-04-01``; "26,2" for
``26.2``; "9:30 am" for ``09:30``. A value counts as the task's when the task states it in
any of those forms. Only that is ever claimed: a value the task does not state (a time
zone the task names as a city, a mode the task implies) leaves the question open, and the
note then lets the model judge, so it is never told something false.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import date
from typing import Any

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        "january jan enero janvier januar gennaio",
        "february feb febrero février fevrier februar febbraio",
        "march mar marzo mars märz maerz",
        "april apr abril avril",
        "may mayo mai maggio",
        "june jun junio juin juni giugno",
        "july jul julio juillet juli luglio",
        "august aug agosto août aout",
        "september sep sept septiembre septembre settembre",
        "october oct octubre octobre oktober ottobre",
        "november nov noviembre novembre",
        "december dec diciembre décembre decembre dezember dicembre",
    ),
    1,
):
    for _name in _names.split():
        _MONTHS[_name] = _number

_MONTH = "(" + "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|er|º|\.)?"
_YEAR = r"(\d{4})"
# Ranges share the month and year: "1–30 April 2026", "from 1 to 30 April 2026".
_DAY_RANGE = re.compile(rf"\b{_DAY}\s*(?:-|–|—|to|bis|al|au|a)\s*{_DAY}\s+(?:de\s+)?{_MONTH}\s+(?:de\s+)?{_YEAR}", re.I)
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:de\s+)?{_MONTH},?\s+(?:de\s+)?{_YEAR}", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}", re.I)
_ISO = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
_DOTTED = re.compile(r"\b(\d{1,2})[./](\d{1,2})[./](\d{4})\b")  # day first, as most of the world writes it
_CJK = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_CJK_RANGE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]?\s*(?:到|至|-|–|~)\s*(\d{1,2})\s*[日号]")

_ZONE = re.compile(r"^[A-Z][A-Za-z]+/(?:[A-Za-z_]+/)?([A-Za-z_]+)$")  # an IANA zone: Area/City
_ISO_VALUE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::\d{2})?)?$")
_CLOCK = re.compile(r"\b(\d{1,2})(?::|\.|h\s?)(\d{2})\s*(am|pm|a\.m\.|p\.m\.)?", re.I)
_HOUR = re.compile(r"\b(\d{1,2})\s*(am|pm|a\.m\.|p\.m\.|uhr|h\b)", re.I)
_CJK_HOUR = re.compile(r"(上午|下午|晚上|早上|中午)?\s*(\d{1,2})\s*[点點时](?:\s*(\d{1,2})\s*分|半)?")
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)*")
_FULLWIDTH = str.maketrans("０１２３４５６７８９，．", "0123456789,.")


def task_values_match(task: str, test_args: dict[str, Any]) -> bool:
    """Whether the task states every test argument's value (see the module docstring)."""
    values = [v for v in test_args.values() if v is not None and not isinstance(v, bool)]
    if not values:
        return False
    text = _arabic(" ".join(task.translate(_FULLWIDTH).split()))
    facts = _Facts(text)
    return all(facts.states(value) for value in values)


class _Facts:
    """The values a task text states, read once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.folded = text.casefold()
        self.dates = set(_dates(text))
        self.times = set(_times(text))
        self.numbers = set(_numbers(text))

    def states(self, value: Any) -> bool:
        if isinstance(value, (int, float)):
            return float(value) in self.numbers
        if isinstance(value, list):
            return bool(value) and all(self.states(item) for item in value if item is not None)
        if not isinstance(value, str) or not value.strip():
            return False
        if _stated(value.strip().casefold(), self.folded):
            return True
        zone = _ZONE.match(value.strip())
        if zone and _stated(zone.group(1).replace("_", " ").casefold(), self.folded):
            return True  # "Europe/Berlin" is the zone the task names as "Berlin"
        iso = _ISO_VALUE.match(value.strip())
        if iso:
            day = _date(iso.group(1), iso.group(2), iso.group(3))
            at = (int(iso.group(4)), int(iso.group(5))) if iso.group(4) else None
            return day in self.dates and (at is None or at in self.times)
        clock = re.fullmatch(r"(\d{1,2}):(\d{2})(?::\d{2})?", value.strip())
        if clock:
            return (int(clock.group(1)), int(clock.group(2))) in self.times
        number = _as_number(value.strip())
        return number is not None and number in self.numbers


_CJK_DIGITS = dict(zip("〇零一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000}
# A run of numerals that is a number: two or more of them, or one before a unit of time or count.
_CJK_NUMBER = re.compile(
    r"[〇零一二两三四五六七八九十百千]{2,}|[〇零一二两三四五六七八九十](?=[年月日号點点时時分秒个天周])"
)


_LUNAR_NAMES = (("正月", "一月"), ("冬月", "十一月"), ("腊月", "十二月"), ("臘月", "十二月"))


def _arabic(text: str) -> str:
    """Chinese numerals as digits: 八月十五 is 8月15, 二〇三〇年 is 2030年, 二十三 is 23, and
    the lunar calendar's names for months and days, 正月初一, are 1月1."""
    for name, plain in _LUNAR_NAMES:
        text = text.replace(name, plain)
    text = re.sub(r"初([一二三四五六七八九十])(?![十])", r"\1日", text)
    return _CJK_NUMBER.sub(lambda m: str(_cjk_value(m.group())), text)


def _cjk_value(run: str) -> int:
    if not any(ch in _CJK_UNITS for ch in run):
        return int("".join(str(_CJK_DIGITS[ch]) for ch in run))  # read digit by digit: 二〇三〇
    total, digit = 0, 0
    for ch in run:
        if ch in _CJK_UNITS:
            total += (digit or 1) * _CJK_UNITS[ch]  # 十五: a bare 十 is ten
            digit = 0
        else:
            digit = _CJK_DIGITS[ch]
    return total + digit


def _stated(literal: str, text: str) -> bool:
    """``literal`` in ``text`` as a whole word where it starts or ends with a Latin letter or
    digit ("DE" is not in "included"); CJK text has no word boundaries to ask for."""
    head = r"(?<![a-z0-9])" if literal[:1].isascii() and literal[:1].isalnum() else ""
    tail = r"(?![a-z0-9])" if literal[-1:].isascii() and literal[-1:].isalnum() else ""
    return re.search(head + re.escape(literal) + tail, text) is not None


def _date(year: str, month: str | int, day: str) -> date | None:
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None


def _month(name: str) -> int:
    return _MONTHS.get(name.casefold().rstrip("."), 0)


def _dates(text: str) -> Iterator[date]:
    found: list[date | None] = []
    for m in _DAY_RANGE.finditer(text):
        month = _month(m.group(3))
        found += [_date(m.group(4), month, m.group(1)), _date(m.group(4), month, m.group(2))]
    found += [_date(m.group(3), _month(m.group(2)), m.group(1)) for m in _DAY_MONTH_YEAR.finditer(text)]
    found += [_date(m.group(3), _month(m.group(1)), m.group(2)) for m in _MONTH_DAY_YEAR.finditer(text)]
    found += [_date(m.group(1), m.group(2), m.group(3)) for m in _ISO.finditer(text)]
    found += [_date(m.group(3), m.group(2), m.group(1)) for m in _DOTTED.finditer(text)]
    found += [_date(m.group(1), m.group(2), m.group(3)) for m in _CJK.finditer(text)]
    for m in _CJK_RANGE.finditer(text):
        found += [_date(m.group(1), m.group(2), m.group(3)), _date(m.group(1), m.group(2), m.group(4))]
    yield from (d for d in found if d is not None)


def _times(text: str) -> Iterator[tuple[int, int]]:
    for m in _CLOCK.finditer(text):
        yield _clock(int(m.group(1)), int(m.group(2)), m.group(3))
    for m in _HOUR.finditer(text):
        yield _clock(int(m.group(1)), 0, m.group(2))
    for m in _CJK_HOUR.finditer(text):
        hour = int(m.group(2))
        if m.group(1) in ("下午", "晚上") and hour < 12:
            hour += 12
        yield hour, 30 if m.group(0).endswith("半") else int(m.group(3) or 0)


def _clock(hour: int, minute: int, suffix: str | None) -> tuple[int, int]:
    marker = (suffix or "").casefold().replace(".", "")
    if marker == "pm" and hour < 12:
        hour += 12
    elif marker == "am" and hour == 12:
        hour = 0
    return hour, minute


def _numbers(text: str) -> Iterable[float]:
    for match in _NUMBER.finditer(text):
        yield from _readings(match.group())


def _readings(raw: str) -> Iterator[float]:
    """Every value a written number can mean: "1,234" is a thousand or one point two, "26,2"
    is twenty-six point two, "1.234,5" is a thousand and a bit."""
    separators = re.findall(r"[,.]", raw)
    if not separators:
        yield float(raw)
        return
    groups = re.split(r"[,.]", raw)
    if len(set(separators)) == 1 and all(len(g) == 3 for g in groups[1:]):
        yield float("".join(groups))  # thousands
    if len(separators) == 1:
        yield float(raw.replace(",", "."))
    elif len(set(separators)) == 2 and raw.count(separators[-1]) == 1:
        decimal = separators[-1]
        grouping = "," if decimal == "." else "."
        yield float(raw.replace(grouping, "").replace(decimal, "."))


def _as_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
