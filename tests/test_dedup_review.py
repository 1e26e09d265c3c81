"""create_tool's deduplication, and the review policy as the agent meets it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_helpers import DAYS_CODE, VERIFY, answer_from_tool, create_days_tool, evolve_script, rig
from toolsmith.library import Status
from toolsmith.testing import final, reply, tool_call

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them


def _create_results(r: Any) -> list[dict[str, Any]]:
    return [e.message for e in r.of_type("tool_result") if e.name == "create_tool"]


def test_identical_code_is_refused_outright(tmp_path: Path) -> None:
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        r.model.add(
            reply(tool_call("code_interpreter", {"code": VERIFY})),
            reply(create_days_tool(name="count_days", description="Something else entirely.")),
            reply(create_days_tool(name="count_days", description="Something else entirely.")),
            final("reusing"),
        )
        r.agent().run_task("count days from 2020-01-01 to 2020-03-01", index=1)
        refusals = _create_results(r)[-2:]
        assert all(x["duplicate"] == "days_between@1" and not x["ok"] for x in refusals)
        assert "count_days" not in r.library and len(r.library) == 1


def test_similar_tool_is_reported_once_then_the_models_choice_is_stored(tmp_path: Path) -> None:
    variant = DAYS_CODE.replace("return {", "days = 0\n    return {").replace('"days": (', '"days": days + (')
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        r.model.add(
            reply(tool_call("code_interpreter", {"code": VERIFY})),
            reply(
                create_days_tool(
                    name="days_between_dates", code=variant, description="Count the days between two ISO dates."
                )
            ),
            reply(
                create_days_tool(
                    name="days_between_dates", code=variant, description="Count the days between two ISO dates."
                )
            ),
            final("stored"),
        )
        r.agent().run_task("number of days from 2020-01-01 until 2020-03-01", index=1)
        first, second = _create_results(r)[-2:]
        assert first["ok"] is False and first["similar"] == "days_between@1" and first["similarity"] >= 0.55
        assert "Reuse it" in first["error"]
        assert second["ok"] is True and second["name"] == "days_between_dates"


def test_dedup_threshold_is_configurable(tmp_path: Path) -> None:
    variant = DAYS_CODE.replace("return {", "days = 0\n    return {").replace('"days": (', '"days": days + (')
    create = create_days_tool(name="days_between_dates", code=variant, description="Count the days between two dates.")
    outcomes = []
    for threshold in (0.55, 0.9):  # the two descriptions share 5 of 6 words: similarity 0.83
        with rig(tmp_path / str(threshold), dedup_threshold=threshold) as r:
            r.model.add(*evolve_script())
            r.agent().run_task("days between 2020-01-01 and 2020-03-01")
            r.model.add(reply(tool_call("code_interpreter", {"code": VERIFY})), reply(create), final("done"))
            r.agent().run_task("number of days from 2020-01-01 until 2020-03-01", index=1)
            outcomes.append(_create_results(r)[-1])
    assert outcomes[0]["ok"] is False and outcomes[0]["similarity"] == 0.83
    assert outcomes[1]["ok"] is True, outcomes[1]


def test_same_name_without_failure_asks_first_then_stores_a_new_version(tmp_path: Path) -> None:
    variant = DAYS_CODE.replace('return {"days"', 'return {"unit": "days", "days"')
    with rig(tmp_path) as r:
        r.model.add(*evolve_script())
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        r.model.add(
            reply(tool_call("code_interpreter", {"code": VERIFY})),
            reply(create_days_tool(code=variant)),
            reply(create_days_tool(code=variant)),
            final("stored"),
        )
        r.agent().run_task("days between 2020-01-01 and 2020-03-01 again", index=1)
        first, second = _create_results(r)[-2:]
        assert first["ok"] is False and "already exists" in first["error"]
        assert second["ok"] is True and second["version"] == 2
        assert r.library.get("days_between").version == 2 and r.library.get("days_between").parent_version == 1
        assert r.library.get("days_between", 1).status == Status.RETIRED


def test_review_required_keeps_new_tools_out_of_search_until_approved(tmp_path: Path) -> None:
    with rig(tmp_path, review="required") as r:
        r.model.add(*evolve_script())
        first = r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        # callable within the task that created it, though pending
        assert first.answer.startswith("60 days")
        tool = r.library.get("days_between")
        assert tool.status == Status.PENDING
        assert r.library.search("days between dates") == []
        # a later task does not find it, so it cannot reuse it
        r.model.add(final("No stored tool fits and I did not build one."))
        second = r.agent().run_task("days between 2021-01-01 and 2021-12-31", index=1)
        assert not second.reuse_verdict()["reused"]
        r.library.set_status("days_between", 1, Status.ACTIVE, reason="reviewed", actor="user:test")
        r.model.add(reply(tool_call("days_between", {"start": "2021-01-01", "end": "2021-12-31"})), answer_from_tool)
        third = r.agent().run_task("days between 2021-01-01 and 2021-12-31", index=2)
        assert third.reuse_verdict()["reused"] and third.answer.startswith("364 days")


def test_a_tool_embedding_a_secret_is_never_stored(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("EXAMPLE_SERVICE_API_KEY", "live-secret-value-123456")
    leaky = DAYS_CODE.replace(
        "from datetime import date", "from datetime import date\nKEY = 'live-secret-value-123456'"
    )
    with rig(tmp_path) as r:
        r.model.add(
            reply(tool_call("code_interpreter", {"code": VERIFY})), reply(create_days_tool(code=leaky)), final("no")
        )
        r.agent().run_task("days between 2020-01-01 and 2020-03-01")
        assert "contains a secret" in _create_results(r)[-1]["error"] and len(r.library) == 0
