"""A scripted "model" for the day-of-use suite under Inspect, served by ScriptedServer.

It plays one capability for real and is honest about the rest:

* the time-zone tasks: the first one verifies zoneinfo in ``code_interpreter``, creates
  ``convert_timezone`` and calls it; every later one finds the stored tool and calls it
  (twice in the compose task). Each answer is written from the tool's own result;
* the tasks that need live data: an honest "cannot" in the task's language;
* every other task: an answer saying it was not attempted (which the checker fails).

Like a model, the script reads a task's arguments from the task itself; here from a
table keyed by task id, found by matching the task text against the suite.
"""

from __future__ import annotations

import json
from typing import Any

from toolsmith.evals.checks import SuiteTask
from toolsmith.model import ModelReply
from toolsmith.testing import final, reply, tool_call

TOOL = "convert_timezone"
TZ_CALLS: dict[str, list[dict[str, str]]] = {
    "dou-03": [{"when": "2026-03-20T09:30", "from_tz": "America/New_York", "to_tz": "Europe/Berlin"}],
    "dou-04": [{"when": "2026-11-02T17:00", "from_tz": "Europe/Berlin", "to_tz": "Asia/Shanghai"}],
    "dou-12": [
        {"when": "2026-03-30T16:00", "from_tz": "Europe/Madrid", "to_tz": "America/New_York"},
        {"when": "2026-03-30T16:00", "from_tz": "Europe/Madrid", "to_tz": "Asia/Shanghai"},
    ],
    "dou-28": [{"when": "2026-07-15T20:00", "from_tz": "Asia/Shanghai", "to_tz": "America/New_York"}],
}
CANNOT = {
    "en": "I can't get that: no live data source is reachable from here. Please check a live service.",
    "es": "No puedo consultar datos en directo desde aquí: no hay acceso a esa fuente. Consulta un servicio en vivo.",
    "zh": "抱歉，我无法获取实时数据：这里无法访问在线数据源。请在相关网站上查询。",
    "de": "Das kann ich leider nicht abrufen: Von hier aus sind keine Live-Daten erreichbar.",
    "fr": "Je ne peux pas obtenir ces données en direct d'ici.",
}
NOT_ATTEMPTED = "This scripted run does not attempt this task."

VERIFY = """\
from datetime import datetime
from zoneinfo import ZoneInfo
local = datetime.fromisoformat("{when}").replace(tzinfo=ZoneInfo("{from_tz}"))
print(local.astimezone(ZoneInfo("{to_tz}")).isoformat())
"""

TOOL_CODE = '''\
"""A wall-clock time in one IANA time zone as the wall-clock time in another (zoneinfo)."""
from datetime import datetime
from zoneinfo import ZoneInfo


def run(when: str, from_tz: str, to_tz: str) -> dict:
    local = datetime.fromisoformat(when).replace(tzinfo=ZoneInfo(from_tz))
    there = local.astimezone(ZoneInfo(to_tz))
    return {"when": when, "from_tz": from_tz, "to_tz": to_tz,
            "time": there.strftime("%H:%M"), "date": there.date().isoformat()}
'''

PARAMETERS = {
    "type": "object",
    "properties": {
        "when": {"type": "string", "description": "Local date and time, ISO format (2026-03-20T09:30)."},
        "from_tz": {"type": "string", "description": "IANA zone of that time, e.g. America/New_York."},
        "to_tz": {"type": "string", "description": "IANA zone to convert to, e.g. Europe/Berlin."},
    },
    "required": ["when", "from_tz", "to_tz"],
}


class DayScript:
    """A callable script item: ``(messages, tools) -> ModelReply`` for any day-of-use task."""

    def __init__(self, tasks: list[SuiteTask]) -> None:
        self.tasks = tasks

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        task = self._task(messages)
        if task.kind == "impossible":
            return final(CANNOT[task.checks.lang])
        if task.id not in TZ_CALLS:
            return final(NOT_ATTEMPTED)
        return self._timezone(task, messages, {str(t["function"]["name"]) for t in tools})

    def _task(self, messages: list[dict[str, Any]]) -> SuiteTask:
        first = next(str(m["content"]) for m in messages if m["role"] == "user")
        return next(t for t in self.tasks if t.input in first)  # also inside a prompt template

    def _timezone(self, task: SuiteTask, messages: list[dict[str, Any]], offered: set[str]) -> ModelReply:
        calls = TZ_CALLS[task.id]
        results = _results_of(messages, TOOL)
        if len(results) >= len(calls):
            return final(_answer(task, results[-len(calls) :]))
        if TOOL in offered:
            return reply(*(tool_call(TOOL, args) for args in calls))
        if "create_tool" not in offered:  # the control: no way to build it, and no guessing
            return final(NOT_ATTEMPTED)
        if not any('"exit_code": 0' in str(m.get("content")) for m in messages if m["role"] == "tool"):
            return reply(tool_call("code_interpreter", {"code": VERIFY.format(**calls[0])}))
        return reply(tool_call("create_tool", {
            "name": TOOL, "description": "Convert a wall-clock time from one IANA time zone to another.",
            "parameters": PARAMETERS, "code": TOOL_CODE, "test_args": calls[0],
            "keywords": ["time zone", "timezone", "convert", "clock", "时区", "几点", "hora", "Uhrzeit"],
        }))  # fmt: skip


def _results_of(messages: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The decoded results of every successful call of ``name`` in the transcript."""
    names = {c["id"]: c["function"]["name"] for m in messages for c in (m.get("tool_calls") or [])}
    found = []
    for m in messages:
        if m["role"] != "tool" or names.get(m.get("tool_call_id")) != name:
            continue
        data = json.loads(m["content"])
        if data.get("ok", True) and isinstance(data.get("result"), dict):
            found.append(data)
    return found


def _answer(task: SuiteTask, results: list[dict[str, Any]]) -> str:
    parts = [f"{r['result']['time']} ({r['result']['date']}) in {r['result']['to_tz']}" for r in results]
    source = results[0].get("source", TOOL)
    if task.checks.lang == "zh":
        return "换算结果：" + "；".join(parts) + f"。来源：{source}（Python zoneinfo）。"
    return (
        f"{results[0]['result']['when']} in {results[0]['result']['from_tz']} is "
        + " and ".join(parts)
        + (f" (source: {source}, computed with Python's zoneinfo).")
    )
