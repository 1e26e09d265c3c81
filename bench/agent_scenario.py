"""A day of use in one library: seven tasks, each a failure mode issue #10 measured.

A well-behaved scripted model works through the tasks below, in order, on one growing
library, driving the real agent, guards, gate, sandbox and library over a real local
OpenAI-compatible endpoint. The web is a local stand-in (canned search results and
docs), so the run needs no network. The script reads the transcript as a model would:
it calls a stored tool that is offered to it, searches the library in English when the
tool it needs is not offered, retries a refused call the way the refusal says, and
answers from the tool outputs it has.

The same tasks run twice in one run: with the #10 behaviour (relevance floor, the small
library's catalogue, verification that needs real output, the AST generality check,
create_tool's "answer from the test run"), and with each switched off: the floor at 0,
no catalogue, the old rules for verification and generality, and create_tool's old note.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from toolsmith.agent.context import WebAccess
from toolsmith.agent.loop import Agent
from toolsmith.agent.metatools import code_interpreter, create_tool
from toolsmith.agent.trajectory import TaskResult
from toolsmith.config import Settings
from toolsmith.config.providers import ProviderConfig
from toolsmith.gate import core as gate_module
from toolsmith.gate.verification import Verdict
from toolsmith.library import ToolLibrary
from toolsmith.model import ModelReply
from toolsmith.model.client import ChatModel
from toolsmith.sandbox import Sandbox
from toolsmith.testing import ScriptedModel, ScriptedServer, final, last_tool_result, reply, tool_call

Messages = list[dict[str, Any]]

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
try:
    print(urllib.request.urlopen("https://api.exchange.invalid/v1/btc-usd", timeout=5).read()[:200])
except Exception as exc:  # the model's code reports the failure and exits 0
    print("Error:", exc)
"""
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
class Task:
    kind: str  # what it shows
    text: str
    plan: Evolve | Reuse | Impossible


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
        "evolve, out-of-scope pre-retrieval",
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
        "no offline source, failed-only run",
        T5,
        Impossible(
            "bitcoin price api without key",
            PRICE_CODE,
            "I could not get a real bitcoin price: the price service could not be reached from the "
            "sandbox, so I will not guess a number.",
        ),
    ),
    Task(
        "reuse, composed",
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
)


# -- the well-behaved model ------------------------------------------------------------------


def _task_text(messages: Messages) -> str:
    return str(messages[1]["content"]).split("\n\n[toolsmith]")[0]


def _results(messages: Messages) -> dict[str, list[Any]]:
    """Decoded tool results by tool name, oldest first."""
    names = {
        call["id"]: call["function"]["name"]
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
    }
    found: dict[str, list[Any]] = {}
    for m in messages:
        if m.get("role") == "tool":
            name = names.get(m.get("tool_call_id"), "?")
            found.setdefault(name, []).append(last_tool_result([m]))
    return found


def _offered(tools: Any) -> set[str]:
    return {str(t.get("function", {}).get("name")) for t in tools or ()}


def policy(messages: Messages, tools: Any) -> ModelReply:
    text = _task_text(messages)
    plan = next(t.plan for t in TASKS if t.text == text)
    done = _results(messages)
    if isinstance(plan, Evolve):
        return _evolve(plan, done)
    if isinstance(plan, Reuse):
        return _reuse(plan, done, _offered(tools))
    return _impossible(plan, done)


def _ok(results: list[Any]) -> list[Any]:
    return [r for r in results if isinstance(r, dict) and r.get("ok")]


def _evolve(plan: Evolve, done: dict[str, list[Any]]) -> ModelReply:
    if not _ok(done.get("web_search", [])):  # a refusal says: call it again and it will run
        return reply(tool_call("web_search", {"query": plan.query}))
    if not done.get("read_webpage"):
        return reply(tool_call("read_webpage", {"url": plan.url}))
    runs = done.get("code_interpreter", [])
    if not [r for r in _ok(runs) if r.get("verified") is not False]:
        return reply(tool_call("code_interpreter", {"code": plan.verify}))
    attempts = done.get("create_tool", [])
    created = _ok(attempts)
    if not created:
        if attempts and plan.enum_param and attempts[-1].get("check") == "generality":
            # what models did when the gate called an enum option hard-coded: test less
            args = {k: v for k, v in plan.create["test_args"].items() if k != plan.enum_param}
            return reply(tool_call("create_tool", {**plan.create, "test_args": args}))
        if attempts:
            return final("The tool could not be stored.")
        return reply(tool_call("create_tool", plan.create))
    if "answer from it" in str(created[-1].get("note")):
        return final(plan.answer(created[-1]["test_result"]))
    name = plan.create["name"]
    if not done.get(name):
        return reply(tool_call(name, plan.create["test_args"]))
    return final(plan.answer(done[name][-1]["result"]))


