"""The save-time gate: every check refuses what it should, and passes what it should."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from toolsmith.config import Settings
from toolsmith.gate.core import Gate
from toolsmith.library.models import ToolSpec
from toolsmith.library.schema import normalize_parameters
from toolsmith.sandbox import Sandbox

GOOD_CODE = """\
from datetime import date


def run(start: str, end: str) -> dict:
    return {"days": (date.fromisoformat(end) - date.fromisoformat(start)).days}
"""
PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
    "required": ["start", "end"],
}
ARGS = {"start": "2020-01-01", "end": "2020-03-01"}


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Gate:
    settings = Settings(home=tmp_path_factory.mktemp("gate-home"))
    settings = replace(settings, network=False, limits=replace(settings.limits, timeout_s=5.0))
    return Gate(runner=Sandbox(settings))


def spec(**overrides: Any) -> ToolSpec:
    base: dict[str, Any] = {
        "name": "days_between",
        "description": "Days between two dates.",
        "parameters": PARAMS,
        "code": GOOD_CODE,
        "test_args": ARGS,
    }
    base.update(overrides)
    return ToolSpec(**base)


def test_a_working_tool_passes_every_check(gate: Gate) -> None:
    report = gate.check(spec())
    assert report.ok, report.reason
    assert [c.name for c in report.checks] == ["name", "syntax", "parameters", "anti_mock", "generality", "test_run"]
    assert report.result == {"days": 60}
    assert report.to_dict()["failed"] is None


@pytest.mark.parametrize(
    "name",
    [
        "1bad",
        "has space",
        "class",
        "_private",
        "web_search",
        "create_tool",
        "",
        "日期",
        "dash-name",
        "a" * 65,
        "x" * 10_000,
    ],
)
def test_bad_or_reserved_names_are_refused(gate: Gate, name: str) -> None:
    report = gate.check(spec(name=name))
    assert not report.ok and report.failed == "name"
    assert report.reason and 20 < len(report.reason) < 250  # a 10,000-character name is not echoed whole


def test_the_longest_name_model_apis_accept_passes_the_name_check(gate: Gate) -> None:
    report = gate.check(spec(name="a" * 64))
    assert report.failed != "name"


@pytest.mark.parametrize(
    ("code", "fragment"),
    [
        ("def run(:\n    pass", "does not parse"),
        ("def helper():\n    return 1\n", "no module-level function run"),
        ("class T:\n    def run(self):\n        return 1\n", "no module-level function run"),
        ("   ", "empty"),
    ],
)
def test_syntax_and_missing_run_are_refused(gate: Gate, code: str, fragment: str) -> None:
    report = gate.check(spec(code=code))
    assert report.failed == "syntax"
    assert fragment in (report.reason or "")


def test_bare_properties_map_and_missing_type_are_normalised(gate: Gate) -> None:
    bare = {"start": {"type": "string"}, "end": {"type": "string"}}
    report = gate.check(spec(parameters=bare))
    assert report.ok, report.reason
    assert report.parameters is not None
    assert report.parameters["type"] == "object" and set(report.parameters["properties"]) == {"start", "end"}
    no_type = {"properties": bare, "required": ["start"]}
    assert normalize_parameters(no_type) == {"type": "object", "properties": bare, "required": ["start"]}


def test_required_parameter_not_accepted_by_run_is_refused(gate: Gate) -> None:
    params = {
        **PARAMS,
        "properties": {**PARAMS["properties"], "tz": {"type": "string"}},
        "required": ["start", "end", "tz"],
    }
    report = gate.check(spec(parameters=params, test_args={**ARGS, "tz": "UTC"}))
    assert report.failed == "parameters" and "'tz'" in (report.reason or "")


def test_run_parameter_missing_from_schema_is_refused(gate: Gate) -> None:
    params = {"type": "object", "properties": {"start": {"type": "string"}}, "required": ["start"]}
    report = gate.check(spec(parameters=params, test_args={"start": "2020-01-01"}))
    assert report.failed == "parameters" and "'end'" in (report.reason or "")


def test_kwargs_run_accepts_any_required_parameter(gate: Gate) -> None:
    code = "from datetime import date\n\ndef run(**kw):\n    return {'days': (date.fromisoformat(kw['end']) - date.fromisoformat(kw['start'])).days}\n"
    assert gate.check(spec(code=code)).ok


@pytest.mark.parametrize(
    ("test_args", "fragment"),
    [
        ({"start": "2020-01-01"}, "missing required argument 'end'"),
        ({"start": 5, "end": "2020-03-01"}, "should be of type string"),
        ({**ARGS, "extra": 1}, "unknown argument 'extra'"),
    ],
)
def test_test_args_must_fit_the_schema(gate: Gate, test_args: dict[str, Any], fragment: str) -> None:
    report = gate.check(spec(test_args=test_args))
    assert report.failed == "parameters" and fragment in (report.reason or "")


MOCK_CODES = {
    "identifier": "def run(start, end):\n    mock_result = {'days': len(start) + len(end)}\n    return mock_result\n",
    "camel": "def run(start, end):\n    fakeDays = len(start) * len(end)\n    return {'days': fakeDays}\n",
    "dummy string": "def run(start, end):\n    return {'days': len(start), 'note': 'dummy'}\n",
    "sample data": "def run(start, end):\n    sample_data = {'d': len(start)}\n    return {'days': sample_data['d']}\n",
    "phrase": "def run(start, end):\n    '''Returns sample data for the dates.'''\n    return {'days': len(start + end)}\n",
    "chinese 模拟": "def run(start, end):\n    '''返回模拟数据'''\n    return {'days': len(start + end)}\n",
    "chinese 示例数据": "def run(start, end):\n    label = '示例数据'\n    return {'days': len(start + end), 'label': label}\n",
    "literal only": "def run(start, end):\n    return {'days': 60}\n",
    "literal number": "def run(start, end):\n    return {'start': start, 'days': 60.5}\n",
    "literal table": "def run(start, end):\n    table = {'days': 60.25}\n    return table\n",
    "faker import": "from faker import Faker\n\ndef run(start, end):\n    return {'days': Faker().pyint()}\n",
    "unittest.mock": "from unittest import mock\n\ndef run(start, end):\n    return {'days': mock.MagicMock()}\n",
}


@pytest.mark.parametrize("case", sorted(MOCK_CODES))
def test_mock_and_hard_coded_data_is_refused(gate: Gate, case: str) -> None:
    report = gate.check(spec(code=MOCK_CODES[case]))
    assert report.failed == "anti_mock", (case, report.to_dict())
    assert "mock or hard-coded" in (report.reason or "")


def test_legitimate_code_with_those_letters_is_not_refused(gate: Gate) -> None:
    code = '''\
from datetime import date

MOCKINGBIRD_DOCS = "https://mockingbird.example.org/api/v1/dates"


def run(start: str, end: str) -> dict:
    """Days between two dates; see the mockingbird calendar docs for the format."""
    sample_rate = 1
    if not start:
        return {"error": "start is required"}
    days = (date.fromisoformat(end) - date.fromisoformat(start)).days * sample_rate
    return {"days": days, "docs": MOCKINGBIRD_DOCS, "exact": True, "unit": 1}
'''
    report = gate.check(spec(code=code))
    assert report.ok, report.to_dict()


def test_baked_in_test_value_is_refused_as_not_parameterised(gate: Gate) -> None:
    code = "import json\n\ndef run(ticker):\n    return json.loads('{\"t\": \"' + ticker + '\"}') if ticker != 'NVDA' else {'t': ticker}\n"
    params = {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]}
    report = gate.check(spec(name="get_ticker", code=code, parameters=params, test_args={"ticker": "NVDA"}))
    assert report.failed == "generality"
    reason = report.reason or ""
    assert "'NVDA' of parameter 'ticker'" in reason and "add a case to tests with another value of 'ticker'" in reason


def test_test_value_inside_a_url_is_refused_but_docstring_mention_is_not(gate: Gate) -> None:
    params = {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]}
    in_url = "def run(ticker):\n    url = 'https://quotes.example/NVDA/last'\n    return {'url': url, 't': ticker}\n"
    assert gate.check(spec(code=in_url, parameters=params, test_args={"ticker": "NVDA"})).failed == "generality"
    in_doc = "def run(ticker):\n    '''Quote for a ticker such as NVDA.'''\n    return {'t': ticker.upper()}\n"
    assert gate.check(spec(code=in_doc, parameters=params, test_args={"ticker": "NVDA"})).ok


@pytest.mark.parametrize(
    ("code", "fragment"),
    [
        ("def run(start, end):\n    raise RuntimeError('upstream down')\n", "RuntimeError: upstream down"),
        ("def run(start, end):\n    return {start, end}\n", "not JSON-serialisable"),
        ("import sys\n\ndef run(start, end):\n    sys.exit(3)\n", "SystemExit"),
        ("def run(start, end):\n    return None\n", "verified nothing"),
        ("def run(start, end):\n    return {}\n", "verified nothing"),
        (
            "import nonexistent_module_zz\n\ndef run(start, end):\n    return {'d': len(start)}\n",
            "importing the tool failed",
        ),
    ],
)
def test_test_run_failures_are_refused_with_the_reason(gate: Gate, code: str, fragment: str) -> None:
    report = gate.check(spec(code=code))
    assert report.failed == "test_run", report.to_dict()
    assert fragment in (report.reason or "")


@pytest.mark.slow
def test_a_hanging_tool_is_killed_and_refused(gate: Gate) -> None:
    code = "import time\n\ndef run(start, end):\n    while True:\n        time.sleep(0.1)\n"
    report = gate.check(spec(code=code))
    assert report.failed == "test_run" and "did not return" in (report.reason or "")


def test_meta_tool_names_are_one_list_the_gate_and_the_toolbox_share(gate: Gate) -> None:
    from toolsmith.agent.toolbox import META_TOOLS
    from toolsmith.calls import META_TOOL_NAMES

    assert tuple(META_TOOLS) == META_TOOL_NAMES and gate.reserved == frozenset(META_TOOL_NAMES)
    assert all(META_TOOLS[name][0]["function"]["name"] == name for name in META_TOOL_NAMES)


# -- generality judged on the tool's own tests (issue #18 §2) ----------------------------

PINYIN = """\
def run(text, style="tone"):
    key = (style or "tone").lower()
    marks = {"tone": "\\u0301", "normal": ""}
    return {"pinyin": " ".join(w + marks.get(key, "") for w in text.split()), "style": key}
