"""A day of use in one library: eleven tasks, each a failure mode issues #10 and #18 measured.

A well-behaved scripted model works through the tasks below, in order, on one growing
library, driving the real agent, guards, gate, sandbox and library over a real local
OpenAI-compatible endpoint. The web is a local stand-in (canned search results and
docs), so the run needs no network. The script reads the transcript as a model would:
it calls a stored tool that is offered to it, searches the library in English when the
tool it needs is not offered, retries a refused call the way the refusal says, and
answers from the tool outputs it has.

The same tasks run twice in one run: with the #10 and #18 behaviour (relevance floor, the
library's catalogue and recent tools, verification that needs real output, the generality
check judged on the tool's tests, create_tool's note, near-miss test formats, reuse-first
that lets the web run, grounding of computed numbers, quarantine that asks the tool's own
tests, package pages without badge tables), and with each switched off (``OLD_RULES``).
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scenario_tasks import BADGE_README, TASKS, Evolve, Impossible, Misuse, Reuse, Task
from toolsmith.agent import guards as guards_package
from toolsmith.agent.context import WebAccess
from toolsmith.agent.guards import grounding
from toolsmith.agent.guards.reuse_first import ReuseFirst
from toolsmith.agent.loop import Agent
from toolsmith.agent.metatools import code_interpreter, create_tool
from toolsmith.agent.trajectory import TaskResult
from toolsmith.config import Settings
from toolsmith.config.providers import ProviderConfig
from toolsmith.gate import core as gate_module
from toolsmith.gate.verification import Verdict
from toolsmith.library import ToolLibrary
from toolsmith.library import testcases as tooltests
from toolsmith.model import ModelReply
from toolsmith.model.client import ChatModel
from toolsmith.sandbox import Sandbox
from toolsmith.service import toolcall
from toolsmith.testing import ScriptedModel, ScriptedServer, final, last_tool_result, reply, tool_call
from toolsmith.web import page_text

Messages = list[dict[str, Any]]

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
    if isinstance(plan, Misuse):
        return _misuse(plan, done)
    return _impossible(plan, done)


def _ok(results: list[Any]) -> list[Any]:
    return [r for r in results if isinstance(r, dict) and r.get("ok")]


def _evolve(plan: Evolve, done: dict[str, list[Any]]) -> ModelReply:
    if not _ok(done.get("web_search", [])):  # a refusal says: call it again and it will run
        return reply(tool_call("web_search", {"query": plan.query}))
    pages = done.get("read_webpage", [])
    if not pages:
        return reply(tool_call("read_webpage", {"url": plan.url}))
    if plan.usage and not any(plan.usage in str(p.get("text", "")) for p in _ok(pages)):
        return reply(tool_call("read_webpage", {"url": plan.url, "section": "Quick Start"}))
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
    note = str(created[-1].get("note"))
    # The note says the test run was this task's, or leaves it to the model, which knows its
    # test_args are the task's own; "call it now" (the note before #18) it obeys.
    if "used this task's own arguments" in note or "If those are this task's own arguments" in note:
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


def _misuse(plan: Misuse, done: dict[str, list[Any]]) -> ModelReply:
    results = done.get(plan.tool, [])
    if len(results) < 3 and not any("intervention" in r for r in results if isinstance(r, dict)):
        return reply(tool_call(plan.tool, plan.args))
    return final(plan.answer)


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
        if "moon" in url:  # a package page that opens with a long table of badges
            shaped = page_text.shape(BADGE_README, 2000, section=view.get("section"))
            return {"ok": True, "url": url, "text": shaped.text, "untrusted": True}
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
    """Before #10: a test value anywhere in a string or number literal (docstrings aside) was
    baked in; before #18, no test could clear it (every finding refuses)."""
    import ast

    from toolsmith.gate import generality

    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    constants = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docstrings]
    for name, arg in test_args.items():
        for value in generality._test_values(arg):
            hit = next((c for c in constants if generality._matches(c.value, value)), None)
            if hit is not None:
                return generality.Finding(value, name, hit.lineno, answer=True, argument=arg)
    return None


def _old_note(ctx: Any, stored: Any) -> str:
    """Before #18: "answer from test_result" only when every test value was in the task, to
    the letter; otherwise "call it now", true or not."""
    folded = " ".join(ctx.task.lower().split())
    values = [v for v in stored.spec.test_args.values() if v is not None and not isinstance(v, bool)]
    if values and all(isinstance(v, (str, int, float)) and str(v).strip().lower() in folded for v in values):
        return (
            f"{stored.ref} passed the gate and is stored. Its test run used this task's own arguments: answer from it."
        )
    return f"{stored.ref} passed the gate and is stored. Call it now with the task's arguments."


class _OldReuseFirst(ReuseFirst):
    """Before #18: after a search, the first web_search was refused while a hit was untried."""

    limit = 1  # it reminded once; asked again, the call ran

    def before_call(self, ctx: Any, call: Any) -> str | None:
        refused = super().before_call(ctx, call)
        if refused or call.name != "web_search" or ctx.library_calls:
            return refused
        untried = sorted(n for n in ctx.search_hits if n in ctx.unlocked and not ctx.called(n))
        return f"search_tools found {', '.join(untried)}: try it first." if untried else None


def _old_backed(value: float, tolerance: float, pool: list[float], recent: list[float]) -> bool:
    """Before #18: sums, differences and percentage changes of two numbers, not products or quotients."""
    if any(abs(abs(c * s) - value) < tolerance for c in pool for s in grounding._SCALES):
        return True
    return any(
        a != b and any(abs(abs(x) - value) < tolerance for x in (a - b, a + b, (a - b) / b * 100 if b else 0.0))
        for a in recent
        for b in recent
    )


OLD_RULES: tuple[tuple[Any, str, Any], ...] = (
    (code_interpreter, "judge", _old_judge),  # #10: any output verified
    (gate_module, "find_hardcoded_test_values", _old_generality),  # #10, #18: any literal, no test evidence
    (create_tool, "_stored_note", _old_note),  # #10, #18: the letter of the task, or "call it now"
    (tooltests, "read_cases", lambda raw, parameters=None: (tooltests.normalise_cases(raw), [])),  # #18
    (toolcall, "own_tests_pass", lambda runner, spec: False),  # #18: quarantine without asking the tests
    (page_text, "_markup_only", lambda line: False),  # #18: HTML badge tables read first
    (guards_package, "ReuseFirst", _OldReuseFirst),  # #18: refuse the web while a hit is untried
    (grounding, "_backed", _old_backed),  # #18: no products or quotients
)


@contextlib.contextmanager
def behaviour(new: bool) -> Iterator[None]:
    """Switch the #10 and #18 rules that are code rather than settings off for a block."""
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in OLD_RULES]
    if not new:
        for owner, name, old in OLD_RULES:
            setattr(owner, name, old)
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


# -- running it ------------------------------------------------------------------------------


@dataclass
class Row:
    task: Task
    result: TaskResult
    first_request_chars: int


def run_scenario(new: bool) -> list[Row]:
    """Every task in order on one fresh library, with the #10 and #18 behaviour on or off."""
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
