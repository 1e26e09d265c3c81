"""Tools carry their own tests: several cases, run by the gate, kept by both library
backends, carried by bundles, re-run by ``tools test``, and inherited by new versions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import DAYS_CODE, DAYS_PARAMS, VERIFY, create_days_tool, evolve_script, rig
from library_backends import BACKENDS, library_target
from runner_helpers import ScriptedRunner
from toolsmith.gate.core import Gate
from toolsmith.isolation.result import FailureKind
from toolsmith.library import Provenance, ToolLibrary, ToolSpec
from toolsmith.library import testcases as tooltests
from toolsmith.library.bundle import export_tools, import_tools
from toolsmith.service import review as rv
from toolsmith.testing import final, reply, tool_call

CASES = [
    {"args": {"start": "2021-01-01", "end": "2021-12-31"}, "expect": {"days": 364}},
    {"args": {"start": "2024-01-01", "end": "2024-03-01"}, "contains": {"days": 60}},
]


def days_spec(tests: Any = CASES, code: str = DAYS_CODE) -> ToolSpec:
    return ToolSpec(
        name="days_between",
        description="Count the days between two ISO dates.",
        parameters=DAYS_PARAMS,
        code=code,
        test_args={"start": "2020-01-01", "end": "2020-03-01"},
        tests=tooltests.normalise_cases(tests),
    )


def test_cases_are_checked_and_judged() -> None:
    assert tooltests.normalise_cases(None) == ()
    for bad, message in [
        ("x", "must be a list"),
        ([{"expect": 1}], "needs 'args'"),
        ([{"args": {}, "expected": 1}], "unknown keys"),
        ([{"args": {}, "contains": [True]}], "'contains' must be an object"),
        ([{"args": {}, "contains": 3}], "'contains' must be an object"),
    ]:
        with pytest.raises(ValueError, match=message):
            tooltests.normalise_cases(bad)
    assert tooltests.problem({"args": {}, "expect": {"v": 0.1 + 0.2}}, {"v": 0.3}) is None
    assert tooltests.problem({"args": {}, "expect": {"v": 1}}, {"v": 2}) == 'expected {"v": 1}, got {"v": 2}'
    assert tooltests.problem({"args": {}, "contains": {"a": {"b": 1}}}, {"a": {"b": 1, "c": 2}, "d": 3}) is None
    assert "including" in (tooltests.problem({"args": {}, "contains": {"a": 1}}, {"b": 1}) or "")
    assert tooltests.problem({"args": {}, "expect": True}, 1) is not None  # a bool is not a number


NEAR_MISSES = [
    # what a model wrote, what it means, what the result says was understood
    ({"args": {"n": 1}, "expected": {"v": 2}}, {"args": {"n": 1}, "expect": {"v": 2}}, "'expected' read as 'expect'"),
    ({"input": {"n": 1}, "output": 2}, {"args": {"n": 1}, "expect": 2}, "'input' read as 'args'"),
    ({"n": 1, "expected_output": 2}, {"args": {"n": 1}, "expect": 2}, "given at the top level"),
    ({"args": {"n": 1}, "contains": "chóng"}, {"args": {"n": 1}, "contains": "chóng"}, "'contains' read as text"),
    ({"args": {"n": 1}, "contains": ["a", 3]}, {"args": {"n": 1}, "contains": ["a", 3]}, "'contains' read as text"),
    ({"description": "one", "args": {"n": 1}}, {"args": {"n": 1}}, "'description' is a label"),
]


@pytest.mark.parametrize(("sent", "meant", "said"), NEAR_MISSES)
def test_near_miss_test_formats_are_read_as_meant_and_said_so(
    sent: dict[str, Any], meant: dict[str, Any], said: str
) -> None:
    cases, understood = tooltests.read_cases([sent], {"properties": {"n": {"type": "integer"}}})
    assert cases == (meant,)
    assert any(said in line for line in understood), understood


def test_a_case_whose_args_do_not_fit_the_parameters_is_left_out_and_said_so() -> None:
    """A real model wrote a negative test with a value the schema's enum does not allow; the
    tool is never run with it (the call is refused as bad arguments first), so it tests nothing."""
    schema = {
        "properties": {"year": {"type": "integer"}, "method": {"type": "string", "enum": ["western", "orthodox"]}}
    }
    sent = [
        {"args": {"year": 2031, "method": "western"}},
        {"args": {"year": 2031, "method": "lunar"}, "expect": {"error": "x"}},
    ]
    cases, understood = tooltests.read_cases(sent, schema)
    assert cases == ({"args": {"year": 2031, "method": "western"}},)
    assert any("test case 2 left out" in line and "must be one of" in line for line in understood)


def test_canonical_cases_read_without_a_word() -> None:
    assert tooltests.read_cases([{"args": {"n": 1}, "expect": 2}]) == (({"args": {"n": 1}, "expect": 2},), [])


def test_contains_as_text_numbers_or_a_list_is_judged_on_the_result() -> None:
    result = {"pinyin": "chóng qìng", "count": 2, "items": [{"v": 1.5}]}
    assert tooltests.problem({"args": {}, "contains": "chóng"}, result) is None
    assert tooltests.problem({"args": {}, "contains": ["qìng", 1.5, {"count": 2}]}, result) is None
    assert tooltests.problem({"args": {}, "contains": "zhòng"}, result) is not None
    assert tooltests.problem({"args": {}, "contains": [7]}, result) is not None
    # an object's keys are found where the result nests them (a real model's moon tool)
    events = {"events": [{"phase": "full", "date": "2026-09-26"}], "count": 1}
    assert tooltests.problem({"args": {}, "contains": {"date": "2026-09-26"}}, events) is None
    assert tooltests.problem({"args": {}, "contains": {"date": "2026-09-27"}}, events) is not None
    assert tooltests.problem({"args": {}, "contains": {"phase": "full", "count": 1}}, events) is not None  # one place


def test_create_tool_reads_a_near_miss_and_says_what_it_understood(tmp_path: Path) -> None:
    tests = [{"args": {"start": "2021-01-01", "end": "2021-12-31"}, "expected": {"days": 364}}]
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": VERIFY})), reply(create_days_tool(tests=tests)), final("60")
        )
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        created = next(e.message for e in r.of_type("tool_result") if e.name == "create_tool")
        stored = r.library.get("days_between")
    assert created["ok"] and "'expected' read as 'expect'" in created["note"]
    assert stored.spec.tests == ({"args": {"start": "2021-01-01", "end": "2021-12-31"}, "expect": {"days": 364}},)


@pytest.fixture(params=BACKENDS)
def lib(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ToolLibrary]:
    with library_target(request.param, tmp_path) as url, ToolLibrary(url) as library:
        yield library


def test_both_backends_keep_the_cases_and_old_hashes_stay(lib: ToolLibrary) -> None:
    stored = lib.add(days_spec(), provenance=Provenance(), gate={})
    again = lib.get("days_between", stored.version)
    assert list(again.spec.tests) == CASES and again.to_dict()["tests"] == CASES
    assert "tests" not in days_spec(tests=None).canonical()  # a tool without cases hashes as before
    assert days_spec().content_hash() != days_spec(tests=None).content_hash()


class Passed:
    ok, reason, parameters = True, None, None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": True}


def test_bundles_carry_the_cases(tmp_path: Path) -> None:
    with ToolLibrary(tmp_path / "a.db") as source, ToolLibrary(tmp_path / "b.db") as target:
        source.add(days_spec(), provenance=Provenance(), gate={})
        export_tools(source, tmp_path / "bundle")
        report = import_tools(target, tmp_path / "bundle", validate=lambda s: Passed(), actor="user:t")
        assert report.imported and list(target.get("days_between").spec.tests) == CASES


def test_the_gate_runs_every_case(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        gate = Gate(runner=r.sandbox)
        report = gate.check(days_spec())
        assert report.ok and [c.name for c in report.checks][-2:] == ["test_run", "tests"]
        wrong = gate.check(days_spec(tests=[{"args": CASES[0]["args"], "expect": {"days": 365}}]))
        assert wrong.failed == "tests" and 'expected {"days": 365}, got {"days": 364}' in (wrong.reason or "")
        misfit = gate.check(days_spec(tests=[{"args": {"start": "2021-01-01"}}]))
        assert misfit.failed == "tests" and "do not fit" in (misfit.reason or "")


def test_tools_test_reruns_the_cases(tmp_path: Path) -> None:
    with ToolLibrary(tmp_path / "lib.db") as library:
        tool = library.add(days_spec(), provenance=Provenance(), gate={})
        good = rv.health_check(
            tool, library=library, runner=ScriptedRunner.returning({"days": 60}, {"days": 364}, {"days": 60}), actor="t"
        )
        assert good.ok
        bad = rv.health_check(
            tool, library=library, runner=ScriptedRunner.returning({"days": 60}, {"days": 999}), actor="t"
        )
        assert not bad.ok and bad.error_type is FailureKind.WRONG_VALUE
        assert bad.error == 'test case 1: expected {"days": 364}, got {"days": 999}'


BROKEN_V2 = DAYS_CODE.replace(".days}", ".days + 1}")


def test_a_new_version_must_pass_its_parents_cases_unless_the_model_says_why(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": VERIFY})),
            reply(create_days_tool(tests=CASES)),
            final("stored"),
        )
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert list(r.library.get("days_between").spec.tests) == CASES
        new_args = {"test_args": {"start": "2022-01-01", "end": "2022-01-31"}}
        r.model.add(
            reply(tool_call("search_tools", {"query": "days between dates"})),
            reply(tool_call("code_interpreter", {"code": VERIFY})),
            reply(create_days_tool(code=BROKEN_V2, **new_args)),  # "a tool of that name exists"
            reply(create_days_tool(code=BROKEN_V2, **new_args)),
            reply(create_days_tool(code=BROKEN_V2, parent_tests_skip_reason="counts both ends now", **new_args)),
            final("stored v2"),
        )
        r.agent(pre_retrieval=False).run_task("days between 2022-01-01 and 2022-01-31, counting both ends", index=1)
        created = [e.message for e in r.of_type("tool_result") if e.name == "create_tool" and e.task == 1]
        assert created[0]["similar"] == "days_between@1"
        assert created[1]["check"] == "tests" and "parent_tests_skip_reason" in created[1]["error"]
        assert "expected" in created[1]["error"] and created[2]["ok"] is True
        v2 = r.library.get("days_between")
        assert v2.version == 2 and v2.gate["parent_tests_skipped"] == "counts both ends now"
        assert v2.spec.tests == ()  # the old cases no longer describe it


def test_a_new_version_that_passes_inherits_the_cases(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        clearer = DAYS_CODE.replace("return {", "# end minus start\n    return {")
        r.model.add(
            reply(tool_call("search_tools", {"query": "days between dates"})),
            reply(tool_call("code_interpreter", {"code": VERIFY})),
            reply(create_days_tool(code=clearer, test_args={"start": "2023-01-01", "end": "2023-02-01"})),
            reply(create_days_tool(code=clearer, test_args={"start": "2023-01-01", "end": "2023-02-01"})),
            final("stored v2"),
        )
        r.agent(pre_retrieval=False).run_task("days between 2023-01-01 and 2023-02-01", index=1)
        v2 = r.library.get("days_between")
        assert v2.version == 2 and v2.spec.tests == ({"args": {"start": "2020-01-01", "end": "2020-03-01"}},)


def test_copying_a_library_to_another_backend_keeps_the_cases(lib: ToolLibrary, tmp_path: Path) -> None:
    from toolsmith.library.transfer import copy_library

    with ToolLibrary(tmp_path / "source.db") as source:
        source.add(days_spec(), provenance=Provenance(), gate={})
        copy_library(source, lib)
    assert list(lib.get("days_between").spec.tests) == CASES