"""
PINYIN_PARAMS = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "style": {"type": "string"}},
    "required": ["text"],
}


def test_a_flagged_value_the_tests_vary_with_different_results_is_a_parameter(gate: Gate) -> None:
    tests = ({"args": {"text": "ni hao", "style": "normal"}}, {"args": {"text": "xie xie", "style": "tone"}})
    report = gate.check(
        spec(code=PINYIN, parameters=PINYIN_PARAMS, test_args={"text": "ni hao", "style": "tone"}, tests=tests)
    )
    assert report.ok, report.to_dict()
    generality = next(c for c in report.checks if c.name == "generality")
    assert "'style'" in generality.message and "it is a parameter" in generality.message


def test_thin_evidence_asks_for_one_more_test_case_and_never_to_delete_a_literal(gate: Gate) -> None:
    tests = ({"args": {"text": "xie xie", "style": "tone"}},)  # varies the text, not the style
    report = gate.check(
        spec(code=PINYIN, parameters=PINYIN_PARAMS, test_args={"text": "ni hao", "style": "tone"}, tests=tests)
    )
    assert report.failed == "generality"
    reason = (report.reason or "").lower()
    assert "add a case to tests with another value of 'style'" in reason and "keep the code" in reason
    assert not any(word in reason for word in ("remove", "delete", "instead of the literal", "hard-coded in the code"))


def test_a_table_holding_the_answer_for_the_test_value_is_refused_whatever_the_tests(gate: Gate) -> None:
    code = "CAPITALS = {'France': 'Paris', 'Japan': 'Tokyo'}\n\ndef run(country):\n    return {'capital': CAPITALS[country]}\n"
    params = {"type": "object", "properties": {"country": {"type": "string"}}, "required": ["country"]}
    tests = ({"args": {"country": "Japan"}, "expect": {"capital": "Tokyo"}},)  # varied, different results
    report = gate.check(spec(code=code, parameters=params, test_args={"country": "France"}, tests=tests))
    assert report.failed == "generality" and "holds the answer for the test value 'France'" in (report.reason or "")


def test_tests_that_vary_a_value_but_get_one_result_do_not_clear_it(gate: Gate) -> None:
    code = "def run(ticker):\n    return {'t': 'NVDA'.lower(), 'n': len('NVDA')}\n"
    params = {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]}
    tests = ({"args": {"ticker": "AAPL"}},)
    report = gate.check(spec(code=code, parameters=params, test_args={"ticker": "NVDA"}, tests=tests))
    assert report.failed == "generality" and "every run returned the same result" in (report.reason or "")


def test_a_test_value_returned_for_other_inputs_too_is_baked_in(gate: Gate) -> None:
    code = "def run(ticker):\n    return {'t': 'NVDA', 'asked': ticker}\n"
    params = {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]}
    tests = ({"args": {"ticker": "AAPL"}},)  # the results differ (the echo), yet 'NVDA' comes back for AAPL
    report = gate.check(spec(code=code, parameters=params, test_args={"ticker": "NVDA"}, tests=tests))
    assert report.failed == "generality" and "for other values of 'ticker' too" in (report.reason or "")


def test_a_case_that_leaves_the_flagged_parameter_out_may_echo_its_default(gate: Gate) -> None:
    """A real model's pinyin tool: a case without ``style`` gets the default 'tone' back in
    the result, as it should; that is no test value leaking into other inputs."""
    tests = (
        {"args": {"text": "ni hao", "style": "upper"}, "expect": {"text": "NI HAO", "style": "upper"}},
        {"args": {"text": "ni hao"}},  # the default style: 'title', echoed back
    )
    code = (
        'def run(text, style="title"):\n'
        '    key = (style or "title").lower()\n'
        '    change = {"title": str.title, "upper": str.upper}[key]\n'
        '    return {"text": change(text), "style": key}\n'
    )
    params = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "style": {"type": "string"}},
        "required": ["text"],
    }
    report = gate.check(spec(code=code, parameters=params, test_args={"text": "ni hao", "style": "title"}, tests=tests))
    assert report.ok, report.to_dict()
