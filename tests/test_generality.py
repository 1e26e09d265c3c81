"""The AST generality rules: a test value used as data is baked in; one that only names
an option, a key, a default or an example in a message is not (issue #10, both ways)."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from toolsmith.gate.generality import Finding, find_hardcoded_test_values

ENUM_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "style": {"type": "string", "enum": ["tone", "plain"]}},
}


def finding(code: str, test_args: dict[str, Any], parameters: dict[str, Any] | None = None) -> Finding | None:
    return find_hardcoded_test_values(ast.parse(code), test_args, parameters)


def baked(code: str, test_args: dict[str, Any], parameters: dict[str, Any] | None = None) -> Any:
    found = finding(code, test_args, parameters)
    return None if found is None else found.value


LEGITIMATE = {
    "enum option that is also the default": (
        "def run(text, style='tone'):\n"
        "    if style == 'tone':\n"
        "        return {'pinyin': text.upper()}\n"
        "    return {'pinyin': text}\n",
        {"text": "ni hao", "style": "tone"},
        ENUM_SCHEMA,
    ),
    "one of several compared options (no enum in the schema)": (
        "def run(n, mode):\n"
        "    if mode == 'full':\n"
        "        return {'v': n * 2}\n"
        "    elif mode == 'short':\n"
        "        return {'v': n}\n"
        "    return {'v': -n}\n",
        {"n": 3, "mode": "full"},
        None,
    ),
    "dict key": (
        "FORMATS = {'full': '%A %d %B %Y', 'short': '%d/%m'}\n\n"
        "def run(day, form):\n"
        "    import datetime\n"
        "    return {'text': datetime.date.fromisoformat(day).strftime(FORMATS[form])}\n",
        {"day": "2024-02-29", "form": "full"},
        None,
    ),
    "subscript key": (
        "def run(day, form):\n    parts = {'a': day}\n    return {'d': parts['full'] if form else day}\n",
        {"day": "2024-02-29", "form": "full"},
        None,
    ),
    "membership check in a literal": (
        "def run(unit, value):\n"
        "    if unit not in ('km', 'mi'):\n"
        "        raise ValueError('unit must be km or mi')\n"
        "    return {'m': value * (1000 if unit == 'km' else 1609.344)}\n",
        {"unit": "km", "value": 3},
        None,
    ),
    "membership check in a named option tuple": (
        "UNITS = ('km', 'mi')\n\ndef run(unit, value):\n"
        "    if unit not in UNITS:\n        return {'error': 'bad unit'}\n    return {'v': value, 'u': unit}\n",
        {"unit": "km", "value": 3},
        None,
    ),
    "conversion-factor table (entries are computed with, not returned)": (
        "FACTORS = {'km': 1000.0, 'mi': 1609.344}\n\ndef run(unit, value):\n"
        "    return {'metres': value * FACTORS[unit]}\n",
        {"unit": "mi", "value": 3},
        None,
    ),
    "parameter default": (
        "def run(day='2028-07-01'):\n    import datetime\n    return {'w': datetime.date.fromisoformat(day).weekday()}\n",
        {"day": "2028-07-01"},
        None,
    ),
    "example inside an error message": (
        "import datetime\n\ndef run(day):\n"
        "    try:\n        d = datetime.date.fromisoformat(day)\n"
        "    except ValueError:\n        raise ValueError(f'day must look like 2028-07-01, got {day!r}')\n"
        "    return {'w': d.weekday()}\n",
        {"day": "2028-07-01"},
        None,
    ),
    "example in an error result": (
        "def run(day):\n    if len(day) != 10:\n        return {'error': 'use ISO dates such as 2028-07-01'}\n"
        "    return {'day': day}\n",
        {"day": "2028-07-01"},
        None,
    ),
    "docstring and Literal annotation": (
        "from typing import Literal\n\ndef run(ticker: str, kind: Literal['close', 'open'] = 'close'):\n"
        "    '''Quote for a ticker such as NVDA.'''\n    return {'t': ticker.upper(), 'k': kind}\n",
        {"ticker": "NVDA", "kind": "close"},
        None,
    ),
    "Enum member": (
        "import enum\n\nclass Style(enum.Enum):\n    TONE = 'tone'\n    PLAIN = 'plain'\n\n"
        "def run(text, style):\n    return {'s': Style(style).value, 't': text}\n",
        {"text": "ni hao", "style": "tone"},
        None,
    ),
}

BAKED = {
    "returned literal": ("def run(ticker):\n    return {'t': 'NVDA', 'p': ticker}\n", {"ticker": "NVDA"}, "NVDA"),
    "inside a URL": (
        "import urllib.request\n\ndef run(ticker):\n"
        "    return {'u': urllib.request.urlopen('https://q.example/NVDA').read().decode(), 't': ticker}\n",
        {"ticker": "NVDA"},
        "NVDA",
    ),
    "lone comparison special-casing the test": (
        "def run(ticker):\n    if ticker == 'NVDA':\n        return {'p': 875.5}\n    return {'p': len(ticker)}\n",
        {"ticker": "NVDA"},
        "NVDA",
    ),
    "answer table returned as is": (
        "CAPITALS = {'France': 'Paris', 'Japan': 'Tokyo'}\n\ndef run(country):\n"
        "    return {'capital': CAPITALS[country]}\n",
        {"country": "France"},
        "France",
    ),
    "answer table through a variable and .get": (
        "def run(country):\n    table = {'France': 'Paris', 'Japan': 'Tokyo'}\n"
        "    capital = table.get(country)\n    return {'capital': capital}\n",
        {"country": "France"},
        "France",
    ),
    "answer table inside an f-string": (
        "HOLIDAYS = {'2024': '2024-01-01 New Year'}\n\ndef run(year):\n    return f'First: {HOLIDAYS[year]}'\n",
        {"year": "2024"},
        "2024",
    ),
    "test number used as data": ("def run(amount):\n    return {'v': 123.45 * 2}\n", {"amount": 123.45}, 123.45),
    "default that is also passed on as data": (
        "def run(city='Paris'):\n    return {'weather': fetch('Paris')}\n\ndef fetch(c):\n    return c\n",
        {"city": "Paris"},
        "Paris",
    ),
}


@pytest.mark.parametrize("case", sorted(LEGITIMATE))
def test_a_value_that_only_names_something_is_not_hard_coded(case: str) -> None:
    code, args, schema = LEGITIMATE[case]
    assert baked(code, args, schema) is None


@pytest.mark.parametrize("case", sorted(BAKED))
def test_a_value_used_as_data_is_hard_coded(case: str) -> None:
    code, args, expected = BAKED[case]
    found = finding(code, args)
    assert found is not None and found.value == expected and found.parameter == next(iter(args))
    # a table of answers, a special case returning literal data and a value inside an address
    # are answers no test can clear; the rest is evidence the tool's tests may outweigh
    answers = {"answer table", "lone comparison", "inside a URL"}
    assert found.answer == any(case.startswith(a) for a in answers), case


def test_the_enum_rule_needs_the_schema_or_several_options() -> None:
    code = "def run(text, style='tone'):\n    return {'p': text.upper() if style == 'tone' else text}\n"
    args = {"text": "ni hao", "style": "tone"}
    assert baked(code, args, ENUM_SCHEMA) is None
    assert baked(code, args, {"type": "object", "properties": {"style": {"type": "string"}}}) == "tone"
