"""Quarantine and repair, end to end with the scripted model.

A stored tool depends on a (local) rates service. The service changes what it returns, so
the tool starts failing; after three consecutive failures it is quarantined and vanishes
from search. In the same task the agent verifies a fix and stores a new version of the
same tool, whose parent is the broken one; search serves the new version from then on.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import make_settings
from helpers_http import LocalServer, Reply, Request
from toolsmith.agent.loop import Agent
from toolsmith.agent.offline import no_web
from toolsmith.library import Status, ToolLibrary
from toolsmith.sandbox import Sandbox
from toolsmith.testing import ScriptedModel, final, last_tool_result, reply, tool_call

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them

V1 = """\
import json
import urllib.request

SERVICE = "{url}"


def run(base: str, quote: str) -> dict:
    with urllib.request.urlopen(f"{{SERVICE}}?base={{base}}", timeout=5) as response:
        data = json.load(response)
    return {{"base": base, "quote": quote, "rate": data["rates"][quote]}}
"""
# The service now nests each rate in an object: v2 reads the new shape.
V2 = V1.replace('data["rates"][quote]', 'data["data"][quote]["rate"]')
PARAMS = {
    "type": "object",
    "properties": {"base": {"type": "string"}, "quote": {"type": "string"}},
    "required": ["base", "quote"],
}


def create(code: str) -> Any:
    return tool_call(
        "create_tool",
        {
            "name": "get_exchange_rate",
            "description": "Exchange rate between two currencies from the rates service.",
            "parameters": PARAMS,
            "code": code,
            "test_args": {"base": "USD", "quote": "JPY"},
            "keywords": ["currency", "exchange rate", "汇率"],
        },
    )


def answer(messages: list[dict[str, Any]], tools: Any = None) -> Any:
    result = last_tool_result(messages)
    return final(
        f"1 {result['result']['base']} = {result['result']['rate']} {result['result']['quote']} "
        f"(source: {result['source']})"
    )


def test_broken_dependency_quarantines_then_repair_makes_a_new_version(tmp_path: Path) -> None:
    shape = {"nested": False}

    def rates(request: Request) -> Reply:
        values = {"EUR": 0.92, "JPY": 151.3}
        if shape["nested"]:
            return Reply(body={"base": request.query.get("base"), "data": {k: {"rate": v} for k, v in values.items()}})
        return Reply(body={"base": request.query.get("base"), "rates": values})

    settings = replace(make_settings(tmp_path / "home"), network=True)
    with LocalServer() as service, ToolLibrary.open(settings) as library:
        service.route("/rates", handler=rates)
        url = service.url("/rates")
        v1, v2 = V1.format(url=url), V2.format(url=url)
        check_v1 = f"import urllib.request, json\nprint(json.load(urllib.request.urlopen('{url}?base=USD'))['rates'])"
        check_v2 = f"import urllib.request, json\nprint(json.load(urllib.request.urlopen('{url}?base=USD'))['data'])"
        call = tool_call("get_exchange_rate", {"base": "USD", "quote": "EUR"})
        model = ScriptedModel(
            [
                # task 1: evolve the tool against the service as it is
                reply(tool_call("code_interpreter", {"code": check_v1})),
                reply(create(v1)),
                reply(call),
                answer,
                # task 2: the service changed; the reused tool fails three times and is quarantined,
                # then the agent verifies the new shape and repairs the same tool
                reply(call),
                reply(call),
                reply(call),
                reply(tool_call("code_interpreter", {"code": check_v2})),
                reply(create(v2)),
                reply(call),
                answer,
                # task 3: search serves the repaired version
                reply(call),
                answer,
            ]
        )
        agent = Agent(model=model, library=library, sandbox=Sandbox(settings), settings=settings, web=no_web())

        first = agent.run_task("How many EUR is 1 USD?")
        assert first.answer.startswith("1 USD = 0.92 EUR") and first.created == ["get_exchange_rate@1"]

        shape["nested"] = True
        second = agent.run_task("What is the USD to EUR exchange rate?", index=1)
        broken = library.get("get_exchange_rate", 1)
        assert broken.status == Status.QUARANTINED
        assert broken.status_reason and "3 consecutive failures" in broken.status_reason
        assert broken.stats.consecutive_failures == 3 and broken.stats.failures == 3
        assert second.created == ["get_exchange_rate@2"] and second.answer.startswith("1 USD = 0.92 EUR")
        repaired = library.get("get_exchange_rate", 2)
        assert repaired.status == Status.ACTIVE and repaired.parent_version == 1
        assert [v.version for v in library.history("get_exchange_rate")] == [1, 2]
        assert [h.tool.version for h in library.search("exchange rate currency")] == [2]
        moves = [(e.version, e.details.get("to"), e.actor) for e in library.audit_log("get_exchange_rate")]
        assert (1, "quarantined", f"agent:{agent.session_id}") in moves

        third = agent.run_task("USD to EUR exchange rate today?", index=2)
        assert third.reuse_verdict()["reused"] and third.answer.startswith("1 USD = 0.92 EUR")
        assert [a.version for a in third.actions if a.library] == [2]
        model.assert_complete()


@pytest.mark.network  # the sync asks the index about the pinned package
def test_a_machine_failure_does_not_count_against_the_tool(tmp_path: Path) -> None:
    from toolsmith.library import Provenance, Requirement, ToolSpec
    from toolsmith.service.toolcall import call_stored_tool

    settings = make_settings(tmp_path / "home")
    code = "def run(x: str) -> dict:\n    return {'echo': x.upper()}\n"
    spec = ToolSpec(
        name="shout",
        description="Upper-case a text.",
        code=code,
        parameters={"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
        test_args={"x": "hi"},
        requirements=(Requirement("definitely-not-a-real-package-zzq", "1.0", None),),
    )
    with ToolLibrary.open(settings) as library:
        tool = library.add(spec, provenance=Provenance(), gate={"ok": True})
        for _ in range(settings.quarantine_after + 1):
            call = call_stored_tool(
                tool,
                {"x": "a"},
                library=library,
                runner=Sandbox(settings),
                actor="test",
                quarantine_after=settings.quarantine_after,
            )
            assert not call.outcome.ok and call.outcome.error_type == "install"
        after = library.get("shout")
        assert after.status == Status.ACTIVE and after.stats.calls == 0 and after.stats.failures == 0