def _reuse(plan: Reuse, done: dict[str, list[Any]], offered: set[str]) -> ModelReply:
    pending = [(tool, args, query) for tool, args, query in plan.calls if not _ok(done.get(tool, []))]
    ready = [tool_call(tool, args) for tool, args, _ in pending if tool in offered]
    if ready:
        return reply(*ready)
    searched = {str(r.get("query", "")) for r in done.get("search_tools", []) if isinstance(r, dict)}
    unsearched = [tool_call("search_tools", {"query": q}) for t, _, q in pending if q not in searched]
    if unsearched:
        return reply(*unsearched)
    if pending:
        return final("No stored tool does this.")
    results = [_ok(done[tool])[-1]["result"] for tool, _, _ in plan.calls]
    return final(plan.answer(results))


def _impossible(plan: Impossible, done: dict[str, list[Any]]) -> ModelReply:
    if not _ok(done.get("web_search", [])):
        return reply(tool_call("web_search", {"query": plan.query}))
    if not done.get("code_interpreter"):
        return reply(tool_call("code_interpreter", {"code": plan.code}))
    return final(plan.answer)  # asked again (a nudge), it says the same: nothing real was fetched


def local_web() -> WebAccess:
    """Canned search results and docs: the scenario measures the loop, not the internet."""

    def search(query: str, n: Any = None) -> dict[str, Any]:
        slug = re.sub(r"\W+", "-", query.lower()).strip("-")
        hit = {"title": f"docs for {query}", "url": f"https://docs.example/{slug}", "snippet": "A key-free library."}
        return {"ok": True, "backend": "local", "results": [hit]}

    def read(url: str, **view: Any) -> dict[str, Any]:
        return {
            "ok": True,
            "url": url,
            "text": "Install: pip install nothing. Usage: see the examples.",
            "untrusted": True,
        }

    return WebAccess(search=search, read=read)


# -- the behaviour before #10, for the same run ----------------------------------------------


def _old_judge(ok: bool, stdout: str, *, limit: int = 2000) -> Verdict:
    """Before: any stdout on exit 0 verified."""
    text = stdout.strip()
    return Verdict(ok and bool(text), evidence=text[:limit], reason="it printed nothing")


def _old_generality(tree: Any, test_args: dict[str, Any], parameters: Any = None) -> Any:
    """Before: a test value anywhere in a string or number literal (docstrings aside) was baked in."""
    import ast

    from toolsmith.gate import generality

    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docstrings]
    for value in generality._test_values(test_args):
        if any(generality._matches(c, value) for c in constants):
            return value
    return None


@contextlib.contextmanager
def behaviour(new: bool) -> Iterator[None]:
    """Switch the #10 rules that are code rather than settings off for a block."""
    saved = (code_interpreter.judge, gate_module.find_hardcoded_test_values, create_tool.task_values_match)
    if not new:
        code_interpreter.judge = _old_judge  # type: ignore[assignment]
        gate_module.find_hardcoded_test_values = _old_generality
        create_tool.task_values_match = lambda task, args: False  # type: ignore[assignment]
    try:
        yield
    finally:
        code_interpreter.judge, gate_module.find_hardcoded_test_values, create_tool.task_values_match = saved


# -- running it ------------------------------------------------------------------------------


@dataclass
class Row:
    task: Task
    result: TaskResult
    first_request_chars: int


def run_scenario(new: bool) -> list[Row]:
    """Every task in order on one fresh library, with the #10 behaviour on or off."""
    with tempfile.TemporaryDirectory(prefix="toolsmith-scenario-") as tmp:
        settings = replace(Settings(home=Path(tmp)), network=False)
        if not new:
            settings = replace(settings, search_floor=0.0, catalogue_max_tools=0)
        model = ScriptedModel([policy] * 200, name="scripted")
        rows: list[Row] = []
        with behaviour(new), ScriptedServer(model) as server, ToolLibrary.open(settings) as library:
            chat = ChatModel(ProviderConfig("custom", "scripted", server.base_url, "bench", None))
            agent = Agent(model=chat, library=library, sandbox=Sandbox(settings), settings=settings, web=local_web())
            for index, task in enumerate(TASKS):
                before = len(model.requests)
                result = agent.run_task(task.text, index=index)
                first = model.requests[before] if len(model.requests) > before else ([], [])
                rows.append(Row(task, result, len(str(first[0])) + len(str(first[1]))))
        return rows
